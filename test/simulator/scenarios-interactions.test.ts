import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { answerPermission, nextUserInput, sessionRig, waitForCallLog, WS, type SessionRig } from "./support/session-helpers.js";
import { toolKinds } from "./support/envelopes.js";

async function respondCalls(rig: SessionRig, method: string): Promise<Any[]> {
  return (await rig.install.readCallLog()).filter((e) => e.kind === "call" && e.method === method);
}

describe("permission scenarios (docs/zcode-host.md §6.1, §12.2 #6-9, #18, #37)", () => {
  it("allow_once: the tool runs after the answer; the request carries the documented shape", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission");
    const { request, accepted } = await answerPermission(rig, "allow_once");
    expect(accepted).toBe(true);
    expect(request).toMatchObject({ sessionId: rig.sessionId, toolName: "Bash", riskLevel: "high", input: { command: "npm test" } });
    expect(request.options.map((o: Any) => [o.optionId, o.kind, o.response.decision])).toEqual([
      ["allow_once", "allow_once", "allow"],
      ["allow_always", "allow_always", "allow"],
      ["deny", "deny_once", "deny"],
    ]);
    expect(request.options[1].response.permissionUpdates[0]).toMatchObject({ type: "addRules", behavior: "allow" });
    const terminal = await rig.events.terminal(1);
    expect(terminal.payload.resultType).toBe("success");
    expect(toolKinds(rig.events.ofTurn(terminal.turnId))).toEqual(["scheduled", "started", "progress", "result"]);
    const types = rig.events.ofTurn(terminal.turnId).map((e) => e.type);
    expect(types).toContain("permission.requested");
    expect(types).toContain("permission.resolved");
    expect(await respondCalls(rig, "respondPermission")).toEqual([
      expect.objectContaining({
        service: "zcode-task",
        params: expect.objectContaining({ taskId: rig.sessionId, requestId: request.requestId, optionId: "allow_once" }),
      }),
    ]);
  });

  it("deny: the tool ends in an error and the turn still completes with success", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission");
    await answerPermission(rig, "deny");
    const terminal = await rig.events.terminal(1);
    const errors = rig.events.ofTurn(terminal.turnId).filter((e) => e.type === "tool.updated" && e.payload.kind === "error");
    expect(errors[0].payload.error.type).toBe("permission_denied");
    expect(terminal.payload).toMatchObject({ resultType: "success", response: "I did not run the command." });
  });

  it("an unknown optionId rejects (202); unknown or answered requestIds return false", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission");
    const hit = await rig.events.waitFor((e) => e.type === "permission.request");
    const ask = (optionId: string, requestId = hit.request.requestId) =>
      rig.conn.task.respondPermission({ taskId: rig.sessionId, requestId, optionId });
    await expect(ask("allow_everything")).rejects.toMatchObject({ message: "Unknown permission option: allow_everything" });
    expect(await ask("allow_once", "perm_unknown")).toBe(false);
    expect(await ask("deny")).toBe(true);
    expect(await ask("allow_once")).toBe(false);
    await rig.events.terminal(1);
  });

  it("allow_always records a rule: permission-always asks once, and later Bash calls in the session do not ask", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission-always");
    await answerPermission(rig, "allow_always");
    const first = await rig.events.terminal(1);
    expect(rig.events.events.filter((e) => e.type === "permission.request")).toHaveLength(1);
    expect(toolKinds(rig.events.ofTurn(first.turnId)).filter((k) => k === "result")).toHaveLength(2);
    await rig.prompt("sim:permission");
    await rig.events.terminal(2);
    expect(rig.events.events.filter((e) => e.type === "permission.request")).toHaveLength(1);
  });

  it("permission-always with allow_once asks twice", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission-always");
    await answerPermission(rig, "allow_once", 1);
    await answerPermission(rig, "allow_once", 2);
    await rig.events.terminal(1);
    expect((await respondCalls(rig, "respondPermission")).map((c) => c.params.optionId)).toEqual(["allow_once", "allow_once"]);
  });

  it("yolo mode runs tools without asking", async () => {
    const rig = await sessionRig({ create: { mode: "yolo" } });
    await rig.prompt("sim:permission");
    const terminal = await rig.events.terminal(1);
    expect(rig.events.events.some((e) => e.type === "permission.request")).toBe(false);
    expect(terminal.payload.response).toBe("The command ran.");
  });

  it("permission-reannounce: the same requestId 3 times until answered; one answer suffices", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission-reannounce interval=40");
    const hits = await rig.events.waitForCount((e) => e.type === "permission.request", 3);
    expect(new Set(hits.map((e) => e.request.requestId)).size).toBe(1);
    expect(
      await rig.conn.task.respondPermission({ taskId: rig.sessionId, requestId: hits[0].request.requestId, optionId: "allow_once" }),
    ).toBe(true);
    await rig.events.terminal(1);
    expect(rig.events.events.filter((e) => e.type === "permission.request")).toHaveLength(3);
  });

  it("permission-no-deny offers only allow options; cancel ends the turn as cancelled", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission-no-deny");
    const hit = await rig.events.waitFor((e) => e.type === "permission.request");
    expect(hit.request.options.every((o: Any) => o.response.decision === "allow")).toBe(true);
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId });
    expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
  });

  it("permission-zero-options: options is empty; no answer is accepted; cancel ends it", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission-zero-options");
    const hit = await rig.events.waitFor((e) => e.type === "permission.request");
    expect(hit.request.options).toEqual([]);
    await expect(
      rig.conn.task.respondPermission({ taskId: rig.sessionId, requestId: hit.request.requestId, optionId: "deny" }),
    ).rejects.toThrow(/Unknown permission option/);
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId });
    expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
  });

  it("cancel during a pending permission: the snapshot shows it pending; after stop it is closed (false) and the turn is cancelled", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:permission");
    const hit = await rig.events.waitFor((e) => e.type === "permission.request");
    const pending = await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId });
    expect(pending.projection.pendingPermissions.map((p: Any) => p.requestId)).toEqual([hit.request.requestId]);
    expect(pending.runtime.pendingRequestIds).toEqual([hit.request.requestId]);
    expect(pending.session.status).toBe("waiting");
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId });
    expect(await rig.conn.task.respondPermission({ taskId: rig.sessionId, requestId: hit.request.requestId, optionId: "deny" })).toBe(
      false,
    );
    expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "call" && e.method === "stopGeneration")).toHaveLength(1);
  });
});

describe("plan approval (docs/zcode-host.md §6.3, §12.2 #10-12)", () => {
  async function modeEvents(rig: SessionRig): Promise<Any[]> {
    return rig.events.sessionEvents().filter((e) => e.type === "session.updated" && e.payload.mode);
  }

  it("plan-permission allow: back to the pre-plan mode with session.updated, state.updated and a snapshot", async () => {
    const rig = await sessionRig();
    await rig.conn.agent.setMode({ workspacePath: WS, sessionId: rig.sessionId, mode: "edit" });
    await rig.prompt("sim:plan-permission");
    const { request } = await answerPermission(rig, "allow-plan");
    expect(request).toMatchObject({ toolName: "ExitPlanMode", input: { plan: expect.stringContaining("# Proposed plan") } });
    expect(request.options.map((o: Any) => o.optionId)).toEqual(["allow-plan", "deny-plan"]);
    await rig.events.terminal(1);
    const changes = await modeEvents(rig);
    expect(changes.at(-1).payload).toMatchObject({ mode: "edit", previousMode: "plan", source: "tool" });
    expect(changes.at(-1).payload.toolCallId).toBe(request.toolCallId);
    expect(rig.events.events.some((e) => e.type === "state.updated" && e.notification.patch.mode?.current === "edit")).toBe(true);
    expect(rig.events.events.filter((e) => e.type === "snapshot").at(-1).snapshot.settings.mode.current).toBe("edit");
  });

  it("plan-permission deny: stays in plan", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:plan-permission");
    await answerPermission(rig, "deny-plan");
    const terminal = await rig.events.terminal(1);
    expect(terminal.payload.response).toContain("Staying in plan mode");
    expect((await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId })).session.mode).toBe("plan");
  });

  it("plan-userinput accept with the content convention: leaves plan for build", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:plan-userinput");
    const request = await nextUserInput(rig);
    expect(request).toMatchObject({
      toolName: "ExitPlanMode",
      schema: { interaction: "plan_approval" },
      input: { plan: expect.any(String) },
    });
    expect(request.questions).toHaveLength(1);
    const question = request.questions[0].question;
    const content = { answer_0: "approve", answer: "approve", answers: { [question]: ["approve"] } };
    expect(await rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "accept", content })).toBe(
      true,
    );
    await rig.events.terminal(1);
    expect((await modeEvents(rig)).at(-1).payload).toMatchObject({ mode: "build", previousMode: "plan" });
    expect(rig.events.events.some((e) => e.type === "userInput.response" && e.requestId === request.requestId)).toBe(true);
    const call = (await respondCalls(rig, "respondElicitation"))[0];
    expect(call.params).toEqual({ taskId: rig.sessionId, requestId: request.requestId, action: "accept", content });
  });

  it("plan-userinput decline: stays in plan; an invalid action rejects", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:plan-userinput");
    const request = await nextUserInput(rig);
    await expect(
      rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "maybe" }),
    ).rejects.toThrow(/Invalid elicitation action/);
    expect(await rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "decline" })).toBe(true);
    await rig.events.terminal(1);
    expect((await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId })).session.mode).toBe("plan");
  });

  it.each(["permission", "userinput"])("plan-missing form=%s carries no input.plan", async (form) => {
    const rig = await sessionRig();
    await rig.prompt(`sim:plan-missing form=${form}`);
    const hit = await rig.events.waitFor((e) => e.type === (form === "permission" ? "permission.request" : "userInput.request"));
    expect(hit.request.toolName).toBe("ExitPlanMode");
    expect(hit.request.input).toEqual({});
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId });
    await rig.events.terminal(1);
  });

  it("mode-plan: the host switches the session to plan mid-turn", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:mode-plan");
    await rig.events.terminal(1);
    const change = (await modeEvents(rig))[0];
    expect(change.payload).toMatchObject({ mode: "plan", previousMode: "build", source: "tool" });
    expect(rig.events.events.some((e) => e.type === "state.updated" && e.notification.patch.mode?.current === "plan")).toBe(true);
  });
});

describe("questions and provider headers (docs/zcode-host.md §6.2, §6.4)", () => {
  it("questions: two questions, the second multi-select; the answer is echoed in the reply", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:questions");
    const request = await nextUserInput(rig);
    expect(request.toolName).toBe("AskUserQuestion");
    expect(request.questions.map((q: Any) => Boolean(q.multiSelect))).toEqual([false, true]);
    expect(request.schema).toBeUndefined();
    const content = {
      answer_0: "vitest",
      answer_1: ["auth", "db"],
      answers: { "Which test runner?": ["vitest"], "Which files should I test?": ["auth", "db"] },
    };
    await rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "accept", content });
    expect((await rig.events.terminal(1)).payload.response).toBe("Runner: vitest; files: auth, db.");
  });

  it("questions declined", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:questions");
    const request = await nextUserInput(rig);
    await rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "decline" });
    expect((await rig.events.terminal(1)).payload.response).toBe("No answers given.");
  });

  it("provider-headers: headersApplied false keeps the turn blocked until stopGeneration", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:provider-headers");
    const hit = await rig.events.waitFor((e) => e.type === "providerRuntimeHeaders.request");
    expect(hit.request).toMatchObject({
      providerId: "builtin:bigmodel-start-plan",
      reason: "model-request",
      workspace: { workspacePath: WS },
      modelRef: { providerId: "builtin:bigmodel-start-plan" },
    });
    const response = { headersApplied: false, errorMessage: "Headless captcha unsupported" };
    expect(
      await rig.conn.agent.respondProviderRuntimeHeaders({
        workspacePath: WS,
        sessionId: rig.sessionId,
        requestId: hit.request.requestId,
        response,
      }),
    ).toBe(true);
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId });
    expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
    const calls = await waitForCallLog(
      rig.install,
      (log) => log.some((e) => e.method === "respondProviderRuntimeHeaders"),
      "the headers answer",
    );
    expect(calls.find((e) => e.method === "respondProviderRuntimeHeaders")?.params).toMatchObject({
      requestId: hit.request.requestId,
      response,
    });
  });

  it("provider-headers: headersApplied false without a stop fails the turn after failAfter ms", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:provider-headers failAfter=50");
    const hit = await rig.events.waitFor((e) => e.type === "providerRuntimeHeaders.request");
    await rig.conn.agent.respondProviderRuntimeHeaders({
      workspacePath: WS,
      sessionId: rig.sessionId,
      requestId: hit.request.requestId,
      response: { headersApplied: false, errorMessage: "no captcha" },
    });
    expect(await rig.events.terminal(1)).toMatchObject({
      type: "turn.failed",
      payload: { error: { type: "provider_headers_unavailable", message: "no captcha" } },
    });
  });

  it("provider-headers: headersApplied true continues the turn", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:provider-headers");
    const hit = await rig.events.waitFor((e) => e.type === "providerRuntimeHeaders.request");
    await rig.conn.agent.respondProviderRuntimeHeaders({
      workspacePath: WS,
      sessionId: rig.sessionId,
      requestId: hit.request.requestId,
      response: { headersApplied: true, requestAuth: { headers: { "x-test": "1" } } },
    });
    expect((await rig.events.terminal(1)).payload).toMatchObject({ resultType: "success", response: "Headers applied; answering." });
  });
});
