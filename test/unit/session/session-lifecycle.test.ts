import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_PENDING_OPERATIONS, SessionLifecycle, abortableDelay, type LifecycleState } from "../../../src/session/session-lifecycle.js";

/** a promise with its resolve, to hold an operation open */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe("session lifecycle: states", () => {
  it("follows opening → attached ⇄ resyncing, attached → detached → resyncing, and any → closing → closed", () => {
    const l = new SessionLifecycle("s1");
    const path: LifecycleState[] = ["attached", "resyncing", "attached", "detached", "resyncing", "detached", "resyncing", "attached"];
    for (const next of path) {
      l.to(next);
      expect(l.state).toBe(next);
    }
    l.to("attached"); // staying is no move
    expect(l.state).toBe("attached");
  });

  it("refuses a move the diagram does not have (INTERNAL)", () => {
    const l = new SessionLifecycle("s1");
    expect(() => l.to("resyncing")).toThrow(expect.objectContaining({ code: "INTERNAL" }));
    expect(() => l.to("closed")).toThrow(/opening → closed/);
    l.to("detached");
    expect(() => l.to("attached")).toThrow(expect.objectContaining({ code: "INTERNAL" }));
  });

  it("touch makes a session the most recently used", () => {
    const a = new SessionLifecycle("a");
    const b = new SessionLifecycle("b");
    expect(a.lastUsed).toBeLessThan(b.lastUsed);
    a.touch();
    expect(a.lastUsed).toBeGreaterThan(b.lastUsed);
  });
});

describe("session lifecycle: one operation at a time", () => {
  it("runs operations in order, each after the one before has settled (also when it failed)", async () => {
    const l = new SessionLifecycle("s1");
    const order: string[] = [];
    const held = gate();
    const first = l.run(async () => {
      order.push("first start");
      await held.promise;
      order.push("first end");
      throw new Error("first failed");
    });
    const second = l.run(async () => {
      order.push("second");
      return 2;
    });
    expect(l.busy).toBe(true);
    await Promise.resolve();
    expect(order).toEqual(["first start"]);
    held.open();
    await expect(first).rejects.toThrow("first failed");
    await expect(second).resolves.toBe(2);
    expect(order).toEqual(["first start", "first end", "second"]);
    expect(l.busy).toBe(false);
  });

  it("close aborts the running operation's signal, refuses queued and new ones, and runs its work after the running one", async () => {
    const l = new SessionLifecycle("s1");
    l.to("attached");
    const order: string[] = [];
    const held = gate();
    let seen: AbortSignal | undefined;
    const running = l.run(async (signal) => {
      seen = signal;
      await held.promise;
      order.push(`running saw aborted=${signal.aborted}`);
    });
    const queued = l.run(async () => void order.push("queued ran"));
    await Promise.resolve();
    const closed = l.close(async () => void order.push("close work"));
    expect(l.state).toBe("closing");
    expect(l.ended).toBe(true);
    expect(seen?.aborted).toBe(true);
    await expect(l.run(async () => "late")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(l.close(async () => void order.push("second close"))).toBe(closed);
    held.open();
    await running;
    await expect(queued).rejects.toMatchObject({ code: "SESSION_NOT_FOUND", message: "Session s1 is closed." });
    await closed;
    expect(l.state).toBe("closed");
    expect(order).toEqual(["running saw aborted=true", "close work"]);
  });

  it(`refuses an operation beyond ${MAX_PENDING_OPERATIONS} pending with SESSION_BUSY, and takes one again once a slot frees`, async () => {
    const lifecycle = new SessionLifecycle("s1");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: number[] = [];
    const queued = Array.from({ length: MAX_PENDING_OPERATIONS }, (_, i) =>
      lifecycle.run(async () => {
        if (i === 0) await gate;
        ran.push(i);
      }),
    );
    await expect(lifecycle.run(async () => undefined)).rejects.toMatchObject({ code: "SESSION_BUSY" });
    release();
    await Promise.all(queued);
    expect(ran).toHaveLength(MAX_PENDING_OPERATIONS);
    await expect(lifecycle.run(async () => "again")).resolves.toBe("again");
  });

  it("closes from opening (an open that never finished)", async () => {
    const l = new SessionLifecycle("s1");
    await l.close(async () => undefined);
    expect(l.state).toBe("closed");
  });
});

/**
 * Whether `promise` has settled once the microtasks queued now have run: raced against one
 * setImmediate (real), so a delay that did not end answers false at once, not at a test timeout.
 */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

describe("abortableDelay", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("ends at once when a signal aborts (and not before)", async () => {
    const controller = new AbortController();
    const other = new AbortController();
    const waiting = abortableDelay(120_000, [other.signal, controller.signal]);
    expect(await settledNow(waiting)).toBe(false);
    controller.abort();
    expect(await settledNow(waiting)).toBe(true);
  });

  it("ends at once for a signal aborted before the call", async () => {
    expect(await settledNow(abortableDelay(120_000, [AbortSignal.abort()]))).toBe(true);
  });

  it("ends on its own after the time, not before", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const waiting = abortableDelay(5, []);
    vi.advanceTimersByTime(4);
    expect(await settledNow(waiting)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await settledNow(waiting)).toBe(true);
  });

  it("ends when the wake hook is called, and unregisters it", async () => {
    const wakes = new Set<() => void>();
    const waiting = abortableDelay(120_000, [], (wake) => {
      wakes.add(wake);
      return () => void wakes.delete(wake);
    });
    expect(wakes.size).toBe(1);
    expect(await settledNow(waiting)).toBe(false);
    for (const wake of wakes) wake();
    expect(await settledNow(waiting)).toBe(true);
    expect(wakes.size).toBe(0);
  });
});
