/** How the transport reads a client message (src/acp/client-messages.ts): typed when well-formed, refused otherwise, never a throw. */
import { describe, expect, it } from "vitest";
import { readClientMessage } from "../../../src/acp/client-messages.js";

const refused = (message: Record<string, unknown>) => {
  const verdict = readClientMessage(message);
  if (verdict.ok) throw new Error("read, not refused");
  return verdict;
};

describe("the envelope", () => {
  it("reads requests, notifications and responses as what they are", () => {
    expect(readClientMessage({ jsonrpc: "2.0", id: 1, method: "session/list", params: {} })).toMatchObject({
      ok: true,
      read: { kind: "request", id: 1, method: "session/list" },
    });
    expect(readClientMessage({ jsonrpc: "2.0", method: "_x/note" })).toMatchObject({
      ok: true,
      read: { kind: "notification", method: "_x/note" },
    });
    expect(readClientMessage({ jsonrpc: "2.0", id: "a", result: null })).toMatchObject({ ok: true, read: { kind: "response", id: "a" } });
    expect(readClientMessage({ jsonrpc: "2.0", id: 2, error: { code: -1, message: "no" } })).toMatchObject({
      ok: true,
      read: { kind: "response" },
    });
  });

  it("answers an invalid call -32600, with its id when usable", () => {
    expect(refused({ id: 1, method: "initialize", params: { protocolVersion: 1 } }).answer).toMatchObject({ id: 1, code: -32600 });
    expect(refused({ jsonrpc: "2.0", id: 3, method: 42 }).answer).toMatchObject({ id: 3, code: -32600 });
    expect(refused({ jsonrpc: "2.0", id: { x: 1 }, method: "session/prompt" }).answer).toMatchObject({ id: null, code: -32600 });
    expect(refused({ jsonrpc: "2.0" }).answer).toMatchObject({ id: null, code: -32600 });
  });

  it("turns a malformed response into an error response (its request falls back) and drops one without a usable id", () => {
    for (const message of [
      { jsonrpc: "2.0", id: 5, result: {}, error: { code: 1, message: "x" } },
      { jsonrpc: "2.0", id: 5 },
      { jsonrpc: "2.0", id: 5, error: "no" },
      { id: 5, result: { outcome: { outcome: "selected", optionId: "allow" } } },
    ]) {
      const verdict = readClientMessage(message);
      expect(verdict).toMatchObject({
        ok: true,
        read: { kind: "response", id: 5, message: { jsonrpc: "2.0", id: 5, error: { code: -32600 } } },
      });
      expect(verdict.ok && "result" in verdict.read.message).toBe(false);
    }
    expect(refused({ jsonrpc: "2.0", id: [1], result: {} }).answer).toBeUndefined();
  });
});

describe("params of the methods the transport acts on", () => {
  it("ignores a notification with missing or wrong-typed params, without an answer", () => {
    for (const params of [undefined, "garbage", null, 7, [1], { requestId: { id: 1 } }, { requestId: true }]) {
      const verdict = refused({ jsonrpc: "2.0", method: "$/cancel_request", ...(params === undefined ? {} : { params }) });
      expect(verdict.answer).toBeUndefined();
      expect(verdict.method).toBe("$/cancel_request");
    }
    for (const params of [undefined, "garbage", [], { sessionId: 1 }, { session: "s" }])
      expect(refused({ jsonrpc: "2.0", method: "session/cancel", ...(params === undefined ? {} : { params }) }).answer).toBeUndefined();
  });

  it("accepts unknown fields (ACP: receivers ignore them)", () => {
    expect(readClientMessage({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "s", extra: [1] } }).ok).toBe(true);
    expect(readClientMessage({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "r", _meta: {} } }).ok).toBe(true);
    expect(readClientMessage({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [], x: 1 } }).ok).toBe(
      true,
    );
  });

  it("answers a request with missing or wrong-typed params -32602 naming the field", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ jsonrpc: "2.0", id: 1, method: "initialize" }, "params are missing"],
      [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1.5 } },
        "params.protocolVersion must be an integer from 0 to 65535",
      ],
      [{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 70000 } }, "params.protocolVersion"],
      [{ jsonrpc: "2.0", id: "p", method: "session/prompt", params: "garbage" }, "params must be an object, not a string"],
      [{ jsonrpc: "2.0", id: "p", method: "session/prompt", params: [] }, "params must be an object, not an array"],
      [{ jsonrpc: "2.0", id: "p", method: "session/prompt", params: { prompt: [] } }, "params.sessionId must be a string"],
      [
        { jsonrpc: "2.0", id: "p", method: "session/prompt", params: { sessionId: null, prompt: [] } },
        "params.sessionId must be a string, not null",
      ],
      [{ jsonrpc: "2.0", id: "p", method: "session/prompt", params: { sessionId: "s", prompt: {} } }, "params.prompt must be an array"],
    ];
    for (const [message, text] of cases) {
      const { answer } = refused(message);
      expect(answer).toMatchObject({ id: message.id, code: -32602, data: { code: "INVALID_PARAMS", method: message.method } });
      expect(answer!.message).toContain(`Invalid params for ${String(message.method)}: `);
      expect(answer!.message).toContain(text);
    }
  });

  it("leaves the other form of an inspected method to the SDK (a session/cancel request, a prompt notification)", () => {
    expect(readClientMessage({ jsonrpc: "2.0", id: 1, method: "session/cancel", params: "x" }).ok).toBe(true);
    expect(readClientMessage({ jsonrpc: "2.0", method: "session/prompt", params: "x" }).ok).toBe(true);
  });
});
