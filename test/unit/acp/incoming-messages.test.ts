/** The ACP stdin reader (src/acp/incoming-messages.ts) and the head scan of oversized lines. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ClientMessage } from "../../../src/acp/client-messages.js";
import { incomingMessages } from "../../../src/acp/incoming-messages.js";
import { readMessageHead } from "../../../src/acp/message-head.js";
import { silentLogger } from "../../../src/log/logger.js";

async function run(chunks: Array<string | Uint8Array>, limit = 1024, gate?: Parameters<typeof incomingMessages>[0]["gate"]) {
  const replies: any[] = [];
  const ends: Array<"eof" | Error> = [];
  async function* input() {
    for (const chunk of chunks) yield typeof chunk === "string" ? Buffer.from(chunk) : chunk;
  }
  const stream = incomingMessages({
    input: input(),
    reply: (m) => replies.push(m),
    logger: silentLogger,
    maxMessageBytes: limit,
    onEnd: (how) => ends.push(how),
    ...(gate ? { gate } : {}),
  });
  const messages: any[] = [];
  for await (const message of stream as unknown as AsyncIterable<unknown>) messages.push(message);
  return { messages, replies, ends };
}

describe("incoming ACP lines", () => {
  it("splits lines across any chunking, ignores blank lines and CRLF, and ends with eof", async () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "a" },
      { jsonrpc: "2.0", method: "b", params: { t: "é✓" } },
      { jsonrpc: "2.0", id: 2, result: {} },
    ];
    const text = Buffer.from(`${lines.map((l) => JSON.stringify(l)).join("\r\n")}\n\n  \n`);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: text.length }), { maxLength: 8 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const p of [...points, text.length]) {
          chunks.push(text.subarray(from, p));
          from = p;
        }
        const { messages, replies, ends } = await run(chunks);
        expect(messages).toEqual(lines);
        expect(replies).toEqual([]);
        expect(ends).toEqual(["eof"]);
      }),
      { numRuns: 200 },
    );
  });

  it("answers invalid JSON, batches and non-objects like the SDK and goes on", async () => {
    const { messages, replies } = await run(['{"broken"\n', "[1,2]\n", "42\n", '{"jsonrpc":"2.0","id":3,"method":"ok"}\n']);
    expect(messages).toEqual([{ jsonrpc: "2.0", id: 3, method: "ok" }]);
    expect(replies.map((r) => [r.id, r.error.code])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
    ]);
  });

  it("skips a line over the limit to its newline: a request gets -32602 with its id, a response reaches the SDK as an error, the rest is read", async () => {
    const big = "x".repeat(2000);
    const { messages, replies } = await run(
      [
        `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"t":"${big.slice(0, 500)}`,
        `${big}"}}\n{"jsonrpc":"2.0","id":"r1","result":{"v":"${big}"}}\n`,
        '{"jsonrpc":"2.0","id":8,"method":"ok"}\n',
      ],
      1024,
    );
    expect(replies).toEqual([
      { jsonrpc: "2.0", id: 7, error: expect.objectContaining({ code: -32602, data: { code: "MESSAGE_TOO_LARGE", limitBytes: 1024 } }) },
    ]);
    expect(messages).toEqual([
      { jsonrpc: "2.0", id: "r1", error: expect.objectContaining({ code: -32600 }) },
      { jsonrpc: "2.0", id: 8, method: "ok" },
    ]);
  });

  it("holds later lines back while the gate's promise is pending, and drops what the gate drops", async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const gate = ({ message: m }: ClientMessage) => {
      order.push(`gate:${String(m.method)}`);
      if (m.method === "hold") return held.then(() => m);
      if (m.method === "drop") return undefined;
      return m;
    };
    const done = run(
      ['{"jsonrpc":"2.0","method":"hold"}\n{"jsonrpc":"2.0","method":"drop"}\n{"jsonrpc":"2.0","method":"after"}\n'],
      1024,
      gate,
    );
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(["gate:hold"]);
    release();
    const { messages } = await done;
    expect(order).toEqual(["gate:hold", "gate:drop", "gate:after"]);
    expect(messages.map((m) => m.method)).toEqual(["hold", "after"]);
  });
});

describe("what the reader never does (adr/0019)", () => {
  it("a gate that throws or rejects does not end the reader: calls go on, an answer becomes an error (it can never allow)", async () => {
    const gate = (read: ClientMessage) => {
      if (read.kind === "notification") throw new TypeError("boom");
      if (read.kind === "response") return Promise.reject(new Error("boom"));
      return read.message;
    };
    const { messages, replies, ends } = await run(
      [
        '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}\n',
        '{"jsonrpc":"2.0","id":4,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}\n',
        '{"jsonrpc":"2.0","id":5,"method":"session/list","params":{}}\n',
      ],
      1024,
      gate,
    );
    expect(ends).toEqual(["eof"]);
    expect(replies).toEqual([]);
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s" } },
      { jsonrpc: "2.0", id: 4, error: expect.objectContaining({ code: -32603 }) },
      { jsonrpc: "2.0", id: 5, method: "session/list", params: {} },
    ]);
  });

  it('answers the issue\'s line ({"method":"$/cancel_request","params":"garbage"}) with nothing and reads on', async () => {
    const { messages, replies, ends } = await run([
      '{"jsonrpc":"2.0","method":"$/cancel_request","params":"garbage"}\n{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":7}\n',
      '{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n',
    ]);
    expect(ends).toEqual(["eof"]);
    expect(replies).toEqual([{ jsonrpc: "2.0", id: 1, error: expect.objectContaining({ code: -32602 }) }]);
    expect(messages).toEqual([{ jsonrpc: "2.0", id: 2, method: "session/list", params: {} }]);
  });
});

describe("head of an oversized line", () => {
  it("finds the top-level id and method, not nested ones, and stops at a cut", () => {
    expect(readMessageHead('{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"id":9')).toEqual({
      id: 5,
      method: "session/prompt",
    });
    expect(readMessageHead('{"params":{"id":9,"method":"x","s":"\\"}"},"id":"a\\"b","method":"m"')).toEqual({ id: 'a"b', method: "m" });
    expect(readMessageHead('{"jsonrpc":"2.0","params":{"text":"aaaa')).toEqual({});
    expect(readMessageHead("zzzz")).toEqual({});
    expect(readMessageHead('  {"id":null,"result":{}}')).toEqual({ id: null });
  });
});
