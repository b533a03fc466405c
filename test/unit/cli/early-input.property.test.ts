/**
 * stdin before and after the SDK is loaded (src/cli/early-input.ts): whatever the chunking, the
 * web stream handed to the SDK yields exactly the bytes written, in order; with a hold, nothing
 * after the first line before the hold settles; end and errors arrive after the bytes.
 */
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EarlyInput } from "../../../src/cli/early-input.js";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return Buffer.concat(parts);
    parts.push(Buffer.from(value));
  }
}

/** a byte string with some newlines, split into chunks at the given cut points */
const input = fc
  .tuple(
    fc.uint8Array({ minLength: 0, maxLength: 400 }),
    fc.array(fc.nat({ max: 400 }), { maxLength: 12 }),
    fc.array(fc.nat({ max: 400 }), { maxLength: 8 }),
  )
  .map(([raw, newlines, cuts]) => {
    const bytes = Buffer.from(raw);
    for (const at of newlines) if (at < bytes.length) bytes[at] = 0x0a;
    const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
    const chunks: Buffer[] = [];
    let from = 0;
    for (const p of [...points, bytes.length]) {
      chunks.push(bytes.subarray(from, p));
      from = p;
    }
    return { bytes, chunks: chunks.filter((c) => c.length > 0) };
  });

describe("EarlyInput", () => {
  it("hands over every byte in order, whatever the chunking and where the first line ends", async () => {
    await fc.assert(
      fc.asyncProperty(input, fc.nat({ max: 20 }), fc.boolean(), async ({ bytes, chunks }, splitAt, hold) => {
        const source = new PassThrough();
        const early = new EarlyInput(source, 1024);
        // some chunks before the first line is read, the rest after the hand-over
        const before = chunks.slice(0, Math.min(splitAt, chunks.length));
        const after = chunks.slice(before.length);
        for (const c of before) source.write(c);
        if (bytes.includes(0x0a) && before.some((c) => c.includes(0x0a))) {
          const { line } = await early.firstLine();
          expect(Buffer.from(line!)).toEqual(bytes.subarray(0, bytes.indexOf(0x0a)));
        }
        const stream = early.stream(hold ? Promise.resolve() : undefined);
        const all = readAll(stream);
        for (const c of after) source.write(c);
        source.end();
        expect(await all).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it("holds back everything after the first line until the hold settles", async () => {
    const source = new PassThrough();
    const early = new EarlyInput(source);
    source.write('{"a":1}\n{"b":2}\n{"c"');
    expect(Buffer.from((await early.firstLine()).line!).toString()).toBe('{"a":1}');
    let release!: () => void;
    const stream = early.stream(new Promise<void>((resolve) => (release = resolve)));
    const reader = stream.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe('{"a":1}\n');
    source.write(":3}\n");
    const next = reader.read();
    const raced = await Promise.race([next.then(() => "read"), new Promise((resolve) => setImmediate(() => resolve("held")))]);
    expect(raced).toBe("held");
    release();
    let rest = Buffer.from((await next).value!).toString();
    source.end();
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString();
    expect(rest).toBe('{"b":2}\n{"c":3}\n');
  });

  it("reports no first line when the input ends or fails first, and passes the end or error on", async () => {
    const ended = new PassThrough();
    const a = new EarlyInput(ended);
    ended.end("no newline");
    expect((await a.firstLine()).line).toBeUndefined();
    expect((await readAll(a.stream())).toString()).toBe("no newline");

    const failing = new PassThrough();
    const b = new EarlyInput(failing);
    failing.write("partial");
    failing.destroy(new Error("pipe broke"));
    expect((await b.firstLine()).line).toBeUndefined();
    await expect(readAll(b.stream())).rejects.toThrow("pipe broke");
  });

  it("gives up on a first line longer than its limit and hands everything to the SDK", async () => {
    const source = new PassThrough();
    const early = new EarlyInput(source, 16);
    source.write("x".repeat(40));
    expect((await early.firstLine()).line).toBeUndefined();
    const all = readAll(early.stream());
    source.end("\n");
    expect((await all).toString()).toBe(`${"x".repeat(40)}\n`);
  });

  it("shows the lines after the first to a watcher until it is satisfied or the stream is handed over", async () => {
    const source = new PassThrough();
    const early = new EarlyInput(source);
    source.write("first\nsecond\nthi");
    await early.firstLine();
    const seen: string[] = [];
    early.watch((line) => {
      seen.push(Buffer.from(line).toString());
      return seen.length === 3;
    });
    expect(seen).toEqual(["second"]);
    source.write("rd\nfourth\nfifth\n");
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["second", "third", "fourth"]);
    early.stream();
    source.end("sixth\n");
  });
});
