import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { NO_ELICITATION } from "../../../support/fake-client.js";
import { until } from "../../../support/until.js";
import { makeContext, PLAN_PERMISSION, PLAN_USER_INPUT, settle, TURNS } from "./support/context.js";

// grace 0: a withdrawn client request is cancelled at once (the cancel grace has its own tests, cancel-grace.test.ts)
const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: 0 });
const PLAN = "# Proposed plan\n\n1. Change it";

describe("plan approval, permission form (ExitPlanMode), form-capable client", () => {
  it("publishes the plan as a switch_mode tool call first, then asks with a form", async () => {
    const t = makeContext();
    broker().handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.elicitations.length === 1, { ...TURNS, what: "elicitation" });
    expect(t.client.order).toEqual(["update:tool_call", "elicitation"]);
    expect(t.updates[0]).toEqual({
      sessionUpdate: "tool_call",
      toolCallId: "exit-plan-tool",
      title: "Approve the plan",
      kind: "switch_mode",
      status: "pending",
      content: [{ type: "content", content: { type: "text", text: PLAN } }],
      rawInput: { plan: PLAN },
    });
    const params = t.client.elicitations[0]!.params as Record<string, unknown>;
    expect(params).toMatchObject({ sessionId: "ses_1", toolCallId: "exit-plan-tool", mode: "form" });
    expect(String(params.message)).toContain(PLAN);
    expect(params.requestedSchema).toEqual({
      type: "object",
      properties: {
        decision: {
          type: "string",
          title: "Plan",
          description: expect.any(String),
          oneOf: [
            { const: "allow-plan", title: "Approve" },
            { const: "deny-plan", title: "Reject" },
          ],
        },
      },
      required: ["decision"],
    });
    expect(t.client.permissions).toHaveLength(0);
  });

  it("updates the engine's known tool call instead of creating a second one", async () => {
    const t = makeContext();
    t.known.set("exit-plan-tool", { title: "ExitPlanMode", kind: "other" });
    broker().handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    expect(t.updates[0]).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: "exit-plan-tool", kind: "switch_mode" });
  });

  it.each([
    ["accept approve", { action: "accept", content: { decision: "allow-plan" } }, "allow-plan"],
    ["accept reject", { action: "accept", content: { decision: "deny-plan" } }, "deny-plan"],
    ["accept unknown", { action: "accept", content: { decision: "allow-everything" } }, "deny-plan"],
    ["accept without content", { action: "accept" }, "deny-plan"],
    ["decline", { action: "decline" }, "deny-plan"],
    ["cancel", { action: "cancel" }, "deny-plan"],
  ])("%s → respondPermission %s", async (_name, response, expected) => {
    const t = makeContext();
    broker().handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve(response);
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    await settle();
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "permission-plan", optionId: expected, workspacePath: "/w" }]);
  });

  it("cancel while pending → deny once, the form request is cancelled", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    await b.withdrawAll("ses_1", "cancel");
    expect(t.client.elicitations[0]!.signal.aborted).toBe(true);
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "permission-plan", optionId: "deny-plan", workspacePath: "/w" }]);
  });

  it("missing plan → never allow: deny without asking, and the user is told", async () => {
    const t = makeContext();
    broker().handlePermission({ ...PLAN_PERMISSION, input: {} }, t.ctx);
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    expect(t.host.permissionAnswers()[0]!.optionId).toBe("deny-plan");
    expect(t.client.elicitations).toHaveLength(0);
    expect(t.client.permissions).toHaveLength(0);
    expect(t.updates[0]).toMatchObject({ sessionUpdate: "agent_message_chunk" });
  });

  it("missing plan and no deny option → no answer, the turn fails", async () => {
    const t = makeContext();
    broker().handlePermission({ ...PLAN_PERMISSION, input: { plan: "   " }, options: [PLAN_PERMISSION.options[0]] }, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    await settle();
    expect(t.host.records).toEqual([]);
  });
});

describe("plan approval, permission form, client without elicitation (Paseo)", () => {
  it("asks session/request_permission on a switch_mode tool call with the native options", async () => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    broker().handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.order).toEqual(["update:tool_call", "permission"]);
    const params = t.client.permissions[0]!.params;
    expect(params.toolCall).toEqual({
      toolCallId: "exit-plan-tool",
      title: "Approve the plan",
      kind: "switch_mode",
      content: [{ type: "content", content: { type: "text", text: PLAN } }],
      rawInput: { plan: PLAN },
    });
    expect(params.options).toEqual([
      { optionId: "allow-plan", name: "Approve", kind: "allow_once" },
      { optionId: "deny-plan", name: "Reject", kind: "reject_once" },
    ]);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "allow-plan" } });
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    expect(t.host.permissionAnswers()[0]!.optionId).toBe("allow-plan");
  });

  it("an unknown option or a cancel never approves", async () => {
    for (const outcome of [{ outcome: "selected", optionId: "approve" }, { outcome: "cancelled" }]) {
      const t = makeContext({ capabilities: NO_ELICITATION });
      broker().handlePermission(PLAN_PERMISSION, t.ctx);
      await until(() => t.client.permissions.length === 1, TURNS);
      t.client.permissions[0]!.resolve({ outcome } as never);
      await until(() => t.host.permissionAnswers().length === 1, TURNS);
      expect(t.host.permissionAnswers()[0]!.optionId).toBe("deny-plan");
    }
  });

  it("treats `elicitation: {}` as no form support", async () => {
    const t = makeContext({ capabilities: { elicitation: {} } });
    broker().handlePermission(PLAN_PERMISSION, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.elicitations).toHaveLength(0);
  });
});

describe("plan approval, user-input form (schema.interaction plan_approval)", () => {
  const ACCEPT = {
    requestId: "user-input-plan",
    action: "accept",
    content: { answer_0: "approve", answer: "approve", answers: { "Review this implementation plan.": ["approve"] } },
    workspacePath: "/w",
  };

  it("form client: plan first, then the question form; accept → respondElicitation with the content convention", async () => {
    const t = makeContext();
    const b = broker();
    b.handleUserInput(PLAN_USER_INPUT, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    expect(t.client.order).toEqual(["update:tool_call", "elicitation"]);
    const params = t.client.elicitations[0]!.params as Record<string, unknown>;
    expect(params.toolCallId).toBe("exit-plan-tool");
    expect(params.requestedSchema).toEqual({
      type: "object",
      properties: {
        answer_0: {
          type: "string",
          title: "Plan",
          description: "Review this implementation plan.",
          oneOf: [{ const: "approve", title: "Approve", description: "Exit plan mode and start implementation." }],
        },
      },
      required: ["answer_0"],
    });
    t.client.elicitations[0]!.resolve({ action: "accept", content: { answer_0: "approve" } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.records[0]).toMatchObject({ name: "respondStructuredInput", sessionId: "ses_1" });
    expect(t.host.elicitationAnswers()).toEqual([ACCEPT]);
    expect(b.pendingCount()).toBe(0);
  });

  it.each([
    ["decline", { action: "decline" }, "decline"],
    ["cancel", { action: "cancel" }, "cancel"],
    ["unknown value", { action: "accept", content: { answer_0: "approve-and-more" } }, "decline"],
    ["label instead of value", { action: "accept", content: { answer_0: "Approve" } }, "decline"],
  ])("form client %s → %s", async (_name, response, action) => {
    const t = makeContext();
    broker().handleUserInput(PLAN_USER_INPUT, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve(response);
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "user-input-plan", action, workspacePath: "/w" }]);
  });

  it("client without elicitation: a switch_mode permission with the native choices and a reject", async () => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    broker().handleUserInput(PLAN_USER_INPUT, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    const params = t.client.permissions[0]!.params;
    expect(params.toolCall).toMatchObject({ toolCallId: "exit-plan-tool", kind: "switch_mode", rawInput: { plan: PLAN } });
    expect(params.options).toEqual([
      { optionId: "approve", name: "Approve", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "approve" } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([ACCEPT]);
    expect(t.failures).toEqual([]);
  });

  it.each([
    ["reject", { outcome: "selected", optionId: "reject" }, "decline"],
    ["unknown id", { outcome: "selected", optionId: "yes-please" }, "decline"],
    ["cancelled", { outcome: "cancelled" }, "cancel"],
  ])("client without elicitation %s → %s", async (_name, outcome, action) => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    broker().handleUserInput(PLAN_USER_INPUT, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.client.permissions[0]!.resolve({ outcome } as never);
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "user-input-plan", action, workspacePath: "/w" }]);
  });

  it("the synthetic reject id never collides with a native value", async () => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    const question = {
      ...PLAN_USER_INPUT.questions[0]!,
      options: [
        { value: "approve", label: "Approve" },
        { value: "reject", label: "Keep planning" },
      ],
    };
    broker().handleUserInput({ ...PLAN_USER_INPUT, questions: [question] }, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.permissions[0]!.params.options.map((o) => o.optionId)).toEqual(["approve", "reject", "reject_"]);
  });

  it("missing plan → decline without asking", async () => {
    for (const capabilities of [undefined, NO_ELICITATION]) {
      const t = makeContext(capabilities ? { capabilities } : {});
      broker().handleUserInput({ ...PLAN_USER_INPUT, input: {} }, t.ctx);
      await until(() => t.host.elicitationAnswers().length === 1, TURNS);
      expect(t.host.elicitationAnswers()[0]!.action).toBe("decline");
      expect(t.client.elicitations).toHaveLength(0);
      expect(t.client.permissions).toHaveLength(0);
    }
  });

  it("withdrawn → respondElicitation cancel once; host exit → nothing", async () => {
    const t = makeContext();
    const b = broker();
    b.handleUserInput(PLAN_USER_INPUT, t.ctx);
    b.handleUserInput({ ...PLAN_USER_INPUT, requestId: "other" }, t.ctx);
    await until(() => t.client.elicitations.length === 2, TURNS);
    await b.withdrawAll("ses_1", "disconnect");
    await b.withdrawAll("ses_1", "cancel");
    expect(t.host.elicitationAnswers().map((a) => [a.requestId, a.action])).toEqual([
      ["user-input-plan", "cancel"],
      ["other", "cancel"],
    ]);

    const u = makeContext();
    const c = broker();
    c.handleUserInput(PLAN_USER_INPUT, u.ctx);
    await until(() => u.client.elicitations.length === 1, TURNS);
    await c.withdrawAll("ses_1", "host-exit");
    await settle();
    expect(u.host.records).toEqual([]);
    expect(u.client.elicitations[0]!.signal.aborted).toBe(true);
  });
});
