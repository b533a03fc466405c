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

describe("bootstrap: V4 conversation frames under the channel limit", () => {
  it("computes the same CRC-32 as the bridge", () => {
    const bytes = Buffer.from("zcode ✓ frames", "utf8");
    expect(runtimeCrc(bytes)).toBe(crc32Hex(bytes));
  });

  it("passes a frame that fits unchanged, and cuts a larger one into fragments the bridge reassembles", () => {
    const small = wire(1, "hi");
    expect(conversationFrames(small, { frameLimitBytes: LIMIT })).toEqual([small]);
    const big = wire(2, "é".repeat(600 * 1024));
    const parts = projectEvent("conversation-frame", big, { frameLimitBytes: LIMIT }) as Frame[];
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) {
      expect(part.kind).toBe("fragment");
      expect(Buffer.byteLength(JSON.stringify({ method: "event", params: { subscriptionId: "x", event: part } }))).toBeLessThan(LIMIT);
    }
    const assembler = new FrameAssembler();
    const results = parts.map((part) => assembler.push(part));
    expect(results.at(-1)).toEqual({ kind: "frame", deliveryKind: "initial", ordinal: 2, subscriptionId: "sub", frame: big.frame });
    expect(results.slice(0, -1).every((r) => r.kind === "none")).toBe(true);
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
