/**
 * End to end through the built CLI and the simulated install: plan approval in both native
 * forms and structured questions, with a form-capable client and with a client that
 * advertises no elicitation (Paseo).
 */
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import type { SimInstall } from "../../../fixtures/sim-install.js";
import {
  type BridgeProcess,
  FORM_CLIENT,
  NO_ELICITATION_CLIENT,
  stopsFor,
  choose,
  holdElicitation,
  useBridge,
  waitForLog,
} from "../../support/bridge-process.js";
import { answersFor } from "../answers.js";

const PLAN = "# Proposed plan\n\n1. Reproduce the failing test\n2. Fix the off-by-one error\n3. Run the suite";
const PLAN_ACCEPT = { answer_0: "approve", answer: "approve", answers: { "Review this implementation plan.": ["approve"] } };

function text(updates: SessionNotification["update"][]): string {
  return updates.flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [])).join("");
}

/** index on the wire of the first update that shows the plan markdown as a switch_mode tool call */
function planShownAt(bridge: BridgeProcess): number {
  return bridge.transcript.agentMessages().findIndex((m) => {
    const u = m.method === "session/update" ? m.params.update : undefined;
    return (
      u &&
      (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") &&
      u.kind === "switch_mode" &&
      JSON.stringify(u.content ?? []).includes("Fix the off-by-one error")
    );
  });
}

function wireIndex(bridge: BridgeProcess, method: string, from = 0): number {
  return bridge.transcript.agentMessages().findIndex((m, i) => i >= from && m.method === method);
}

describe("plan approval and questions end to end, form-capable client", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(FORM_CLIENT, (s, b) => {
    sim = s;
    bridge = b;
  });

  it("ExitPlanMode permission: plan published first, then a form; approve → respondPermission allow-plan, mode back to build", async () => {
    const sessionId = await bridge.newSession();
    const start = bridge.transcript.agentMessages().length;
    bridge.onElicitation = async (params) => {
      expect(params).toMatchObject({ sessionId, mode: "form" });
      const schema = (params as { requestedSchema: { properties: Record<string, { oneOf: Array<{ const: string }> }> } }).requestedSchema;
      expect(schema.properties.decision!.oneOf.map((o) => o.const)).toEqual(["allow-plan", "deny-plan"]);
      return { action: "accept", content: { decision: "allow-plan" } };
    };
    const outcome = await bridge.promptOutcome(sessionId, "sim:plan-permission");
    expect(outcome.response?.stopReason).toBe("end_turn");
    const shown = planShownAt(bridge);
    expect(shown).toBeGreaterThanOrEqual(start);
    expect(wireIndex(bridge, "elicitation/create", start)).toBeGreaterThan(shown);
    expect(wireIndex(bridge, "session/request_permission", start)).toBe(-1);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["allow-plan"]);
    expect(bridge.sessionUpdates(sessionId)).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "build" });
  });

  it("ExitPlanMode permission: decline → the native deny option", async () => {
    const sessionId = await bridge.newSession();
    bridge.onElicitation = async () => ({ action: "decline" });
    expect((await bridge.promptOutcome(sessionId, "sim:plan-permission")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny-plan"]);
    expect(text(bridge.sessionUpdates(sessionId))).toContain("Staying in plan mode.");
  });

  it("plan_approval user input: plan first, then the question form; accept → respondElicitation with the content convention", async () => {
    const sessionId = await bridge.newSession();
    const start = bridge.transcript.agentMessages().length;
    bridge.onElicitation = async () => ({ action: "accept", content: { answer_0: "approve" } });
    expect((await bridge.promptOutcome(sessionId, "sim:plan-userinput")).response?.stopReason).toBe("end_turn");
    expect(wireIndex(bridge, "elicitation/create", start)).toBeGreaterThan(planShownAt(bridge));
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([
      expect.objectContaining({ taskId: sessionId, action: "accept", content: PLAN_ACCEPT }),
    ]);
    expect(text(bridge.sessionUpdates(sessionId))).toContain("Implementing the approved plan.");
  });

  it.each([
    ["permission", "respondPermission", { optionId: "deny-plan" }],
    ["userinput", "respondElicitation", { action: "decline" }],
  ])("plan missing (form=%s): never approved, nobody asked, the user told", async (form, method, expected) => {
    const sessionId = await bridge.newSession();
    const asked = bridge.elicitationRequests.length + bridge.permissionRequests.length;
    bridge.onElicitation = async () => ({ action: "accept", content: { decision: "allow-plan", answer_0: "approve" } });
    expect((await bridge.promptOutcome(sessionId, `sim:plan-missing form=${form}`)).response?.stopReason).toBe("end_turn");
    expect(bridge.elicitationRequests.length + bridge.permissionRequests.length).toBe(asked);
    const log = await sim.readCallLog();
    expect(answersFor(log, method as "respondPermission" | "respondElicitation", sessionId)).toEqual([expect.objectContaining(expected)]);
    expect(text(bridge.sessionUpdates(sessionId))).toContain("sent no plan text");
  });

  it("AskUserQuestion, two questions, the second multi-select: one form, native content answer_i / answers", async () => {
    const sessionId = await bridge.newSession();
    bridge.onElicitation = async (params) => {
      const schema = (params as { requestedSchema: Record<string, any> }).requestedSchema;
      expect(schema.required).toEqual(["answer_0", "answer_1"]);
      expect(schema.properties.answer_0.oneOf.map((o: { const: string }) => o.const)).toEqual(["vitest", "node"]);
      expect(schema.properties.answer_1).toMatchObject({ type: "array", minItems: 1 });
      expect(schema.properties.answer_1.items.anyOf.map((o: { const: string }) => o.const)).toEqual(["auth", "user", "db"]);
      return { action: "accept", content: { answer_0: "vitest", answer_1: ["auth", "db"] } };
    };
    expect((await bridge.promptOutcome(sessionId, "sim:questions")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([
      expect.objectContaining({
        action: "accept",
        content: {
          answer_0: "vitest",
          answer_1: ["auth", "db"],
          answers: { "Which test runner?": ["vitest"], "Which files should I test?": ["auth", "db"] },
        },
      }),
    ]);
    expect(text(bridge.sessionUpdates(sessionId))).toContain("Runner: vitest; files: auth, db.");
  });

  it.each([
    ["decline", { action: "decline" }, "decline"],
    ["a value that was not offered", { action: "accept", content: { answer_0: "jest", answer_1: ["auth"] } }, "decline"],
  ] as const)("questions: %s → respondElicitation %s, no content", async (_name, response, action) => {
    const sessionId = await bridge.newSession();
    bridge.onElicitation = async () => response;
    expect((await bridge.promptOutcome(sessionId, "sim:questions")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    const answers = answersFor(log, "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action })]);
    expect(answers[0]).not.toHaveProperty("content");
  });

  it(
    "cancel while the form is open, a client that does not close it: " +
      "$/cancel_request (after the grace), respondElicitation cancel once, one stop",
    async () => {
      const sessionId = await bridge.newSession();
      const before = bridge.elicitationRequests.length;
      bridge.onElicitation = holdElicitation;
      const turn = bridge.promptOutcome(sessionId, "sim:questions");
      await bridge.waitFor(() => bridge.elicitationRequests.length > before, "the elicitation");
      await bridge.cancel(sessionId);
      expect((await turn).response?.stopReason).toBe("cancelled");
      await bridge.waitFor(() => bridge.agentMethods().includes("$/cancel_request"), "$/cancel_request");
      expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
      const log = await sim.readCallLog();
      expect(answersFor(log, "respondElicitation", sessionId).map((c) => c.action)).toEqual(["cancel"]);
      expect(stopsFor(log, sessionId)).toHaveLength(1);
    },
  );
});

describe("plan approval and questions end to end, client without elicitation (Paseo)", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(NO_ELICITATION_CLIENT, (s, b) => {
    sim = s;
    bridge = b;
  });

  afterAll(() => {
    expect(bridge.elicitationRequests).toEqual([]);
    expect(bridge.agentMethods()).not.toContain("elicitation/create");
  });

  it("ExitPlanMode permission → a switch_mode permission with the plan and the native options; approve → allow-plan", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("allow-plan");
    expect((await bridge.promptOutcome(sessionId, "sim:plan-permission")).response?.stopReason).toBe("end_turn");
    const asked = bridge.permissionRequests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.toolCall).toMatchObject({
      kind: "switch_mode",
      content: [{ type: "content", content: { type: "text", text: PLAN } }],
      rawInput: { plan: PLAN },
    });
    expect(asked[0]!.options).toEqual([
      { optionId: "allow-plan", name: "Approve", kind: "allow_once" },
      { optionId: "deny-plan", name: "Reject", kind: "reject_once" },
    ]);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["allow-plan"]);
    expect(bridge.sessionUpdates(sessionId)).toContainEqual({ sessionUpdate: "current_mode_update", currentModeId: "build" });
  });

  it("ExitPlanMode permission: reject → deny-plan", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = choose("deny-plan");
    expect((await bridge.promptOutcome(sessionId, "sim:plan-permission")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny-plan"]);
  });

  it("plan_approval user input → switch_mode permission (native choice + reject); approve → accept with the content convention", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("approve");
    expect((await bridge.promptOutcome(sessionId, "sim:plan-userinput")).response?.stopReason).toBe("end_turn");
    const asked = bridge.permissionRequests.slice(before);
    expect(asked[0]!.toolCall).toMatchObject({ kind: "switch_mode", rawInput: { plan: PLAN } });
    expect(asked[0]!.options).toEqual([
      { optionId: "approve", name: "Approve", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([expect.objectContaining({ action: "accept", content: PLAN_ACCEPT })]);
  });

  it("plan_approval user input: reject → decline", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = choose("reject");
    expect((await bridge.promptOutcome(sessionId, "sim:plan-userinput")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId).map((c) => c.action)).toEqual(["decline"]);
  });

  it.each([
    ["permission", "respondPermission", { optionId: "deny-plan" }],
    ["userinput", "respondElicitation", { action: "decline" }],
  ])("plan missing (form=%s): never approved, nobody asked", async (form, method, expected) => {
    const sessionId = await bridge.newSession();
    const asked = bridge.permissionRequests.length;
    bridge.onPermission = choose("allow-plan");
    expect((await bridge.promptOutcome(sessionId, `sim:plan-missing form=${form}`)).response?.stopReason).toBe("end_turn");
    expect(bridge.permissionRequests.length).toBe(asked);
    const log = await sim.readCallLog();
    expect(answersFor(log, method as "respondPermission" | "respondElicitation", sessionId)).toEqual([expect.objectContaining(expected)]);
  });

  it("questions: a real decline to the host, the prompt fails INTERACTION_UNSUPPORTED naming elicitation.form", async () => {
    const sessionId = await bridge.newSession();
    const asked = bridge.permissionRequests.length;
    const outcome = await bridge.promptOutcome(sessionId, "sim:questions");
    expect(outcome.error?.data).toMatchObject({ code: "INTERACTION_UNSUPPORTED" });
    expect(outcome.error?.message).toContain("elicitation.form");
    expect(bridge.permissionRequests.length).toBe(asked);
    await waitForLog(sim, (log) => stopsFor(log, sessionId).length === 1, "the stop");
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    const answers = answersFor(log, "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "decline" })]);
    expect(answers[0]).not.toHaveProperty("content");
    expect(stopsFor(log, sessionId)).toHaveLength(1);
  });
});
