/** The wire-order tracker (src/acp/wire-order.ts) on its own, and the SDK property it relies on. */
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { WireOrder } from "../../../src/acp/wire-order.js";
import { createLogger } from "../../../src/log/logger.js";

const logger = createLogger({ level: "error", file: "/dev/null" });

function tracker() {
  const cancelled: string[] = [];
  const wire = new WireOrder((sessionId) => cancelled.push(sessionId), logger);
  /** an interaction request of `sessionId` sent with JSON-RPC id `id`; returns its abort controller */
  const ask = (id: number, sessionId: string, method = "session/request_permission") => {
    const params = { sessionId, toolCall: { toolCallId: `t${id}` }, options: [] };
    const controller = new AbortController();
    wire.track(params, controller.signal);
    wire.outgoing({ jsonrpc: "2.0", id, method, params } as unknown as acp.AnyMessage);
    return controller;
  };
  const allow = (id: number) => ({ jsonrpc: "2.0", id, result: { outcome: { outcome: "selected", optionId: "allow" } } });
  const cancel = (sessionId: string) => ({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  return { wire, cancelled, ask, allow, cancel };
}

describe("wire order of cancels and answers", () => {
  it("an answer read after the cancel of its session reaches the SDK as cancelled; other sessions are untouched", async () => {
    const { wire, cancelled, ask, allow, cancel } = tracker();
    ask(1, "s1");
    ask(2, "s2");
    ask(3, "s1", "elicitation/create");
    expect(await wire.incoming(cancel("s1"))).toEqual(cancel("s1"));
    expect(cancelled).toEqual(["s1"]);
    expect(wire.incoming(allow(1))).toEqual({ jsonrpc: "2.0", id: 1, result: { outcome: { outcome: "cancelled" } } });
    expect(wire.incoming({ jsonrpc: "2.0", id: 3, result: { action: "accept", content: {} } })).toEqual({
      jsonrpc: "2.0",
      id: 3,
      result: { action: "cancel" },
    });
    expect(wire.incoming(allow(2))).toEqual(allow(2));
  });

  it("a cancel waits for an answer read before it until that interaction is over, then cancels", async () => {
    const { wire, cancelled, ask, allow, cancel } = tracker();
    const interaction = ask(1, "s1");
    expect(wire.incoming(allow(1))).toEqual(allow(1));
    const pending = wire.incoming(cancel("s1"));
    expect(pending).toBeInstanceOf(Promise);
    await new Promise((r) => setImmediate(r));
    expect(cancelled).toEqual([]);
    interaction.abort();
    expect(await pending).toEqual(cancel("s1"));
    expect(cancelled).toEqual(["s1"]);
  });

  it("the client port's end report releases a waiting cancel like an abort does", async () => {
    const { wire, cancelled, allow, cancel } = tracker();
    const params = { sessionId: "s1", toolCall: { toolCallId: "t" }, options: [] };
    const signal = new AbortController().signal;
    wire.track(params, signal);
    wire.outgoing({ jsonrpc: "2.0", id: 4, method: "session/request_permission", params } as unknown as acp.AnyMessage);
    void wire.incoming(allow(4));
    const pending = wire.incoming(cancel("s1"));
    await new Promise((r) => setImmediate(r));
    expect(cancelled).toEqual([]);
    wire.ended(signal);
    await pending;
    expect(cancelled).toEqual(["s1"]);
  });

  it("a cancel with nothing answered in flight is applied synchronously", () => {
    const { wire, cancelled, ask, allow, cancel } = tracker();
    const done = ask(1, "s1");
    expect(wire.incoming(allow(1))).toEqual(allow(1));
    done.abort();
    expect(wire.incoming(cancel("s1"))).toEqual(cancel("s1"));
    expect(cancelled).toEqual(["s1"]);
  });

  it("$/cancel_request of a running prompt cancels its session; after the prompt's response it does not", () => {
    const { wire, cancelled } = tracker();
    void wire.incoming({ jsonrpc: "2.0", id: 9, method: "session/prompt", params: { sessionId: "s1", prompt: [] } });
    void wire.incoming({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 9 } });
    expect(cancelled).toEqual(["s1"]);
    wire.outgoing({ jsonrpc: "2.0", id: 9, result: { stopReason: "cancelled" } } as unknown as acp.AnyMessage);
    void wire.incoming({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 9 } });
    expect(cancelled).toEqual(["s1"]);
  });
});

describe("what the tracker relies on in the SDK", () => {
  it("the SDK writes a request with the very params object it was given (the ticket is found by identity)", async () => {
    const written: any[] = [];
    const writable = new WritableStream<acp.AnyMessage>({ write: (m) => void written.push(m) });
    const readable = new ReadableStream<acp.AnyMessage>({ start: () => undefined });
    let client: acp.AgentContext | undefined;
    const app = acp.agent({ name: "identity" }).onConnect((connection) => {
      client = connection.client;
    });
    const connection = app.connect({ readable, writable });
    await new Promise((r) => setImmediate(r));
    const params = { sessionId: "s1", toolCall: { toolCallId: "t" }, options: [] };
    void client!.request(acp.methods.client.session.requestPermission, params).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(written.find((m) => m.method === "session/request_permission")?.params).toBe(params);
    connection.close();
  });
});
