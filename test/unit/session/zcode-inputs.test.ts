/**
 * ZCode's input queue as the bridge owns it (src/session/zcode-inputs.ts, adr/0023): strict send
 * order, pairing by the input id `turn.started` carries, steering outcomes from what ZCode reports,
 * the one stop routine (serial removals, a stop only for what of ours runs), a held queue released
 * before the next send, a lost session resumed once, and the bound on waiting inputs.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log/logger.js";
import type { NativeApi, SentInput } from "../../../src/native/native-api.js";
import { BridgeError } from "../../../src/util/errors.js";
import { MAX_WAITING_INPUTS, ZCodeInputs } from "../../../src/session/zcode-inputs.js";

const WHERE = { workspacePath: "/w", sessionId: "s1" };
const TEXT = { content: "hi", attachments: [] };

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}
function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A native API whose calls are logged in order; each sendInput waits for the test to answer it. */
function fakeNative(options: { live?: boolean } = {}) {
  const log: string[] = [];
  const sends: Array<{ params: { inputId?: string; delivery?: string; content: string }; answer: Deferred<SentInput> }> = [];
  const removals = new Map<string, boolean>();
  const native = {
    takesLiveInput: async () => options.live ?? true,
    sendInput: (params: { inputId?: string; delivery?: string; content: string }) => {
      log.push(`send ${params.content}${params.delivery ? ` ${params.delivery}` : ""}`);
      const answer = deferred<SentInput>();
      sends.push({ params, answer });
      return answer.promise;
    },
    removeQueuedInput: async ({ queueItemId }: { queueItemId: string }) => {
      log.push(`remove ${queueItemId}`);
      return removals.get(queueItemId) ?? true;
    },
    stopTurn: async () => void log.push("stop"),
    releaseHeldQueue: async () => void log.push("release"),
  } as unknown as NativeApi;
  return { native, log, sends, removals };
}

function inputs(native: NativeApi, extra: { resume?: () => Promise<void>; steerOutcomeMs?: number } = {}) {
  return new ZCodeInputs({ native, where: WHERE, logger: silentLogger, resume: extra.resume ?? (async () => undefined), ...extra });
}

/** Resolves once `check` holds, re-checked every turn of the event loop (bounded). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never: ${what}`);
}

describe("ZCode's input queue: sending", () => {
  it("sends strictly in order: the second sendText leaves only after the first one's ack", async () => {
    const { native, sends } = fakeNative();
    const q = inputs(native);
    const a = q.admit("prompt", { content: "a", attachments: [] });
    const b = q.admit("prompt", { content: "b", attachments: [] });
    const sentA = q.send(a);
    const sentB = q.send(b);
    await until(() => sends.length === 1, "the first send");
    // the first ack has not come: the second send must not have left
    await new Promise((resolve) => setImmediate(resolve));
    expect(sends.map((s) => s.params.content)).toEqual(["a"]);
    sends[0]!.answer.resolve({ inputId: a.inputId, delivery: "startNow" });
    await sentA;
    await until(() => sends.length === 2, "the second send");
    sends[1]!.answer.resolve({ inputId: b.inputId, delivery: "queue" });
    await sentB;
    expect([a.state, b.state]).toEqual(["started", "queued"]);
    // ordinary prompts ask for no delivery: ZCode routes them
    expect(sends.map((s) => s.params.delivery)).toEqual([undefined, undefined]);
    expect(sends.map((s) => s.params.inputId)).toEqual([a.inputId, b.inputId]);
  });

  it("pairs a turn only with the input whose id it carries, also before the ack; ZCode's own turns pair with nothing", async () => {
    const { native, sends } = fakeNative();
    const q = inputs(native);
    const a = q.admit("prompt", TEXT);
    void q.send(a);
    await until(() => sends.length === 1, "the send");
    expect(q.pair({ inputId: "someone-else", inputSource: "background_task" })).toBeUndefined();
    expect(q.pair({ inputId: "unknown-input" })).toBeUndefined();
    expect(q.pair({ inputId: a.inputId! })).toBe(a);
    expect(a.state).toBe("running");
    sends[0]!.answer.resolve({ inputId: a.inputId, delivery: "startNow" });
    await until(() => q.running === a, "still running after its ack");
  });

  it("pairs the legacy line's one input (no id) with the next turn that is not ZCode's own", async () => {
    const { native, sends } = fakeNative({ live: false });
    const q = inputs(native);
    const a = q.admit("prompt", TEXT);
    const sent = q.send(a);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: undefined, delivery: "startNow" });
    await sent;
    expect(q.pair({ inputSource: "background_task" })).toBeUndefined();
    expect(q.pair({ inputId: "in_7" })).toBe(a);
  });

  it(`refuses an input beyond ${MAX_WAITING_INPUTS} waiting (prompts and steering alike) with SESSION_BUSY`, () => {
    const { native } = fakeNative();
    const q = inputs(native);
    for (let i = 0; i < MAX_WAITING_INPUTS - 1; i++) q.admit("prompt", TEXT);
    q.admit("steer", TEXT);
    expect(() => q.admit("prompt", TEXT)).toThrow(expect.objectContaining({ code: "SESSION_BUSY" }));
    expect(() => q.admit("steer", TEXT)).toThrow(expect.objectContaining({ code: "SESSION_BUSY" }));
  });

  it("releases a queue ZCode holds (heldQueueDispositionRequired) and sends once more under a new id", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    const a = q.admit("prompt", TEXT);
    const sent = q.send(a);
    await until(() => sends.length === 1, "the send");
    const firstId = a.inputId;
    sends[0]!.answer.reject(
      new BridgeError("HOST_CALL_FAILED", "held", { details: { status: "failed", reasonCode: "heldQueueDispositionRequired" } }),
    );
    await until(() => sends.length === 2, "the second try");
    expect(log).toEqual(["send hi", "release", "send hi"]);
    expect(sends[1]!.params.inputId).not.toBe(firstId);
    sends[1]!.answer.resolve({ inputId: a.inputId, delivery: "startNow" });
    await sent;
    expect(a.state).toBe("started");
  });

  it("resumes a session ZCode's CLI no longer holds and sends once more; a second refusal fails", async () => {
    const { native, sends } = fakeNative();
    let resumed = 0;
    const q = inputs(native, { resume: async () => void resumed++ });
    const a = q.admit("prompt", TEXT);
    const sent = q.send(a);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.reject(new BridgeError("SESSION_NOT_FOUND", "not held"));
    await until(() => sends.length === 2, "the retry");
    expect(resumed).toBe(1);
    sends[1]!.answer.reject(new BridgeError("SESSION_NOT_FOUND", "still not held"));
    await expect(sent).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    expect(sends).toHaveLength(2);
    expect(a.state).toBe("removed");
  });
});

describe("ZCode's input queue: steering", () => {
  it("is injected only when ZCode drains it into the running turn (the ack says queue, never guide)", async () => {
    const { native, sends } = fakeNative();
    const q = inputs(native);
    const steer = q.admit("steer", TEXT);
    void q.send(steer);
    await until(() => sends.length === 1, "the send");
    expect(sends[0]!.params.delivery).toBe("guide");
    sends[0]!.answer.resolve({ inputId: steer.inputId, delivery: "queue" });
    const outcome = q.steerOutcome(steer);
    q.drained(["unrelated", steer.inputId!]);
    await expect(outcome).resolves.toBe("injected");
    expect(q.active).toBe(false);
  });

  it("starts a turn of its own when a turn.started carries it (it could not guide), or when ZCode was idle", async () => {
    const { native, sends } = fakeNative();
    const q = inputs(native);
    const late = q.admit("steer", TEXT);
    void q.send(late);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: late.inputId, delivery: "queue" });
    const outcome = q.steerOutcome(late);
    expect(q.pair({ inputId: late.inputId! })).toBe(late);
    await expect(outcome).resolves.toBe("startedNewTurn");
    expect(late.turn).toBeDefined();

    const idle = q.admit("steer", TEXT);
    void q.send(idle);
    await until(() => sends.length === 2, "the second send");
    sends[1]!.answer.resolve({ inputId: idle.inputId, delivery: "startNow" });
    await expect(q.steerOutcome(idle)).resolves.toBe("startedNewTurn");
  });

  it("ends its wait for an outcome after the bound with a clear error", async () => {
    const { native, sends } = fakeNative();
    const q = inputs(native, { steerOutcomeMs: 20 });
    const steer = q.admit("steer", TEXT);
    void q.send(steer);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: steer.inputId, delivery: "queue" });
    await expect(q.steerOutcome(steer)).rejects.toMatchObject({ code: "HOST_TIMEOUT" });
  });
});

describe("ZCode's input queue: the stop routine", () => {
  it("answers every waiting prompt once, removes them one after another after the sends in flight, then stops what runs", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    const running = q.admit("prompt", { content: "run", attachments: [] });
    void q.send(running);
    await until(() => sends.length === 1, "the first send");
    sends[0]!.answer.resolve({ inputId: running.inputId, delivery: "startNow" });
    q.pair({ inputId: running.inputId! });
    const waiting = Array.from({ length: 6 }, (_, i) => q.admit("prompt", { content: `w${i}`, attachments: [] }));
    const sent = waiting.map((input) => q.send(input).catch(() => undefined));
    await until(() => sends.length === 2, "a queued send in flight");
    const stopped = q.stop({ native: true });
    // the ones that never left are answered at once, cancelled, once each
    for (const input of waiting.slice(1)) await expect(input.turn!.result).resolves.toEqual({ stopReason: "cancelled" });
    // the send in flight gets its ack; the ones after it never leave
    sends[1]!.answer.resolve({ inputId: waiting[0]!.inputId, delivery: "queue" });
    await stopped;
    // the one ZCode held is answered once it is out of ZCode's queue (adr/0036)
    await expect(waiting[0]!.turn!.result).resolves.toEqual({ stopReason: "cancelled" });
    await Promise.all(sent);
    expect(sends).toHaveLength(2);
    expect(log).toEqual(["send run", "send w0", `remove queue_${waiting[0]!.inputId}`, "stop"]);
    expect(q.waitingCount).toBe(0);
  });

  it("does not stop a turn ZCode runs on its own when every prompt of ours was still queued", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    expect(q.pair({ inputId: "zcode-own", inputSource: "background_task" })).toBeUndefined();
    const queued = q.admit("prompt", TEXT);
    void q.send(queued);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: queued.inputId, delivery: "queue" });
    await q.stop({ native: true });
    expect(log).toEqual(["send hi", `remove queue_${queued.inputId}`]);
  });

  it("stops when a queued input had left the queue (ZCode started it meanwhile), and releases the held queue before the next send", async () => {
    const { native, sends, log, removals } = fakeNative();
    const q = inputs(native);
    const queued = q.admit("prompt", TEXT);
    void q.send(queued);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: queued.inputId, delivery: "queue" });
    removals.set(queued.queueItemId!, false);
    await q.stop({ native: true });
    expect(log.slice(-2)).toEqual([`remove queue_${queued.inputId}`, "stop"]);
    const next = q.admit("prompt", { content: "next", attachments: [] });
    void q.send(next);
    await until(() => sends.length === 2, "the next send");
    expect(log.slice(-2)).toEqual(["release", "send next"]);
  });

  it("answers waiting prompts with a 'not run' error when the bridge gives up, and touches nothing when the host is gone", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    const queued = q.admit("prompt", TEXT);
    void q.send(queued);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: queued.inputId, delivery: "queue" });
    await q.stop({ native: false, error: new BridgeError("HOST_EXITED", "The ZCode host stopped.") });
    await expect(queued.turn!.result).rejects.toMatchObject({ code: "HOST_EXITED", message: "Not run: The ZCode host stopped." });
    expect(log).toEqual(["send hi"]);
    expect(q.active).toBe(false);
  });

  it("sends one stop for a running turn however many stops are asked for", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    const running = q.admit("prompt", TEXT);
    void q.send(running);
    await until(() => sends.length === 1, "the send");
    sends[0]!.answer.resolve({ inputId: running.inputId, delivery: "startNow" });
    q.pair({ inputId: running.inputId! });
    await Promise.all([q.stop({ native: true }), q.stop({ native: true })]);
    expect(log.filter((entry) => entry === "stop")).toHaveLength(1);
  });
});

describe("ZCode's input queue: an input whose outcome is unknown is given up alone", () => {
  const lost = () => new BridgeError("HOST_TIMEOUT", "the host did not answer agent.sendConversationCommandV4 within 400 ms");

  /** a running first input `a`, and `b` sent behind it whose ack is lost */
  async function runningAndLost() {
    const fake = fakeNative();
    const q = inputs(fake.native);
    const a = q.admit("prompt", { content: "a", attachments: [] });
    const b = q.admit("prompt", { content: "b", attachments: [] });
    void q.send(a);
    await until(() => fake.sends.length === 1, "the first send");
    fake.sends[0]!.answer.resolve({ inputId: a.inputId, delivery: "startNow" });
    expect(q.pair({ inputId: a.inputId! })).toBe(a);
    const sentB = q.send(b);
    await until(() => fake.sends.length === 2, "the second send");
    fake.sends[1]!.answer.reject(lost());
    await expect(sentB).rejects.toMatchObject({ code: "HOST_TIMEOUT" });
    expect(b.state).toBe("unknown");
    return { ...fake, q, a, b };
  }

  it("in ZCode's queue: removed there; the running turn is not stopped", async () => {
    const { q, a, b, log } = await runningAndLost();
    await q.abandon(b);
    expect(log).toEqual(["send a", "send b", `remove ${b.queueItemId}`]);
    expect(b.state).toBe("removed");
    expect(q.running).toBe(a);
  });

  it("not in ZCode's queue: watched; when ZCode starts it later, only its turn is stopped and the held queue released", async () => {
    const { q, a, b, log, removals } = await runningAndLost();
    removals.set(b.queueItemId!, false);
    await q.abandon(b);
    expect(log).toEqual(["send a", "send b", `remove ${b.queueItemId}`]);
    // watched, but it keeps nothing busy once the running turn ends
    q.ended(a);
    expect(q.active).toBe(false);
    expect(q.pair({ inputId: b.inputId! })).toBe(b);
    await q.settled();
    expect(log.slice(3)).toEqual(["stop", "release"]);
  });

  it("already running when its ack is lost: one stop, then the held queue released for the input behind it", async () => {
    const { native, sends, log } = fakeNative();
    const q = inputs(native);
    const a = q.admit("prompt", { content: "a", attachments: [] });
    const behind = q.admit("prompt", { content: "c", attachments: [] });
    const sentA = q.send(a);
    await until(() => sends.length === 1, "the send");
    expect(q.pair({ inputId: a.inputId! })).toBe(a);
    sends[0]!.answer.reject(lost());
    await expect(sentA).rejects.toMatchObject({ code: "HOST_TIMEOUT" });
    expect(a.state).toBe("running");
    await q.abandon(a);
    expect(log).toEqual(["send a", "stop", "release"]);
    expect(behind.state).toBe("waiting");
  });

  it("never stops the turn of another input that runs by the time the stop would leave", async () => {
    const { q, a, b, log, removals } = await runningAndLost();
    removals.set(b.queueItemId!, false);
    await q.abandon(b);
    const c = q.admit("prompt", { content: "c", attachments: [] });
    q.ended(a);
    expect(q.pair({ inputId: b.inputId! })).toBe(b);
    // ZCode ended b's turn and started c before the stop's turn on the chain came
    q.ended(b);
    c.inputId = "c-id";
    c.state = "queued";
    expect(q.pair({ inputId: "c-id" })).toBe(c);
    await q.settled();
    expect(log).not.toContain("stop");
  });
});
