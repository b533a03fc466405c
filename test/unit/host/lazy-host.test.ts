import { describe, expect, it } from "vitest";
import { LazyHostClient } from "../../../src/host/lazy-host.js";
import { BridgeError } from "../../../src/util/errors.js";
import { FakeHost } from "../../support/fake-host.js";

/** a fake whose early start (HostConnection.startNow) is scripted */
class StartableFake extends FakeHost {
  starts = 0;
  constructor(private readonly startResult: () => Promise<void>) {
    super();
  }
  startNow(): Promise<void> {
    this.starts++;
    return this.startResult();
  }
}

describe("LazyHostClient", () => {
  it("creates the host on first use only, forwards calls and exit listeners registered before", async () => {
    let created = 0;
    const fake = new FakeHost();
    const lazy = new LazyHostClient(async () => {
      created++;
      return fake;
    });
    const exits: number[] = [];
    const off = lazy.onExit(({ incarnation }) => exits.push(incarnation));
    expect(lazy.incarnation).toBe(0);
    await lazy.close();
    expect(created).toBe(0);
    await expect(lazy.call("agent", "initialize", { workspacePath: "/w" })).resolves.toMatchObject({ available: true });
    await lazy.call("agent", "initialize", { workspacePath: "/w" });
    expect(created).toBe(1);
    expect(lazy.incarnation).toBe(1);
    fake.crash();
    expect(exits).toEqual([1]);
    off.dispose();
    fake.crash();
    expect(exits).toEqual([1]);
    await lazy.close();
    expect(fake.closed).toBe(true);
  });

  it("prepare() loads the host client and runs the warm-up once, without any host call", async () => {
    const fake = new FakeHost();
    let warmed = 0;
    const lazy = new LazyHostClient(async () => fake, { warm: (host) => void (host === fake && warmed++) });
    await lazy.prepare();
    await lazy.prepare();
    expect(warmed).toBe(1);
    expect(fake.calls).toHaveLength(0);
    expect(lazy.diagnostics()).toMatchObject({ loaded: true });
  });

  it("a failed load in prepare() surfaces at the first use with the same error", async () => {
    const failure = new BridgeError("UNSUPPORTED_ZCODE", "no ZCode here");
    const lazy = new LazyHostClient(async () => {
      throw failure;
    });
    await expect(lazy.prepare()).resolves.toBeUndefined();
    await expect(lazy.call("agent", "initialize", { workspacePath: "/w" })).rejects.toBe(failure);
    await expect(lazy.close()).resolves.toBeUndefined();
  });

  it("startEarly(): calls wait for the early start; a failed one is the error of the uses that waited, later uses go on", async () => {
    const failure = new BridgeError("HOST_START_FAILED", "the host did not start");
    let fail!: (error: Error) => void;
    const fake = new StartableFake(() => new Promise<void>((_resolve, reject) => (fail = reject)));
    const lazy = new LazyHostClient(async () => fake);
    lazy.startEarly();
    lazy.startEarly();
    const first = lazy.call("agent", "initialize", { workspacePath: "/w" });
    const second = lazy.call("agent", "initialize", { workspacePath: "/w" });
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.starts).toBe(1);
    expect(fake.calls).toHaveLength(0);
    fail(failure);
    await expect(first).rejects.toBe(failure);
    await expect(second).rejects.toBe(failure);
    await expect(lazy.call("agent", "initialize", { workspacePath: "/w" })).resolves.toMatchObject({ available: true });
    expect(fake.calls).toHaveLength(1);
  });

  it("startEarly(): a successful early start lets the first call through", async () => {
    const fake = new StartableFake(async () => undefined);
    const lazy = new LazyHostClient(async () => fake);
    lazy.startEarly();
    await expect(lazy.call("agent", "initialize", { workspacePath: "/w" })).resolves.toMatchObject({ available: true });
    expect(fake.starts).toBe(1);
  });
});
