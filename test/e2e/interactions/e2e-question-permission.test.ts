/**
 * End to end through the built CLI: one single-select AskUserQuestion question (a test-only
 * scenario added to the simulated install, support/question-scenarios.ts) in a client without
 * elicitation (Paseo) is asked as a permission whose options are the answers (adr/0009); a
 * multi-select one is still declined with INTERACTION_UNSUPPORTED; a form-capable client still
 * gets the form.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SimInstall } from "../../../fixtures/sim-install.js";
import { addQuestionScenarios } from "../../support/question-scenarios.js";
import {
  type BridgeProcess,
  FORM_CLIENT,
  NO_ELICITATION_CLIENT,
  stopsFor,
  choose,
  useBridge,
  waitForLog,
} from "../../support/bridge-process.js";
import { answersFor } from "../answers.js";

const QUESTION = "Which test runner should I use?";

function text(bridge: BridgeProcess, sessionId: string): string {
  return bridge
    .sessionUpdates(sessionId)
    .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
    .join("");
}

describe("one question, client without elicitation (Paseo): a permission whose options are the answers", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(NO_ELICITATION_CLIENT, (s, b) => {
    sim = s;
    bridge = b;
  });
  // the host starts with the first session, so the scenario is in place before it loads
  beforeAll(() => addQuestionScenarios(sim));
  afterAll(() => {
    expect(bridge.agentMethods()).not.toContain("elicitation/create");
  });

  it("the answers as distinct allow_once options plus a reject; the choice → respondElicitation accept with the native content", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("node");
    expect((await bridge.promptOutcome(sessionId, "sim:question")).response?.stopReason).toBe("end_turn");
    const asked = bridge.permissionRequests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.options).toEqual([
      { optionId: "vitest", name: "Vitest", kind: "allow_once" },
      { optionId: "node", name: "node:test", kind: "allow_once" },
      { optionId: "jest", name: "Jest", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    expect(asked[0]!.toolCall).toMatchObject({ title: QUESTION });
    expect(JSON.stringify(asked[0]!.toolCall.content)).toContain("Fast, ESM-first");
    // the client saw the AskUserQuestion tool call before the question about it
    const wire = bridge.transcript.agentMessages();
    const toolCallId = asked[0]!.toolCall.toolCallId;
    const shown = wire.findIndex((m) => m.method === "session/update" && m.params.update.toolCallId === toolCallId);
    const question = wire.findIndex((m) => m.method === "session/request_permission" && m.params.toolCall.toolCallId === toolCallId);
    expect(shown).toBeGreaterThanOrEqual(0);
    expect(shown).toBeLessThan(question);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([
      expect.objectContaining({
        taskId: sessionId,
        action: "accept",
        content: { answer_0: "node", answer: "node", answers: { [QUESTION]: ["node"] } },
      }),
    ]);
    expect(stopsFor(log, sessionId)).toEqual([]);
    expect(text(bridge, sessionId)).toContain('Runner: "node".');
  });

  it.each([
    ["reject", choose("reject")],
    ["cancelled (the client dismissed it)", async () => ({ outcome: { outcome: "cancelled" as const } })],
    ["an option that was not offered", choose("mocha")],
  ])("%s → a real decline to ZCode, the turn goes on", async (_name, answer) => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = answer;
    expect((await bridge.promptOutcome(sessionId, "sim:question")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    const answers = answersFor(log, "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "decline" })]);
    expect(answers[0]).not.toHaveProperty("content");
    expect(text(bridge, sessionId)).toContain("No answer given.");
  });

  it("interrupt while asked: cancelled, ZCode's question answered once, one stop, the next prompt works", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = () => new Promise(() => {}); // the user does not answer; the interrupt does
    const turn = bridge.promptOutcome(sessionId, "sim:question");
    await bridge.waitFor(() => bridge.permissionRequests.length > before, "the question");
    await bridge.interrupt(sessionId);
    expect((await turn).response?.stopReason).toBe("cancelled");
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    const answers = answersFor(log, "respondElicitation", sessionId);
    expect(answers).toHaveLength(1);
    expect(["cancel", "decline"]).toContain(answers[0]!.action);
    expect(stopsFor(log, sessionId)).toHaveLength(1);
  });

  it("a multi-select question cannot be a permission: a real decline, INTERACTION_UNSUPPORTED, nobody asked", async () => {
    const sessionId = await bridge.newSession();
    const asked = bridge.permissionRequests.length;
    const outcome = await bridge.promptOutcome(sessionId, "sim:question multi=1");
    expect(outcome.error?.data).toMatchObject({ code: "INTERACTION_UNSUPPORTED" });
    expect(outcome.error?.message).toContain("multi-select");
    expect(bridge.permissionRequests.length).toBe(asked);
    await waitForLog(sim, (log) => stopsFor(log, sessionId).length === 1, "the stop");
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
    const answers = answersFor(await sim.readCallLog(), "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "decline" })]);
  });
});

describe("one question, form-capable client: still a form", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(FORM_CLIENT, (s, b) => {
    sim = s;
    bridge = b;
  });
  beforeAll(() => addQuestionScenarios(sim));

  it("one required single-select property; accept → the native content, no permission request", async () => {
    const sessionId = await bridge.newSession();
    bridge.onElicitation = async (params) => {
      const schema = (params as { requestedSchema: Record<string, any> }).requestedSchema;
      expect(schema.required).toEqual(["answer_0"]);
      expect(schema.properties.answer_0.oneOf.map((o: { const: string }) => o.const)).toEqual(["vitest", "node", "jest"]);
      return { action: "accept", content: { answer_0: "vitest" } };
    };
    expect((await bridge.promptOutcome(sessionId, "sim:question")).response?.stopReason).toBe("end_turn");
    expect(bridge.permissionRequests).toEqual([]);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([
      expect.objectContaining({ action: "accept", content: { answer_0: "vitest", answer: "vitest", answers: { [QUESTION]: ["vitest"] } } }),
    ]);
  });

  it("a multi-select question is a form too (array property)", async () => {
    const sessionId = await bridge.newSession();
    bridge.onElicitation = async () => ({ action: "accept", content: { answer_0: ["vitest", "jest"] } });
    expect((await bridge.promptOutcome(sessionId, "sim:question multi=1")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([
      expect.objectContaining({ action: "accept", content: expect.objectContaining({ answer_0: ["vitest", "jest"] }) }),
    ]);
  });
});
