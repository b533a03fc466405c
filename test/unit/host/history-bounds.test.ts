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
