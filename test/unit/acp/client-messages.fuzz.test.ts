/**
 * Fuzzing what the transport reads of client messages (src/acp/client-messages.ts through
 * src/acp/incoming-messages.ts and the wire-order gate, as the CLI wires them): whatever a client
 * writes around them — the methods the transport acts on with any params, any envelope, answers
 * to our permission requests with any shape — the reader never fails, every request it refuses
 * is answered exactly once with -32600 / -32602, and a well-formed request written after the
 * noise always reaches the SDK.
 */
import type * as acp from "@agentclientprotocol/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readClientMessage } from "../../../src/acp/client-messages.js";
import { incomingMessages } from "../../../src/acp/incoming-messages.js";
import { WireOrder } from "../../../src/acp/wire-order.js";
import { silentLogger } from "../../../src/log/logger.js";

const INSPECTED = ["initialize", "session/prompt", "session/cancel", "$/cancel_request"];
const json = fc.jsonValue({ maxDepth: 3 });
/** an id as a client might write one, valid or not */
const anyId = fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.constant(null), json);
/** params as a client might write them: missing, any JSON, or almost right */
const params = fc.oneof(
  fc.constant(undefined),
  json,
  fc.record({ sessionId: fc.oneof(fc.constantFrom("s1", "s2"), json) }, { requiredKeys: [] }),
  fc.record({ requestId: anyId }, { requiredKeys: [] }),
  fc.record({ sessionId: fc.oneof(fc.constant("s1"), json), prompt: fc.oneof(fc.constant([]), json) }, { requiredKeys: [] }),
  fc.record({ protocolVersion: fc.oneof(fc.integer({ min: -2, max: 70000 }), json) }, { requiredKeys: [] }),
);
const noisyMessage = fc
  .record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), fc.constant("2.0"), json),
      id: anyId,
      method: fc.oneof(fc.constantFrom(...INSPECTED), fc.constantFrom(...INSPECTED), json),
      params,
      result: json,
      error: fc.oneof(json, fc.record({ code: fc.integer(), message: fc.string() })),
    },
    { requiredKeys: [] },
  )
  .map((m) => JSON.parse(JSON.stringify(m)) as Record<string, unknown>);

async function run(lines: string[], wire: WireOrder) {
  const replies: any[] = [];
  const ends: Array<"eof" | Error> = [];
  async function* input() {
    yield Buffer.from(lines.map((l) => `${l}\n`).join(""));
  }
  const stream = incomingMessages({
    input: input(),
    reply: (m) => replies.push(m),
    gate: (read) => wire.incoming(read),
    logger: silentLogger,
    onEnd: (how) => ends.push(how),
  });
  const passed: any[] = [];
  for await (const message of stream as unknown as AsyncIterable<unknown>) passed.push(message);
  return { passed, replies, ends };
}

describe("client messages the transport reads, fuzzed", () => {
  it("never end the reader; refused requests are answered once; the probe after them reaches the SDK", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(noisyMessage, { maxLength: 12 }), fc.array(fc.nat({ max: 11 }), { maxLength: 3 }), async (noise, asks) => {
        const cancelled: string[] = [];
        const wire = new WireOrder((sessionId) => cancelled.push(sessionId), silentLogger);
        // some of our permission requests are on the wire, so answers and cancels meet tickets
        for (const at of asks) {
          const sent = wire.track(
            "permission",
            { sessionId: at % 2 ? "s1" : "s2", toolCall: { toolCallId: "t" }, options: [] },
            new AbortController().signal,
          );
          wire.outgoing({ jsonrpc: "2.0", id: at, method: "session/request_permission", params: sent } as unknown as acp.AnyMessage);
        }
        const probe = { jsonrpc: "2.0", id: "probe", method: "session/list", params: {} };
        const { passed, replies, ends } = await run([...noise.map((m) => JSON.stringify(m)), JSON.stringify(probe)], wire);
        expect(ends).toEqual(["eof"]);
        expect(passed.at(-1)).toEqual(probe);
        // every refused message with an answer was answered once, with its own verdict
        const expected = noise.flatMap((m) => {
          const verdict = readClientMessage(m);
          return verdict.ok || !verdict.answer ? [] : [[verdict.answer.id, verdict.answer.code]];
        });
        expect(replies.map((r) => [r.id, r.error.code])).toEqual(expected);
        for (const r of replies) expect([-32600, -32602]).toContain(r.error.code);
        // what reaches the SDK is well-formed JSON-RPC
        for (const m of passed) {
          expect(m.jsonrpc).toBe("2.0");
          if ("method" in m) expect(typeof m.method).toBe("string");
          else expect(Object.hasOwn(m, "result") !== Object.hasOwn(m, "error")).toBe(true);
        }
        // only a well-formed session/cancel, or a $/cancel_request of a prompt read before, cancels (and names a string session)
        const named = new Set(
          noise.flatMap((m) => {
            const verdict = readClientMessage(m);
            if (!verdict.ok) return [];
            const { read } = verdict;
            const acted =
              (read.kind === "notification" && read.method === "session/cancel") ||
              (read.kind === "request" && read.method === "session/prompt");
            return acted ? [(read.message.params as { sessionId: unknown }).sessionId] : [];
          }),
        );
        for (const sessionId of cancelled) expect(named.has(sessionId)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("readClientMessage never throws on any JSON object", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom("jsonrpc", "id", "method", "params", "result", "error", "x"), json), (message) => {
        expect(() => readClientMessage(message)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });
});
