import { describe, expect, it } from "vitest";
import { until } from "../../support/until.js";
import { openSession, setup } from "./harness.js";

const stops = (h: ReturnType<typeof setup>) => h.host.operations.filter((o) => o.operation === "cancelGeneration");

describe("session engine: cancel", () => {
  it("stops generation exactly once, withdraws interactions and resolves cancelled", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("streaming");
    };
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await h.client.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk");
    engine.cancel();
    engine.cancel();
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(stops(h)).toEqual([{ operation: "cancelGeneration", sessionId: opened.sessionId, params: { workspacePath: "/work/project" } }]);
    expect(h.broker.withdrawals).toContainEqual({ sessionId: opened.sessionId, reason: "cancel" });
  });

  it("turns turn.failed and unknown results after a cancel into cancelled", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    h.host.script.onStop = (s) => {
      s.snapshot.session.status = "idle";
      s.event("turn.failed", { error: { message: "aborted" }, turnPhase: "model_request" });
      s.currentTurnId = undefined;
    };
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    engine.cancel();
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
  });

  it("resolves cancelled after the grace period without a terminal event, then resynchronises before the next prompt", async () => {
    const h = setup({ cancelGraceMs: 100 });
    const { opened, engine, native } = await openSession(h);
    let stuckTurn = "";
    h.host.script.onPrompt = (s) => {
      stuckTurn = s.startTurn();
      s.text("stuck");
    };
    h.host.script.onStop = () => undefined; // the host never ends the turn
    const first = engine.prompt([{ type: "text", text: "go" }]);
    await h.client.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk");
    engine.cancel();
    await expect(first).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(stops(h)).toHaveLength(1);

    // the next prompt waits for the native session to become idle (here: the late terminal)
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("fresh");
      s.complete();
    };
    h.client.clear();
    const readsBefore = h.host.callsOf("readSession").length;
    const second = engine.prompt([{ type: "text", text: "again" }]);
    await until(() => h.host.callsOf("readSession").length > readsBefore);
    expect(h.host.callsOf("sendPrompt")).toHaveLength(1);
    native.event("model.streaming", { kind: "text_delta", delta: "late of the old turn" }, { turnId: stuckTurn });
    native.complete("cancelled");
    await expect(second).resolves.toMatchObject({ stopReason: "end_turn" });
    const texts = h.client
      .updates(opened.sessionId)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []));
    expect(texts).toEqual(["fresh"]);
  });

  it("reports busy when the native turn never ends within the grace period", async () => {
    const h = setup({ cancelGraceMs: 50 });
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    h.host.script.onStop = () => undefined;
    const first = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    engine.cancel();
    await expect(first).resolves.toMatchObject({ stopReason: "cancelled" });
    await expect(engine.prompt([{ type: "text", text: "again" }])).rejects.toMatchObject({ code: "SESSION_BUSY" });
    expect(h.host.callsOf("sendPrompt")).toHaveLength(1);
  });

  it("cancels from an interaction failure exactly once and fails the prompt with its error", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    const { BridgeError } = await import("../../../src/util/errors.js");
    h.broker.onRequest = (call) => call.ctx.failTurn(new BridgeError("PROVIDER_HEADERS_UNSUPPORTED", "captcha needs the desktop app"));
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.raw({
        type: "providerRuntimeHeaders.request",
        request: { requestId: "r1", sessionId: s.id, turnId: s.currentTurnId, providerId: "p", reason: "model-request" },
      });
    };
    await expect(engine.prompt([{ type: "text", text: "go" }])).rejects.toMatchObject({
      code: "PROVIDER_HEADERS_UNSUPPORTED",
      message: "captcha needs the desktop app",
    });
    // the stop goes once the prompt's send has answered (the request came before that answer)
    await until(() => stops(h).length > 0, { what: "the stop" });
    expect(stops(h)).toHaveLength(1);
    const ctx = h.broker.handled[0]!.ctx;
    expect(ctx.signal.aborted).toBe(true);
    expect(ctx.turnId).toMatch(/^turn-/);
    // the host ends the stopped turn later; the next prompt works
    h.broker.onRequest = undefined;
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete();
    };
    await expect(engine.prompt([{ type: "text", text: "again" }])).resolves.toMatchObject({ stopReason: "end_turn" });
  });

  it("gives interactions the live turn's context and an aborted signal when no prompt runs", async () => {
    const h = setup();
    const { opened, engine, native } = await openSession(h);
    native.raw({
      type: "permission.request",
      request: { requestId: "idle", sessionId: opened.sessionId, toolCallId: "t", toolName: "Bash", options: [] },
    });
    expect(h.broker.handled[0]!.ctx.signal.aborted).toBe(true);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("tool.updated", { kind: "scheduled", toolCallId: "b1", toolName: "Bash", input: { command: "ls" } });
      s.raw({
        type: "permission.request",
        request: { requestId: "p1", sessionId: s.id, turnId: s.currentTurnId, toolCallId: "b1", toolName: "Bash", options: [] },
      });
    };
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.broker.handled.length === 2);
    const ctx = h.broker.handled[1]!.ctx;
    expect(ctx.signal.aborted).toBe(false);
    expect(ctx.describeToolCall("b1")).toMatchObject({ title: "Run `ls`", kind: "execute", rawInput: { command: "ls" } });
    await ctx.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "from broker" } });
    native.complete();
    await expect(turn).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(ctx.signal.aborted).toBe(true);
    expect(h.broker.withdrawals).toContainEqual({ sessionId: opened.sessionId, reason: "turn-end" });
  });
});
