import { describe, expect, it } from "vitest";
import { LazyHostClient } from "../../src/host/lazy-host.js";
import { FakeHost } from "../support/fake-host.js";

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
    off();
    fake.crash();
    expect(exits).toEqual([1]);
    await lazy.close();
    expect(fake.closed).toBe(true);
  });
});
