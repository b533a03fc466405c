import { describe, expect, it } from "vitest";
import { conversationFrames, conversationRows, crc32Hex as runtimeCrc } from "../../../src/runtime/conversation-frames.js";
import { projectEvent } from "../../../src/runtime/projections.js";
import { FrameAssembler } from "../../../src/native/v4-read/frame-assembler.js";
import { crc32Hex } from "../../../src/native/v4-read/crc32.js";

const LIMIT = 256 * 1024;
type Frame = Record<string, unknown>;

function wire(ordinal: number, text: string): Frame {
  return {
    wireVersion: 3,
    kind: "complete",
    deliveryKind: "initial",
    logicalFrameId: `lf-${ordinal}`,
    logicalFrameOrdinal: ordinal,
    topic: "conversation/S",
    subscriptionId: "sub",
    frame: {
      topic: "conversation/S",
      subscriptionId: "sub",
      fromSeq: 0,
      toSeq: 1,
      payload: { kind: "deltas", deltas: [{ op: "row.delta", rowId: 1, path: "text", append: text }] },
    },
  };
}

function frameOf(ordinal: number, deliveryKind: string, payload: unknown): Frame & { frame: Record<string, unknown> } {
  return {
    wireVersion: 3,
    kind: "complete",
    deliveryKind,
    logicalFrameId: `lf-${ordinal}`,
    logicalFrameOrdinal: ordinal,
    topic: "conversation/S",
    subscriptionId: "sub",
    frame: { topic: "conversation/S", subscriptionId: "sub", fromSeq: ordinal - 1, toSeq: ordinal, payload },
  };
}

/** a logical frame as ZCode fragments it (zcode-v4.md §3.3), `size` decoded bytes per fragment */
function zcodeFragments(ordinal: number, logical: unknown, size: number): Frame[] {
  const bytes = Buffer.from(JSON.stringify(logical), "utf8");
  const count = Math.ceil(bytes.length / size);
  return Array.from({ length: count }, (_, index) => ({
    wireVersion: 3,
    kind: "fragment",
    deliveryKind: "online",
    logicalFrameId: `z-lf-${ordinal}`,
    logicalFrameOrdinal: ordinal,
    topic: "conversation/S",
    subscriptionId: "sub",
    fragmentIndex: index,
    fragmentCount: count,
    logicalBytes: bytes.length,
    checksum: { algorithm: "crc32", value: runtimeCrc(bytes) },
    dataBase64: bytes.subarray(index * size, (index + 1) * size).toString("base64"),
  }));
}

describe("bootstrap: V4 conversation frames under the channel limit", () => {
  it("computes the same CRC-32 as the bridge", () => {
    const bytes = Buffer.from("zcode ✓ frames", "utf8");
    expect(runtimeCrc(bytes)).toBe(crc32Hex(bytes));
  });

  it("passes a frame that fits unchanged, and cuts a larger one into fragments the bridge reassembles", () => {
    const small = wire(1, "hi");
    expect(conversationFrames(small, { frameLimitBytes: LIMIT, subscription: {} })).toEqual([small]);
    // many rows, each within its bound: nothing is cut, the frame is too large for one physical frame
    const big = frameOf(2, "online", {
      kind: "deltas",
      deltas: Array.from({ length: 150 }, (_, i) => ({
        op: "row.appended",
        row: { rowId: i + 1, kind: "assistantText", state: "complete", text: "é".repeat(3000) },
      })),
    });
    const parts = projectEvent("conversation-frame", big, { frameLimitBytes: LIMIT, subscription: {} }) as Frame[];
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) {
      expect(part.kind).toBe("fragment");
      expect(Buffer.byteLength(JSON.stringify({ method: "event", params: { subscriptionId: "x", event: part } }))).toBeLessThan(LIMIT);
    }
    const assembler = new FrameAssembler();
    const results = parts.map((part) => assembler.push(part));
    expect(results.at(-1)).toEqual({ kind: "frame", deliveryKind: "online", ordinal: 2, subscriptionId: "sub", frame: big.frame });
    expect(results.slice(0, -1).every((r) => r.kind === "none")).toBe(true);
  });

  it("reassembles ZCode's own fragments of a frame of many MB and bounds its rows before they cross", () => {
    const content = "0123456789abcdef\n".repeat(350_000); // 6 MB, in the frame three times
    const input = { file_path: "big.txt", content };
    const row = {
      rowId: 7,
      kind: "toolCall",
      toolCallId: "t1",
      toolName: "Write",
      status: "pendingApproval",
      inputText: JSON.stringify(input),
      input,
    };
    const logical = frameOf(3, "online", { kind: "deltas", deltas: [{ op: "row.upserted", row }] }).frame;
    const context = { frameLimitBytes: LIMIT, subscription: {} };
    const zcode = zcodeFragments(3, logical, 1024 * 1024);
    expect(zcode.length).toBeGreaterThan(10);
    const sent = zcode.flatMap((fragment) => conversationFrames(fragment, context) as Frame[]);
    for (const frame of sent) expect(Buffer.byteLength(JSON.stringify(frame))).toBeLessThan(LIMIT - 64 * 1024);
    const assembler = new FrameAssembler();
    const result = sent.map((frame) => assembler.push(frame)).at(-1);
    expect(result?.kind).toBe("frame");
    const out = (result as { frame: { payload: { deltas: Array<{ row: typeof row }> } } }).frame.payload.deltas[0]!.row;
    expect(out.rowId).toBe(7);
    expect(out.input.content).toMatch(/^0123456789abcdef\n[\s\S]*\n… \[zcode-acp: 5\.9 MB more not shown\]$/);
    expect(out.inputText).toMatch(/\n… \[zcode-acp: \d+\.\d MB more not shown\]$/);
  });

  it("cuts a streamed tool input at its bound, leaves out what follows, and gives the marker with the row's next upsert", () => {
    const context = { frameLimitBytes: LIMIT, subscription: {} };
    const bound = 8 * 1024; // eventLimits(256 KiB).stringBytes
    const streaming = { rowId: 1, kind: "toolCall", status: "inputStreaming", inputText: "a".repeat(4000) };
    const deltasOf = (ordinal: number, deltas: unknown[]) =>
      (conversationFrames(frameOf(ordinal, "online", { kind: "deltas", deltas }), context) as Frame[])[0] as {
        frame: { toSeq: number; payload: { deltas: Array<Record<string, unknown>> } };
      };
    let held = (deltasOf(1, [{ op: "row.appended", row: streaming }]).frame.payload.deltas[0]!.row as { inputText: string }).inputText;
    const grow = deltasOf(2, [{ op: "row.delta", rowId: 1, path: "inputText", append: "b".repeat(10_000) }]).frame.payload.deltas;
    expect(grow).toHaveLength(1);
    held += grow[0]!.append as string;
    expect(Buffer.byteLength(held)).toBe(bound);
    const later = deltasOf(3, [{ op: "row.delta", rowId: 1, path: "inputText", append: "c".repeat(500) }]);
    expect(later.frame.payload.deltas).toEqual([]); // left out, the seq interval kept
    expect(later.frame.toSeq).toBe(3);
    const full = "a".repeat(4000) + "b".repeat(10_000) + "c".repeat(500);
    const done = deltasOf(4, [{ op: "row.upserted", row: { ...streaming, status: "running", inputText: full } }]).frame.payload.deltas;
    const text = (done[0]!.row as { inputText: string }).inputText;
    // what the bridge holds only grew: the upsert is the held head and the marker of the rest
    expect(text.startsWith(held)).toBe(true);
    expect(text.slice(held.length)).toBe("\n… [zcode-acp: 6.3 kB more not shown]");
  });

  it("streams an answer (text) past one string bound, up to 16 bounds (one append at most 8); the closing upsert keeps what was streamed", () => {
    const context = { frameLimitBytes: LIMIT, subscription: {} };
    const bound = 8 * 1024; // eventLimits(256 KiB).stringBytes
    const deltasOf = (ordinal: number, deltas: unknown[]) =>
      (conversationFrames(frameOf(ordinal, "online", { kind: "deltas", deltas }), context) as Frame[])[0] as {
        frame: { payload: { deltas: Array<Record<string, unknown>> } };
      };
    deltasOf(1, [{ op: "row.appended", row: { rowId: 1, kind: "assistantText", state: "streaming", text: "" } }]);
    let streamed = "";
    for (let i = 0; i < 40; i++) {
      const out = deltasOf(2 + i, [{ op: "row.delta", rowId: 1, path: "text", append: "x".repeat(1000) }]).frame.payload.deltas;
      streamed += out.map((d) => d.append as string).join("");
    }
    expect(streamed.length).toBe(40_000); // five string bounds, all of it streamed
    // one append of up to 8 bounds passes whole (ZCode merges ~30 ms of them); a larger one is cut there, what follows left out
    const merged = deltasOf(49, [{ op: "row.delta", rowId: 1, path: "text", append: "w".repeat(3 * bound) }]).frame.payload.deltas;
    expect(Buffer.byteLength(merged[0]!.append as string)).toBe(3 * bound);
    streamed += merged[0]!.append as string;
    const huge = deltasOf(50, [{ op: "row.delta", rowId: 1, path: "text", append: "y".repeat(9 * bound) }]).frame.payload.deltas;
    expect(Buffer.byteLength(huge[0]!.append as string)).toBe(8 * bound);
    streamed += huge[0]!.append as string;
    expect(deltasOf(51, [{ op: "row.delta", rowId: 1, path: "text", append: "z" }]).frame.payload.deltas).toEqual([]);
    // the closing upsert: what the bridge got, then the marker of what it did not (it only ever grows)
    const full = streamed + "y".repeat(bound) + "z";
    const closed = deltasOf(52, [{ op: "row.upserted", row: { rowId: 1, kind: "assistantText", state: "complete", text: full } }]).frame
      .payload.deltas;
    const text = (closed[0]!.row as { text: string }).text;
    expect(text.startsWith(streamed)).toBe(true);
    expect(text.slice(streamed.length)).toBe("\n… [zcode-acp: 8.2 kB more not shown]");
  });

  it("a resync snapshot in the middle of an answer streamed past one bound keeps it (up to 16 bounds) and the stream goes on", () => {
    const bound = 8 * 1024; // eventLimits(256 KiB).stringBytes
    const run = () => {
      const context = { frameLimitBytes: LIMIT, subscription: {} };
      let ordinal = 0;
      const out = (deliveryKind: string, payload: unknown) =>
        (conversationFrames(frameOf(++ordinal, deliveryKind, payload), context) as Frame[])[0] as {
          frame: { payload: { deltas: Array<Record<string, any>>; snapshot: { rows: { window: Array<Record<string, any>> } } } };
        };
      out("online", {
        kind: "deltas",
        deltas: [{ op: "row.appended", row: { rowId: 1, kind: "assistantText", state: "streaming", text: "" } }],
      });
      for (let i = 0; i < 5; i++)
        out("online", { kind: "deltas", deltas: [{ op: "row.delta", rowId: 1, path: "text", append: "a".repeat(bound) }] });
      const snapshotOf = (row: Record<string, unknown>) =>
        out("recovery", { kind: "snapshot", snapshot: { logEpoch: "E", seq: 9, rows: { window: [row] } } }).frame.payload.snapshot.rows
          .window[0]!;
      return { out, snapshotOf };
    };
    // still streaming: the whole text the snapshot carries, no marker (it comes with the close)
    const open = run();
    const mid = "a".repeat(5 * bound) + "b".repeat(2 * bound);
    expect(open.snapshotOf({ rowId: 1, kind: "assistantText", state: "streaming", text: mid }).text).toBe(mid);
    const next = open.out("online", { kind: "deltas", deltas: [{ op: "row.delta", rowId: 1, path: "text", append: "c".repeat(1000) }] });
    expect(next.frame.payload.deltas).toEqual([{ op: "row.delta", rowId: 1, path: "text", append: "c".repeat(1000) }]);
    const closed = open.out("online", {
      kind: "deltas",
      deltas: [{ op: "row.upserted", row: { rowId: 1, kind: "assistantText", state: "complete", text: mid + "c".repeat(1000) } }],
    });
    expect(closed.frame.payload.deltas[0]!.row.text).toBe(mid + "c".repeat(1000));
    // closed in the gap: 16 bounds of it, then the marker of the rest
    const gap = run();
    const long = "a".repeat(5 * bound) + "z".repeat(20 * bound);
    const held = gap.snapshotOf({ rowId: 1, kind: "assistantText", state: "complete", text: long }).text as string;
    expect(held).toBe(long.slice(0, 16 * bound) + "\n… [zcode-acp: 73.7 kB more not shown]");
    // a first snapshot's closed answer (history) stays at one bound
    const context = { frameLimitBytes: LIMIT, subscription: {} };
    const first = (
      conversationFrames(
        frameOf(1, "initial", {
          kind: "snapshot",
          snapshot: { logEpoch: "E", seq: 1, rows: { window: [{ rowId: 1, kind: "assistantText", state: "complete", text: long }] } },
        }),
        context,
      ) as Frame[]
    )[0] as { frame: { payload: { snapshot: { rows: { window: Array<Record<string, any>> } } } } };
    expect(Buffer.byteLength(first.frame.payload.snapshot.rows.window[0]!.text.split("\n…")[0])).toBe(bound);
  });

  it("puts a fault frame (code and message) where ZCode's fragments fail their checks; the bridge resyncs on it", () => {
    const context = { frameLimitBytes: LIMIT, subscription: {} };
    const parts = zcodeFragments(5, frameOf(5, "online", { kind: "deltas", deltas: [] }).frame, 64);
    const bad = parts.map((part, i) => (i === 1 ? { ...part, dataBase64: Buffer.from("x".repeat(30)).toString("base64") } : part));
    const sent = bad.flatMap((fragment) => conversationFrames(fragment, context) as Frame[]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      kind: "zcodeAcpFault",
      logicalFrameOrdinal: 5,
      subscriptionId: "sub",
      fault: { code: "CHANNEL_PROTOCOL" },
    });
    const result = new FrameAssembler().push(sent[0]);
    expect(result).toMatchObject({ kind: "fault", deliveryKind: "online", code: "CHANNEL_PROTOCOL" });
  });

  it("bounds each row of a rows page, and leaves out the oldest rows of a page too large for a frame (hasMore)", () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ rowId: i + 1, kind: "assistantText", text: "x".repeat(40 * 1024) }));
    const page = { rows, atSeq: 5, atRevision: 5, atLogEpoch: "E", hasMore: false };
    const out = conversationRows(page, { frameLimitBytes: LIMIT }) as typeof page;
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThan(LIMIT);
    expect(out.hasMore).toBe(true);
    expect(out.rows.length).toBeGreaterThan(0);
    expect(out.rows.at(-1)!.rowId).toBe(200);
    // the rows kept are the newest, in order, so the next page (before the first kept) brings the rest
    expect(out.rows.map((r) => r.rowId)).toEqual(Array.from({ length: out.rows.length }, (_, i) => 201 - out.rows.length + i));
    expect(out.rows[0]!.text).toMatch(/zcode-acp: .* more not shown/);
    const fits = { rows: [{ rowId: 1, kind: "userInput", text: "hi" }], atSeq: 1, hasMore: false };
    expect(conversationRows(fits, { frameLimitBytes: LIMIT })).toBe(fits);
  });
});
