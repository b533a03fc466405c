import { describe, expect, it } from "vitest";
import { createNativeApi } from "../../../../src/native/index.js";
import { complete, deltas, logical, row, SESSION, snapshot, snapshotPayload } from "./frames.js";
import { StubHost } from "./stub-host.js";
import type { HostEventSink, HostEventTarget } from "../../../../src/host/types.js";

const REF = { workspacePath: "/w", sessionId: SESSION };

function v4Host(): StubHost {
  const host = new StubHost();
  host.allowed.add("*");
  host.handlers.set("sendConversationCommandV4", (params) => {
    const envelope = params.envelope as { commandId: string };
    return {
      commandId: envelope.commandId,
      status: "accepted",
      revisionAtDecision: 3,
      result: { type: "resolveInteraction", resolvedBy: "me" },
    };
  });
  host.handlers.set("readSession", () => ({
    session: { sessionId: SESSION, workspace: { workspacePath: "/w" }, title: "", status: "idle" },
    settings: {},
    runtime: { eventSeq: 977 },
  }));
  return host;
}

const envelopes = (host: StubHost) => host.callsOf("sendConversationCommandV4").map((p) => p.envelope as Record<string, unknown>);

describe("the V4 read path on a line", () => {
  it("zcode-task-v3 subscribes through V4 after the handshake, and its snapshots count from the reader's last event", async () => {
    const host = v4Host();
    const api = createNativeApi("zcode-task-v3", host);
    expect((await api.readSession(REF)).runtime?.eventSeq).toBe(0);
    const events: unknown[] = [];
    await api.subscribe(REF, { onEvent: (e) => void events.push(e), onEnd: () => {} });
    expect(host.calls.map((c) => c.method)).toEqual([
      "readSession",
      "helloConversationV4",
      "initializeConversationV4",
      "subscribeConversationV4",
    ]);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    host.frame(
      complete(2, logical(10, 11, deltas({ op: "row.appended", row: row("turnHeader", { state: "running", sourceCommandId: "c" }) }))),
    );
    expect(events).toHaveLength(2);
    expect((events[1] as { event: { seq: number } }).event.seq).toBe(1);
    expect((await api.readSession(REF)).runtime?.eventSeq).toBe(1);
  });

  it("a V4 snapshot of the usage a session read said carries that read's cost (the V4 zone has none)", async () => {
    const host = v4Host();
    const cost = { amount: 0.01, currency: "USD" };
    host.handlers.set("readSession", () => ({
      session: { sessionId: SESSION, workspace: { workspacePath: "/w" }, title: "", status: "idle" },
      settings: {},
      runtime: { eventSeq: 0, contextUsage: { used: 50, size: 100, cost } },
    }));
    const api = createNativeApi("zcode-task-v3", host);
    await api.readSession(REF);
    const events: Array<{ type: string; snapshot?: { runtime: { contextUsage?: unknown } } }> = [];
    await api.subscribe(REF, { onEvent: (e) => void events.push(e as never), onEnd: () => {} });
    const usage = (used: number) => ({ usage: { contextWindow: { usedTokens: used, maxTokens: 100 }, cumulative: {} } });
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10, usage(50)))), "initial"));
    host.frame(complete(2, logical(10, 11, deltas({ op: "state.updated", patch: usage(60) }))));
    expect(events.map((e) => e.snapshot?.runtime.contextUsage)).toEqual([
      { used: 50, size: 100, cost },
      { used: 60, size: 100 },
    ]);
  });

  it("answers a permission and a question with resolveInteraction, each once", async () => {
    const host = v4Host();
    const api = createNativeApi("zcode-task-v3", host);
    await api.answerPermission({ ...REF, requestId: "i1", optionId: "allow_once" });
    await expect(api.answerPermission({ ...REF, requestId: "i1", optionId: "deny" })).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    await api.answerQuestion({
      ...REF,
      requestId: "q1",
      answer: { action: "accept", content: { answers: { "Which?": "A" }, answer_0: "A" } },
    });
    await api.answerQuestion({ ...REF, requestId: "p1", answer: { action: "decline" } });
    const sent = envelopes(host);
    expect(sent.map((e) => [e.type, e.payload])).toEqual([
      ["resolveInteraction", { interactionId: "i1", answer: { optionId: "allow_once" } }],
      ["resolveInteraction", { interactionId: "q1", answer: { action: "accept", content: { answers: { "Which?": "A" }, answer_0: "A" } } }],
      ["resolveInteraction", { interactionId: "p1", answer: { action: "decline" } }],
    ]);
    // not a compare-and-set command: no base revision
    expect(sent.every((e) => !("baseRevision" in e))).toBe(true);
    expect(host.calls.filter((c) => c.method === "respondPermission")).toEqual([]);
  });

  it("takes a late answer (noop: ZCode resolved it another way) as done, and a refusal as an error", async () => {
    const host = v4Host();
    let status = "noop";
    host.handlers.set("sendConversationCommandV4", (params) => ({
      commandId: (params.envelope as { commandId: string }).commandId,
      status,
      reasonCode: "proto.alreadyResolved",
      revisionAtDecision: 1,
    }));
    const api = createNativeApi("zcode-task-v3", host);
    await expect(api.answerPermission({ ...REF, requestId: "i1", optionId: "allow_once" })).resolves.toMatchObject({ status: "noop" });
    status = "rejected";
    await expect(api.answerPermission({ ...REF, requestId: "i2", optionId: "allow_once" })).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
    });
  });

  it("a legacy line reads its legacy stream unless told to read V4; told so, an install without the V4 reading is refused", async () => {
    const legacy = new StubHost();
    await createNativeApi("zcode-task-v2", legacy).subscribe(REF, { onEvent: () => {}, onEnd: () => {} });
    expect(legacy.listenerTarget).toEqual({
      workspacePath: "/w",
      sessionId: SESSION,
      deliveryKind: "desktop-continuous",
      includeSnapshot: true,
    });
    const chosen = v4Host();
    await createNativeApi("zcode-task-v2", chosen, { readPath: "v4" }).subscribe(REF, { onEvent: () => {}, onEnd: () => {} });
    expect(chosen.listenerTarget).toEqual({ event: "onDynamicConversationFrame", workspacePath: "/w" });
    const without = new StubHost();
    await expect(
      createNativeApi("zcode-task-v2", without, { readPath: "v4" }).subscribe(REF, { onEvent: () => {}, onEnd: () => {} }),
    ).rejects.toMatchObject({ code: "UNSUPPORTED_ZCODE", message: expect.stringContaining("subscribeConversationV4") });
  });

  it("a legacy line read through V4 passes on only the header requests of its legacy stream, each once; a held one is declined at the end", async () => {
    const listeners: Array<{ target: HostEventTarget; sink: HostEventSink }> = [];
    const host = v4Host();
    host.handlers.set("respondProviderRuntimeHeaders", () => null);
    const subscribe = host.subscribe.bind(host);
    host.subscribe = (target, sink) => {
      listeners.push({ target, sink });
      return subscribe(target, sink);
    };
    const events: Array<Record<string, any>> = [];
    const subscription = await createNativeApi("zcode-task-v2", host, { readPath: "v4" }).subscribe(REF, {
      onEvent: (e) => void events.push(e as Record<string, any>),
      onEnd: () => {},
    });
    expect(listeners.map((l) => l.target)).toEqual([
      { workspacePath: "/w", sessionId: SESSION, deliveryKind: "desktop-continuous", includeSnapshot: false },
      { event: "onDynamicConversationFrame", workspacePath: "/w" },
    ]);
    const legacy = listeners[0]!.sink;
    const headers = (requestId: string, turnId: string) => ({
      type: "providerRuntimeHeaders.request",
      request: { requestId, sessionId: SESSION, turnId, providerId: "p", reason: "model-request" },
    });
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    host.frame(complete(2, logical(10, 11, deltas({ op: "row.appended", row: row("turnHeader", { state: "running", turnId: "T1" }) }))));
    // the legacy stream's other events are read from the conversation, never twice
    void legacy.onEvent({ type: "session.event", event: { type: "turn.started", turnId: "T1", seq: 1 } });
    void legacy.onEvent(headers("h1", "T1"));
    void legacy.onEvent(headers("h1", "T1")); // re-announced
    const types = () => events.map((e) => (e.type === "session.event" ? e.event.type : e.type));
    expect(types()).toEqual(["snapshot", "turn.started", "providerRuntimeHeaders.request"]);
    expect(events[2]!.request.requestId).toBe("h1");
    // a request whose turn the conversation has not shown is held; the subscription's end declines it
    void legacy.onEvent(headers("h2", "T2"));
    expect(types()).toHaveLength(3);
    await subscription.dispose();
    expect(host.callsOf("respondProviderRuntimeHeaders")).toEqual([
      expect.objectContaining({ sessionId: SESSION, requestId: "h2", response: expect.objectContaining({ headersApplied: false }) }),
    ]);
    expect(types()).toHaveLength(3);
  });

  it("refuses a V4 hello of a wire version the line does not know before subscribing", async () => {
    const host = v4Host();
    host.handlers.set("helloConversationV4", () => ({ kind: "hello", protocolVersion: 4 }));
    await expect(createNativeApi("zcode-task-v3", host).subscribe(REF, { onEvent: () => {}, onEnd: () => {} })).rejects.toMatchObject({
      code: "UNSUPPORTED_ZCODE",
    });
    expect(host.callsOf("subscribeConversationV4")).toEqual([]);
  });

  it("reads the history from rows pages on the V4 path", async () => {
    const host = v4Host();
    host.handlers.set("conversationRowsRangeV4", () => ({
      rows: [{ rowId: 1, kind: "userInput", text: "hi" }],
      hasMore: false,
      atSeq: 1,
      atRevision: 1,
      atLogEpoch: "E",
    }));
    const pieces = [];
    for await (const piece of createNativeApi("zcode-task-v3", host).readHistory(REF)) pieces.push(piece);
    expect(pieces).toEqual([[{ info: { role: "user", messageId: "row-1" }, parts: [{ type: "text", text: "hi" }] }]]);
    expect(host.callsOf("readSessionMessages")).toEqual([]);
  });
});
