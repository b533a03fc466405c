/** The wire-order tracker (src/acp/wire-order.ts) on its own, and the protocol property it relies on. */
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { readClientMessage, type ClientMessage } from "../../../src/acp/client-messages.js";
import { TICKET_META_KEY, WireOrder } from "../../../src/acp/wire-order.js";
import { createLogger } from "../../../src/log/logger.js";

const logger = createLogger({ level: "error", file: "/dev/null" });

/** a client message as the transport reads it (./client-messages.ts) */
function read(message: Record<string, unknown>): ClientMessage {
  const verdict = readClientMessage(message);
  if (!verdict.ok) throw new Error(`not read: ${verdict.reason}`);
  return verdict.read;
}

/** a WireOrder whose incoming() takes raw messages */
class RawWire extends WireOrder {
  override incoming(message: ClientMessage | Record<string, unknown>): ReturnType<WireOrder["incoming"]> {
    return super.incoming("kind" in message && "message" in message ? (message as ClientMessage) : read(message));
  }
}

function tracker() {
  const cancelled: string[] = [];
  const wire = new RawWire((sessionId) => cancelled.push(sessionId), logger);
  /** an interaction request of `sessionId` sent with JSON-RPC id `id`; returns its abort controller */
  const ask = (id: number, sessionId: string, method = "session/request_permission") => {
    const params = { sessionId, toolCall: { toolCallId: `t${id}` }, options: [] };
    const controller = new AbortController();
    const kind = method === "elicitation/create" ? "elicitation" : "permission";
    const sent = wire.track(kind, params, controller.signal);
    const written = wire.outgoing({ jsonrpc: "2.0", id, method, params: sent } as unknown as acp.AnyMessage);
    // the tag is ours: taken off again, the client gets the params as they were
    expect(written).toEqual({ jsonrpc: "2.0", id, method, params });
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
    const sent = wire.track("permission", params, signal);
    wire.outgoing({ jsonrpc: "2.0", id: 4, method: "session/request_permission", params: sent } as unknown as acp.AnyMessage);
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

describe("prompts read before a cancel", () => {
  it("a session/prompt read before a cancel of its session counts as cancelled until it is answered; one read after does not", () => {
    const { wire, cancel } = tracker();
    const prompt = (id: number, sessionId: string) =>
      void wire.incoming({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [] } });
    prompt(1, "s1");
    prompt(2, "s2");
    void wire.incoming(cancel("s1"));
    prompt(3, "s1");
    expect([1, 2, 3].map((id) => wire.cancelledOnWire(id))).toEqual([true, false, false]);
    wire.outgoing({ jsonrpc: "2.0", id: 1, result: { stopReason: "cancelled" } } as unknown as acp.AnyMessage);
    expect(wire.cancelledOnWire(1)).toBe(false);
  });
});

describe("tickets without SDK internals", () => {
  it("a copied params object (an SDK that rebuilds params) still finds its ticket by its _meta tag; the client's own _meta is kept", async () => {
    const { wire, cancelled, allow, cancel } = tracker();
    const first = new AbortController();
    const second = new AbortController();
    const a = wire.track("permission", { sessionId: "s1", toolCall: { toolCallId: "a" }, options: [], _meta: { mine: 1 } }, first.signal);
    const b = wire.track("permission", { sessionId: "s1", toolCall: { toolCallId: "b" }, options: [] }, second.signal);
    // written in the reverse order, as deep copies
    const wroteB = wire.outgoing(structuredClone({ jsonrpc: "2.0", id: 2, method: "session/request_permission", params: b }) as any) as any;
    const wroteA = wire.outgoing(structuredClone({ jsonrpc: "2.0", id: 1, method: "session/request_permission", params: a }) as any) as any;
    expect(wroteA.params._meta).toEqual({ mine: 1 });
    expect("_meta" in wroteB.params).toBe(false);
    // request 1 answered before the cancel: the cancel waits for interaction "a" only
    expect(wire.incoming(allow(1))).toEqual(allow(1));
    const pending = wire.incoming(cancel("s1"));
    second.abort();
    await new Promise((r) => setImmediate(r));
    expect(cancelled).toEqual([]);
    first.abort();
    await pending;
    expect(cancelled).toEqual(["s1"]);
    // request 2 was not answered before the cancel: stale
    expect(wire.incoming(allow(2))).toEqual({ jsonrpc: "2.0", id: 2, result: { outcome: { outcome: "cancelled" } } });
  });

  it("an SDK that dropped the tag: the request is matched to the oldest unsent ticket of its session and kind", async () => {
    const { wire, cancelled, allow, cancel } = tracker();
    const asking = new AbortController();
    wire.track("permission", { sessionId: "s1", toolCall: { toolCallId: "a" }, options: [] }, asking.signal);
    const params = { sessionId: "s1", toolCall: { toolCallId: "a" }, options: [] };
    expect(wire.outgoing({ jsonrpc: "2.0", id: 1, method: "session/request_permission", params } as any)).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "session/request_permission",
      params,
    });
    void wire.incoming(allow(1));
    const pending = wire.incoming(cancel("s1"));
    await new Promise((r) => setImmediate(r));
    expect(cancelled).toEqual([]);
    asking.abort();
    await pending;
    expect(cancelled).toEqual(["s1"]);
  });

  it("a ticket tag under a foreign key or a non-record _meta never throws", () => {
    const { wire } = tracker();
    for (const params of [{ sessionId: "s" }, { sessionId: "s", _meta: "x" }, { sessionId: "s", _meta: { [TICKET_META_KEY]: "no" } }, {}])
      expect(() => wire.outgoing({ jsonrpc: "2.0", id: 5, method: "elicitation/create", params } as any)).not.toThrow();
  });
});

describe("what the tracker relies on: ACP's _meta passes through the SDK", () => {
  it("the SDK writes a request's params._meta as it was given (the ticket tag reaches our writer)", async () => {
    const written: any[] = [];
    const writable = new WritableStream<acp.AnyMessage>({ write: (m) => void written.push(m) });
    const readable = new ReadableStream<acp.AnyMessage>({ start: () => undefined });
    let client: acp.AgentContext | undefined;
    const app = acp.agent({ name: "meta" }).onConnect((connection) => {
      client = connection.client;
    });
    const connection = app.connect({ readable, writable });
    await new Promise((r) => setImmediate(r));
    const params = { sessionId: "s1", toolCall: { toolCallId: "t" }, options: [], _meta: { [TICKET_META_KEY]: 7 } };
    void client!.request(acp.methods.client.session.requestPermission, params).catch(() => undefined);
    await new Promise((r) => setImmediate(r));
    expect(written.find((m) => m.method === "session/request_permission")?.params._meta).toEqual({ [TICKET_META_KEY]: 7 });
    connection.close();
  });
});
