/**
 * Fuzz / property tests of the internal channel's NDJSON decoder: random bytes, random
 * chunking, truncation, oversized frames, invalid UTF-8 and deep nesting. Whatever arrives, the
 * decoder returns JSON values or throws a BridgeError (CHANNEL_PROTOCOL or FRAME_TOO_LARGE),
 * never buffers more than its limit, and stays dead after a failure.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { NdjsonDecoder } from "../../../src/channel/ndjson-decoder.js";
import { encodeFrame } from "../../../src/channel/ndjson-encoder.js";
import { BridgeError } from "../../../src/util/errors.js";

const DECODER_CODES = new Set(["CHANNEL_PROTOCOL", "FRAME_TOO_LARGE"]);
const RUNS = { numRuns: 300 };

type Outcome = { values: unknown[]; error: BridgeError | undefined; maxBuffered: number };

/** Push `bytes` cut at `cuts`, then end(); any throw that is not a typed decoder error fails the test. */
function feed(decoder: NdjsonDecoder, bytes: Uint8Array, cuts: number[]): Outcome {
  const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % (bytes.length + 1))))].sort((a, b) => a - b);
  const values: unknown[] = [];
  let error: BridgeError | undefined;
  let maxBuffered = 0;
  let last = 0;
  const step = (fn: () => void): void => {
    try {
      fn();
    } catch (thrown) {
      if (!(thrown instanceof BridgeError) || !DECODER_CODES.has(thrown.code))
        throw new Error(`untyped failure: ${String(thrown)}`, { cause: thrown });
      if (error && thrown !== error) throw new Error("a dead decoder threw a different error", { cause: thrown });
      error = thrown;
    }
    maxBuffered = Math.max(maxBuffered, decoder.bufferedBytes);
  };
  for (const p of [...points, bytes.length]) {
    const chunk = Buffer.from(bytes.subarray(last, p));
    step(() => values.push(...decoder.push(chunk)));
    last = p;
  }
  step(() => decoder.end());
  return { values, error, maxBuffered };
}

/** a JSON text containing `bad` raw bytes inside a string literal */
function withRawBytes(bad: readonly number[]): Buffer {
  return Buffer.concat([Buffer.from('{"method":"event","params":{"text":"'), Buffer.from(bad), Buffer.from('"}}\n')]);
}

describe("NdjsonDecoder fuzz", () => {
  it("random bytes in random chunks: JSON values or a typed error, never more than the limit buffered", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 1500 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 512 }),
        (bytes, cuts, limit) => {
          const decoder = new NdjsonDecoder(limit);
          const { values, error, maxBuffered } = feed(decoder, bytes, cuts);
          expect(maxBuffered).toBeLessThanOrEqual(limit);
          for (const value of values) expect(() => JSON.stringify(value)).not.toThrow();
          if (error) {
            // dead: every later call throws the same error
            expect(() => decoder.push(Buffer.from("{}\n"))).toThrow(error);
            expect(() => decoder.end()).toThrow(error);
          }
        },
      ),
      RUNS,
    );
  });

  it("valid frames with random bytes overwritten: what is decoded before the damage is unchanged", () => {
    const frames = fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 6 });
    const damage = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(frames, damage, fc.array(fc.nat(), { maxLength: 8 }), (values, hits, cuts) => {
        const lines = values.map((v) => encodeFrame(v));
        const bytes = Buffer.from(lines.join(""));
        for (const [at, byte] of hits) bytes[at % bytes.length] = byte;
        const firstHit = Math.min(...hits.map(([at]) => at % bytes.length));
        const { values: out, error } = feed(new NdjsonDecoder(), bytes, cuts);
        // what comes out before the damage is what was sent (a chunk that fails is dropped whole: the channel fails closed)
        let end = 0;
        let intact = 0;
        for (const line of lines) {
          end += Buffer.byteLength(line);
          if (end > firstHit) break;
          intact += 1;
        }
        const prefix = out.slice(0, Math.min(intact, out.length));
        expect(prefix).toEqual(JSON.parse(JSON.stringify(values.slice(0, prefix.length))));
        if (!error) expect(out.length).toBeGreaterThanOrEqual(intact);
        if (error) expect(DECODER_CODES.has(error.code)).toBe(true);
      }),
      RUNS,
    );
  });

  it("truncated input: the complete frames decode, a cut inside a frame is CHANNEL_PROTOCOL at end()", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 6 }),
        (values, cutAt, cuts) => {
          const lines = values.map((v) => encodeFrame(v));
          const whole = Buffer.from(lines.join(""));
          const cut = cutAt % (whole.length + 1);
          const { values: out, error } = feed(new NdjsonDecoder(), whole.subarray(0, cut), cuts);
          let end = 0;
          const boundaries = [0, ...lines.map((l) => (end += Buffer.byteLength(l)))];
          const complete = boundaries.filter((b) => b > 0 && b <= cut).length;
          expect(out).toEqual(JSON.parse(JSON.stringify(values.slice(0, complete))));
          if (boundaries.includes(cut)) expect(error).toBeUndefined();
          else expect(error?.code).toBe("CHANNEL_PROTOCOL");
        },
      ),
      RUNS,
    );
  });

  it("an oversized frame fails FRAME_TOO_LARGE as soon as the limit is passed, before its newline", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 4096 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (limit, over, cuts) => {
          const decoder = new NdjsonDecoder(limit);
          const frame = Buffer.from(`"${"a".repeat(limit + over - 2)}"`); // limit + over bytes, no newline yet
          const { error, maxBuffered } = feed(decoder, frame, cuts);
          expect(error?.code).toBe("FRAME_TOO_LARGE");
          expect(maxBuffered).toBeLessThanOrEqual(limit);
          expect(error?.details).toMatchObject({ limitBytes: limit });
        },
      ),
      RUNS,
    );
  });

  it("invalid UTF-8 (stray continuation, truncated sequence, overlong, surrogate, > U+10FFFF) is CHANNEL_PROTOCOL", () => {
    const invalid = fc.constantFrom(
      [0x80],
      [0xbf],
      [0xc3],
      [0xe2, 0x82],
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xff],
      [0xfe],
    );
    fc.assert(
      fc.property(invalid, fc.array(fc.nat(), { maxLength: 6 }), (bad, cuts) => {
        const { values, error } = feed(new NdjsonDecoder(), withRawBytes(bad), cuts);
        expect(values).toEqual([]);
        expect(error?.code).toBe("CHANNEL_PROTOCOL");
        expect(error?.message).toMatch(/UTF-8/);
      }),
      RUNS,
    );
    // the same line with valid multi-byte characters, split anywhere, decodes
    const ok = feed(new NdjsonDecoder(), withRawBytes([0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80]), [37, 38, 40, 43]);
    expect(ok.error).toBeUndefined();
    expect(ok.values).toEqual([{ method: "event", params: { text: "é€😀" } }]);
  });

  it("deeply nested input within the limit: a value or CHANNEL_PROTOCOL, no stack overflow", () => {
    for (const depth of [1_000, 100_000, 1_000_000]) {
      const balanced = feed(new NdjsonDecoder(), Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth)}\n`), [depth]);
      expect(balanced.error).toBeUndefined();
      expect(balanced.values).toHaveLength(1);
      const objects = feed(new NdjsonDecoder(), Buffer.from(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}\n`), [3, depth]);
      expect(objects.error).toBeUndefined();
      const unbalanced = feed(new NdjsonDecoder(), Buffer.from(`${"[".repeat(depth)}${"]".repeat(depth - 1)}\n`), []);
      expect(unbalanced.error?.code).toBe("CHANNEL_PROTOCOL");
    }
  });

  it("stays linear: a frame arriving a byte-pair at a time is copied once, when its newline comes, never per piece", () => {
    // the property that keeps it linear, counted rather than timed: no piece re-copies what came before
    const limit = 1024 * 1024;
    const decoder = new NdjsonDecoder(limit);
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const piece = Buffer.from("aa");
      decoder.push(Buffer.from('"'));
      for (let i = 0; i < limit / 2 - 2; i++) decoder.push(piece);
      expect(decoder.bufferedBytes).toBe(limit - 3);
      expect(concat).not.toHaveBeenCalled();
      expect(decoder.push(Buffer.from('"\n'))).toEqual(["a".repeat(limit - 4)]);
      expect(concat).toHaveBeenCalledTimes(1);
      expect((concat.mock.results[0]!.value as Buffer).length).toBe(limit - 2);
      // and past the limit, one piece more is refused without a copy
      const over = new NdjsonDecoder(4);
      over.push(Buffer.from("aaaa"));
      expect(() => over.push(piece)).toThrow(expect.objectContaining({ code: "FRAME_TOO_LARGE" }));
      expect(concat).toHaveBeenCalledTimes(1);
    } finally {
      concat.mockRestore();
    }
  });
});
