/**
 * One single-select question in a client without form elicitation → `session/request_permission`
 * whose options are the choices plus a reject (adr/0009, choice-permission.ts); several questions
 * or a multi-select one → a real decline and INTERACTION_UNSUPPORTED.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { NO_ELICITATION } from "../../../support/fake-client.js";
import { until } from "../../../support/until.js";
import { makeContext, QUESTIONS, settle, TURNS } from "./support/context.js";

const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: 0 });

const QUESTION = "Which test runner should I use?";
const ONE = {
  requestId: "q_2",
  sessionId: "ses_1",
  turnId: "turn_1",
  toolCallId: "call_9",
  toolName: "AskUserQuestion",
  prompt: QUESTION,
  input: { questions: 1 },
  questions: [
    {
      question: QUESTION,
      header: "Runner",
      options: [
        { value: "vitest", label: "Vitest", description: "Fast, ESM-first" },
        { value: "node", label: "node:test" },
        { value: "reject", label: "Reject them all" },
      ],
    },
  ],
};

async function asked(request: unknown = ONE) {
  const t = makeContext({ capabilities: NO_ELICITATION });
  t.known.set("call_9", { title: "AskUserQuestion", kind: "other" });
  const b = broker();
  b.handleUserInput(request, t.ctx);
  await until(() => t.client.permissions.length === 1, { ...TURNS, what: "the permission request" });
  return { t, b, permission: t.client.permissions[0]! };
}

describe("a single-select question as a permission (client without elicitation.form)", () => {
  it("options are the choices (allow_once, distinct ids = native values) plus a reject that collides with none", async () => {
    const { t, permission } = await asked();
    expect(permission.params.sessionId).toBe("ses_1");
    expect(permission.params.options).toEqual([
      { optionId: "vitest", name: "Vitest", kind: "allow_once" },
      { optionId: "node", name: "node:test", kind: "allow_once" },
      { optionId: "reject", name: "Reject them all", kind: "allow_once" },
      { optionId: "reject_", name: "Reject", kind: "reject_once" },
    ]);
    expect(new Set(permission.params.options.map((o) => o.optionId)).size).toBe(4);
    expect(t.client.elicitations).toHaveLength(0);
  });

  it("the tool call is the AskUserQuestion call, titled with the question, the choices in its content; shown before asking", async () => {
    const { t, permission } = await asked();
    const call = permission.params.toolCall;
    expect(call).toMatchObject({ toolCallId: "call_9", title: QUESTION, kind: "other" });
    const text = (call.content?.[0] as { content: { text: string } }).content.text;
    expect(text).toContain("**Runner**");
    expect(text).toContain("- Vitest: Fast, ESM-first");
    expect(text).toContain("- node:test");
    expect(t.updates).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "call_9", status: "pending" }]);
  });

  it("a chosen answer → accept with the native content convention (answer_0, answer, answers)", async () => {
    const { t, b, permission } = await asked();
    permission.resolve({ outcome: { outcome: "selected", optionId: "node" } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([
      {
        requestId: "q_2",
        action: "accept",
        workspacePath: "/w",
        content: { answer_0: "node", answer: "node", answers: { [QUESTION]: ["node"] } },
      },
    ]);
    expect(t.failures).toEqual([]);
    expect(b.pendingCount()).toBe(0);
  });

  it("a native value that looks like the reject id is still that answer", async () => {
    const { t, permission } = await asked();
    permission.resolve({ outcome: { outcome: "selected", optionId: "reject" } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()[0]).toMatchObject({ action: "accept", content: { answer: "reject" } });
  });

  it.each([
    ["reject", { outcome: { outcome: "selected", optionId: "reject_" } }],
    ["cancelled", { outcome: { outcome: "cancelled" } }],
    ["an option that was not offered", { outcome: { outcome: "selected", optionId: "jest" } }],
  ] as const)("%s → a real decline, no content, the turn goes on", async (_name, response) => {
    const { t, permission } = await asked();
    permission.resolve(response);
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    await settle();
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_2", action: "decline", workspacePath: "/w" }]);
    expect(t.failures).toEqual([]);
  });

  it("client error → the fallback (cancel), the turn goes on", async () => {
    const { t, permission } = await asked();
    permission.reject(new Error("client went away"));
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()[0]).toMatchObject({ action: "cancel" });
    expect(t.failures).toEqual([]);
  });

  it("turn cancel while asked → cancel to the host once, the client request cancelled", async () => {
    const { t, b, permission } = await asked();
    await b.withdrawAll("ses_1", "cancel");
    await b.withdrawAll("ses_1", "turn-end");
    await settle();
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_2", action: "cancel", workspacePath: "/w" }]);
    expect(permission.signal.aborted).toBe(true);
  });

  it("duplicate native values are offered once", async () => {
    const { permission } = await asked({
      ...ONE,
      questions: [
        {
          question: QUESTION,
          header: "Runner",
          options: [
            { value: "a", label: "A" },
            { value: "a", label: "A again" },
            { value: "b", label: "B" },
          ],
        },
      ],
    });
    expect(permission.params.options.map((o) => o.optionId)).toEqual(["a", "b", "reject"]);
  });
});

describe("what cannot be offered as a permission: a real decline, INTERACTION_UNSUPPORTED", () => {
  it.each([
    ["two questions", QUESTIONS, "2 questions at once"],
    ["one multi-select question", { ...ONE, questions: [{ ...ONE.questions[0]!, multiSelect: true }] }, "a multi-select question"],
  ])("%s", async (_name, request, why) => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    const b = broker();
    b.handleUserInput(request, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([
      { requestId: (request as { requestId: string }).requestId, action: "decline", workspacePath: "/w" },
    ]);
    expect(t.failures[0]!.code).toBe("INTERACTION_UNSUPPORTED");
    expect(t.failures[0]!.message).toContain(`ZCode asked ${why} (AskUserQuestion)`);
    expect(t.failures[0]!.message).toContain("elicitation.form");
    expect(t.client.permissions).toHaveLength(0);
    expect(b.pendingCount()).toBe(0);
  });

  it("a form-capable client still gets the form for a single question, never a permission", async () => {
    const t = makeContext({ capabilities: { elicitation: { form: {} } } });
    broker().handleUserInput(ONE, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    expect(t.client.permissions).toHaveLength(0);
  });
});
