/**
 * The bootstrap's reductions (src/runtime/bounds.js, projections.js, history-pages.js), in
 * isolation: bounded strings keep their head and say how much was left out; snapshots lose their
 * messages; a held history is handed over in pieces bounded by bytes and count, then released.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
// plain JS shipped to Electron; tested directly
import { boundValue, eventLimits, formatBytes, utf8Head } from "../../../src/runtime/bounds.js";
import { project } from "../../../src/runtime/projections.js";
import { createHistoryPages } from "../../../src/runtime/history-pages.js";
import { createDispatcher } from "../../../src/runtime/dispatcher.js";

const FRAME = 16 * 1024 * 1024;
const limits = eventLimits(FRAME);
const context = () => ({ frameLimitBytes: FRAME, history: createHistoryPages({ frameLimitBytes: FRAME }) });

afterEach(() => {
  vi.useRealTimers();
});

describe("bounds", () => {
  it("leaves a value within its bounds untouched (the same object)", () => {
    const event = { type: "session.event", event: { payload: { kind: "text_delta", delta: "x".repeat(4000) } } };
    expect(boundValue(event, limits).value).toBe(event);
  });

  it("keeps the head of a long string (UTF-8 bytes, whole characters) and says how much was left out", () => {
    const text = "é".repeat(400_000); // 800 000 bytes
    const { value, omittedBytes } = boundValue({ content: text }, limits);
    const content = (value as { content: string }).content;
    const [head, marker] = content.split("\n… ");
    expect(Buffer.byteLength(head!, "utf8")).toBe(limits.stringBytes);
    expect(marker).toBe(`[zcode-acp: ${formatBytes(800_000 - limits.stringBytes)} more not shown]`);
    expect(omittedBytes).toBe(800_000 - limits.stringBytes);
    expect(utf8Head("a😀b", 2)).toBe("a");
    expect(formatBytes(19_737_856)).toBe("19.7 MB");
  });

  it("bounds an event as a whole: many large strings, long lists and wide objects", () => {
    const big = "n".repeat(500_000);
    const edits = Array.from({ length: 20 }, () => ({ old_string: big, new_string: big }));
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const lines = Array.from({ length: 100_000 }, (_, i) => `+line ${i}`);
    const bound = (input: unknown) => boundValue({ type: "tool_call", input }, limits).value as { type: string; input: any };
    for (const input of [{ edits, wide, lines }, { lines }, { wide }]) {
      const value = bound(input);
      expect(JSON.stringify(value).length).toBeLessThan(limits.totalBytes + limits.slackBytes + 64 * 1024);
      expect(value.type).toBe("tool_call");
    }
    expect(bound({ lines }).input.lines.at(-1)).toMatch(/^… \[zcode-acp: \d+ more items not shown\]$/);
    // keys past the bound are left out; the first ones (the event's type, kind, ids) stay
    expect(Object.keys(bound({ wide }).input.wide).length).toBeLessThan(100_000);
  });
});

describe("projections", () => {
  it("session-state and session-event drop the messages of a snapshot and keep its state", () => {
    const snapshot = { session: { sessionId: "s" }, runtime: { eventSeq: 9 }, messages: [{ info: { role: "user" }, parts: [] }] };
    expect(project("session-state", snapshot, context())).toEqual({ ...snapshot, messages: [] });
    expect(project("session-event", { type: "snapshot", snapshot }, context())).toEqual({
      type: "snapshot",
      snapshot: { ...snapshot, messages: [] },
    });
    expect(() => project("session-state", "nope", context())).toThrow("not an object");
  });
});

describe("history pages", () => {
  const message = (i: number, bytes: number) => ({
    info: { messageId: `m${i}`, role: i % 2 ? "assistant" : "user", system: "a long system prompt" },
    parts: [{ type: "text", text: "t".repeat(bytes) }],
  });

  it("hands a held history over in pieces bounded by bytes and count, then releases it", () => {
    const pages = createHistoryPages({ frameLimitBytes: FRAME });
    const messages = [
      ...Array.from({ length: 450 }, (_, i) => message(i, 10)),
      ...Array.from({ length: 20 }, (_, i) => message(450 + i, 3_000_000)),
    ];
    const expected = messages.map((m) => m.info.messageId);
    const handle = project("history-pages", messages, { frameLimitBytes: FRAME, history: pages }) as { historyId: string; total: number };
    expect(handle).toEqual({ historyId: "h1", total: 470 });
    const pieces: Array<{ messages: Array<{ info: Record<string, unknown>; parts: Array<{ text: string }> }>; done: boolean }> = [];
    for (;;) {
      const piece = pages.piece(handle.historyId);
      pieces.push(piece);
      if (piece.done) break;
    }
    const all = pieces.flatMap((p) => p.messages);
    expect(all.map((m) => m.info.messageId)).toEqual(expected);
    for (const piece of pieces) {
      expect(piece.messages.length).toBeLessThanOrEqual(200);
      expect(Buffer.byteLength(JSON.stringify(piece))).toBeLessThanOrEqual(1024 * 1024 + 64);
    }
    expect(all[0]!.info.system).toBeUndefined();
    expect(all.at(-1)!.parts[0]!.text).toMatch(/\n… \[zcode-acp: 2\.9 MB more not shown\]$/);
    expect(pages.size).toBe(0);
    expect(() => pages.piece(handle.historyId)).toThrow("no longer held");
  });

  it("holds at most four histories, releases on close, after a minute unused and on dispose", () => {
    vi.useFakeTimers();
    const pages = createHistoryPages({ frameLimitBytes: FRAME });
    const ids = [1, 2, 3, 4].map(() => (pages.hold([message(0, 1)]) as { historyId: string }).historyId);
    expect(() => pages.hold([])).toThrow("more than 4");
    pages.release(ids[0]);
    expect(pages.size).toBe(3);
    vi.advanceTimersByTime(61_000);
    expect(pages.size).toBe(0);
    pages.hold([message(0, 1)]);
    pages.disposeAll();
    expect(pages.size).toBe(0);
  });
});

/**
 * Whether `promise` has settled once the microtasks queued now have run (raced against one real
 * setImmediate): a wait that did not end answers false at once, not at a test timeout.
 */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

describe("history slots (a fifth concurrent load)", () => {
  const message = (i: number, bytes: number) => ({
    info: { messageId: `m${i}`, role: "user" },
    parts: [{ type: "text", text: "t".repeat(bytes) }],
  });

  it("a fifth read waits for a slot, and gets the first one given back (held history released, or a read cancelled)", async () => {
    const pages = createHistoryPages({ frameLimitBytes: FRAME });
    const slots = await Promise.all([1, 2, 3, 4].map(() => pages.reserve()));
    const fifth = pages.reserve();
    const sixth = pages.reserve();
    expect(await settledNow(fifth)).toBe(false);
    expect(pages.waiting).toBe(2);
    // a slot's read held its history: still four in use
    const { historyId } = slots[0]!.hold([message(0, 1)]);
    expect(await settledNow(fifth)).toBe(false);
    // the held history is paged out to its end: its slot goes to the fifth, first come first served
    expect(pages.piece(historyId).done).toBe(true);
    expect(await settledNow(fifth)).toBe(true);
    expect(await settledNow(sixth)).toBe(false);
    // a failed read gives its slot back
    slots[1]!.cancel();
    slots[1]!.cancel(); // once only
    expect(await settledNow(sixth)).toBe(true);
    expect(pages.waiting).toBe(0);
    // without a slot, hold refuses while four are held or being read
    expect(() => pages.hold([])).toThrow("more than 4");
    pages.disposeAll();
  });

  it("a read that waited too long is refused with a typed, retryable error naming the limit", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const pages = createHistoryPages({ frameLimitBytes: FRAME });
    await Promise.all([1, 2, 3, 4].map(() => pages.reserve()));
    const fifth = pages.reserve();
    const outcome = fifth.then(
      () => "granted",
      (error: unknown) => error,
    );
    vi.advanceTimersByTime(29_999);
    expect(await settledNow(outcome)).toBe(false);
    vi.advanceTimersByTime(1);
    expect(await outcome).toMatchObject({
      code: "CHANNEL_OVERFLOW",
      message: expect.stringMatching(
        /^4 session histories \(the most read at once\) .* load the session again once another load has finished/,
      ),
      data: { retryable: true, limit: 4, waitedMs: 30_000 },
    });
    expect(pages.waiting).toBe(0);
  });

  it("the dispatcher reads a fifth history only once a slot is free, and every load is answered", async () => {
    const reads: Array<{ resolve: (messages: unknown[]) => void }> = [];
    const sent: Array<{ id?: number; result?: unknown; error?: unknown }> = [];
    const services = {
      agent: {
        readSessionMessages: () => new Promise((resolve) => reads.push({ resolve })),
      },
    };
    const dispatcher = createDispatcher({
      config: {
        services: ["agent"],
        allowlist: { agent: ["readSessionMessages"] },
        events: { agent: [] },
        envelopeTypes: {},
        projections: { "agent.readSessionMessages": "history-pages" },
        frameLimitBytes: FRAME,
      } as never,
      services: Promise.resolve(services),
      send: (frame: object) => {
        sent.push(frame);
        return "ok";
      },
      isHostGone: () => false,
      onProtocolFailure: () => {
        throw new Error("protocol failure");
      },
    });
    const answer = (id: number) => sent.find((f) => f.id === id);
    /** until the dispatcher has settled what it can: one real macrotask */
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    for (let id = 1; id <= 5; id += 1)
      dispatcher.handleFrame({
        id,
        method: "__call",
        params: { service: "agent", method: "readSessionMessages", params: { sessionId: `s${id}` } },
      });
    await turn();
    // four full reads at the host; the fifth is not read at all yet
    expect(reads).toHaveLength(4);
    reads.forEach((read, i) => read.resolve([message(i, 1)]));
    await turn();
    const first = answer(1)!.result as { historyId: string };
    expect(first).toMatchObject({ total: 1 });
    expect(reads).toHaveLength(4);
    expect(answer(5)).toBeUndefined();
    // the first load pages its history to the end: the fifth read starts, and is answered
    dispatcher.handleFrame({ id: 6, method: "__history", params: { op: "next", historyId: first.historyId } });
    await turn();
    expect(answer(6)!.result).toMatchObject({ done: true });
    expect(reads).toHaveLength(5);
    reads[4]!.resolve([message(5, 1)]);
    await turn();
    expect(answer(5)!.result).toMatchObject({ total: 1, historyId: expect.stringMatching(/^h\d+$/) });
    expect(sent.filter((f) => f.error !== undefined)).toEqual([]);
    dispatcher.disposeAll();
  });
});
