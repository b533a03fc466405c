/**
 * The V4 projection bounds a tool's output as the runtime bounds a legacy event (src/runtime/bounds.js):
 * its copy of the marker and the cut must not drift from the runtime's.
 */
import { describe, expect, it } from "vitest";
import * as runtime from "../../../../src/runtime/bounds.js";
import { DEFAULT_FRAME_LIMIT_BYTES } from "../../../../src/channel/limits.js";
import {
  boundText,
  EVENT_STRING_BYTES,
  formatBytes,
  MESSAGE_STRING_BYTES,
  omittedMarker,
  utf8Head,
} from "../../../../src/native/v4-read/bounded-text.js";
import { toolResult } from "../../../../src/native/v4-read/projection.js";

const SIZES = [...Array.from({ length: 1100 }, (_, i) => i), 9_950, 99_950, 999_950, 1_000_000, 1_050_000, 2_737_856];

describe("the V4 projection's size bounds are the runtime's", () => {
  it("formatBytes, omittedMarker and utf8Head give what src/runtime/bounds.js gives", () => {
    for (const bytes of SIZES) {
      expect(formatBytes(bytes)).toBe(runtime.formatBytes(bytes));
      expect(omittedMarker(bytes)).toBe(runtime.omittedMarker(bytes));
    }
    for (const text of ["plain ascii ".repeat(30), "é".repeat(300), "😀b".repeat(150)])
      for (let max = -1; max <= 400; max += 1) expect(utf8Head(text, max)).toBe(runtime.utf8Head(text, max));
  });

  it("the limits are the runtime's for the default channel frame", () => {
    expect(EVENT_STRING_BYTES).toBe(runtime.eventLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes);
    expect(MESSAGE_STRING_BYTES).toBe(runtime.messageLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes);
  });

  it("a tool output over the bound keeps its head and the marker; one within it is whole", () => {
    const long = "x".repeat(3_000_000);
    expect(boundText(long, EVENT_STRING_BYTES)).toBe(
      runtime.utf8Head(long, EVENT_STRING_BYTES) + runtime.omittedMarker(3_000_000 - EVENT_STRING_BYTES),
    );
    const row = { rowId: 1, kind: "toolCall", status: "success", output: { text: long } };
    expect(toolResult(row).content).toMatch(/\n… \[zcode-acp: 2\.7 MB more not shown\]$/);
    expect(toolResult({ ...row, output: { text: "short" } })).toEqual({ success: true, content: "short" });
    // what ZCode's row left out (its head kept, `truncated.totalBytes` the whole) is said as the runtime says it
    const truncated = { totalBytes: 3_000_000, ref: "tool-output/c1" };
    expect(toolResult({ ...row, output: { text: "x".repeat(65_536), truncated } })).toEqual({
      success: true,
      content: "x".repeat(65_536) + runtime.omittedMarker(3_000_000 - 65_536),
      truncated,
    });
    expect(toolResult({ ...row, status: "error", output: { text: "short" } })).toEqual({ content: "short" });
  });
});
