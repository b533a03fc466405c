import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NdjsonDecoder } from "../../../src/channel/ndjson-decoder.js";
import { encodeFrame } from "../../../src/channel/ndjson-encoder.js";
import { BridgeError } from "../../../src/util/errors.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof BridgeError ? error.code : `not a BridgeError: ${String(error)}`;
  }
  return undefined;
}

describe("NdjsonDecoder", () => {
  it("decodes several frames in one chunk and a frame split over chunks", () => {
    const decoder = new NdjsonDecoder(1024);
    expect(decoder.push(Buffer.from('{"a":1}\n{"b":2}\n{"c"'))).toEqual([{ a: 1 }, { b: 2 }]);
    expect(decoder.bufferedBytes).toBe(4);
    expect(decoder.push(Buffer.from(":3}"))).toEqual([]);
    expect(decoder.push(Buffer.from("\n"))).toEqual([{ c: 3 }]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("keeps multi-byte UTF-8 characters split between chunks", () => {
    const bytes = Buffer.from('{"t":"日本語✓"}\n');
    const decoder = new NdjsonDecoder();
    const out = [...decoder.push(bytes.subarray(0, 8)), ...decoder.push(bytes.subarray(8, 9)), ...decoder.push(bytes.subarray(9))];
    expect(out).toEqual([{ t: "日本語✓" }]);
  });

  it("skips blank lines and tolerates CRLF", () => {
    const decoder = new NdjsonDecoder();
    expect(decoder.push(Buffer.from('\n  \n{"x":1}\r\n'))).toEqual([{ x: 1 }]);
  });

  it("accepts a frame of exactly the limit and refuses one byte more, before its newline arrives", () => {
    const frame = JSON.stringify({ p: "x".repeat(100) });
    const exact = new NdjsonDecoder(frame.length);
    expect(exact.push(Buffer.from(`${frame}\n`))).toEqual([JSON.parse(frame)]);
    const tight = new NdjsonDecoder(frame.length - 1);
    // no newline yet: the decoder must refuse as soon as the frame is known to be too long
    expect(codeOf(() => tight.push(Buffer.from(frame)))).toBe("FRAME_TOO_LARGE");
    expect(tight.bufferedBytes).toBe(0);
    // dead after a failure
    expect(codeOf(() => tight.push(Buffer.from("{}\n")))).toBe("FRAME_TOO_LARGE");
  });

  it("refuses an oversized frame that grows over several chunks", () => {
    const decoder = new NdjsonDecoder(64);
    expect(decoder.push(Buffer.from(`{"p":"${"y".repeat(40)}`))).toEqual([]);
    expect(codeOf(() => decoder.push(Buffer.from("y".repeat(40))))).toBe("FRAME_TOO_LARGE");
  });

  it("fails with CHANNEL_PROTOCOL on malformed JSON", () => {
    const decoder = new NdjsonDecoder();
    expect(codeOf(() => decoder.push(Buffer.from('{"ok":1}\n{not json}\n')))).toBe("CHANNEL_PROTOCOL");
  });

  it("fails when the input ends inside a frame", () => {
    const decoder = new NdjsonDecoder();
    decoder.push(Buffer.from('{"half":'));
    expect(codeOf(() => decoder.end())).toBe("CHANNEL_PROTOCOL");
    const clean = new NdjsonDecoder();
    clean.push(Buffer.from("{}\n"));
    expect(codeOf(() => clean.end())).toBeUndefined();
  });

  it("decodes the same values however the byte stream is split (property)", () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.array(value, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 10 }), (values, cuts) => {
        const bytes = Buffer.from(values.map((v) => encodeFrame(v)).join(""));
        const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
        const decoder = new NdjsonDecoder();
        const out: unknown[] = [];
        let last = 0;
        for (const p of [...points, bytes.length]) {
          out.push(...decoder.push(bytes.subarray(last, p)));
          last = p;
        }
        decoder.end();
        expect(out).toEqual(JSON.parse(JSON.stringify(values)));
      }),
    );
  });
});

describe("encodeFrame", () => {
  it("ends every frame with one newline and escapes newlines inside strings", () => {
    const line = encodeFrame({ text: "a\nb" });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1).includes("\n")).toBe(false);
  });

  it("refuses a frame over the limit, counting UTF-8 bytes", () => {
    expect(codeOf(() => encodeFrame({ t: "é".repeat(30) }, 64))).toBe("FRAME_TOO_LARGE");
    expect(codeOf(() => encodeFrame({ t: "e".repeat(30) }, 64))).toBeUndefined();
  });

  it("refuses values that are not JSON", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => encodeFrame(cyclic))).toBe("CHANNEL_PROTOCOL");
    expect(codeOf(() => encodeFrame(undefined))).toBe("CHANNEL_PROTOCOL");
    expect(codeOf(() => encodeFrame({ n: 1n }))).toBe("CHANNEL_PROTOCOL");
  });
});
