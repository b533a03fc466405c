import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { NO_ELICITATION } from "../../../support/fake-client.js";
import { until } from "../../../support/until.js";
import { makeContext, QUESTIONS, settle, TURNS } from "./support/context.js";

// grace 0: a withdrawn client request is cancelled at once (the cancel grace has its own tests, cancel-grace.test.ts)
const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: 0 });

describe("structured questions → form elicitation → respondElicitation", () => {
  it("keeps every question: single-select oneOf, multi-select array with items.anyOf", async () => {
    const t = makeContext();
    t.known.set("call_9", { title: "AskUserQuestion" });
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    expect(t.client.elicitations[0]!.params).toEqual({
      sessionId: "ses_1",
      toolCallId: "call_9",
      mode: "form",
      message: "A few choices before I start",
      requestedSchema: {
        type: "object",
        properties: {
          answer_0: {
            type: "string",
            title: "Runner",
            description: "Which test runner?",
            oneOf: [
              { const: "vitest", title: "Vitest" },
              { const: "node", title: "node:test", description: "No dependency" },
            ],
          },
          answer_1: {
            type: "array",
            title: "Files",
            description: "Which files should I test?",
            minItems: 1,
            items: {
              anyOf: [
                { const: "auth", title: "auth.test.ts" },
                { const: "user", title: "user.test.ts" },
                { const: "db", title: "db.test.ts" },
              ],
            },
          },
        },
        required: ["answer_0", "answer_1"],
      },
    });
    expect(t.updates).toEqual([]);
  });

  it("omits toolCallId when the engine does not know the tool call", async () => {
    const t = makeContext();
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    expect("toolCallId" in t.client.elicitations[0]!.params).toBe(false);
  });

  it("accept → the native content convention (no `answer` with two questions)", async () => {
    const t = makeContext();
    const b = broker();
    b.handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve({ action: "accept", content: { answer_0: "vitest", answer_1: ["auth", "db", "auth"] } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.records).toEqual([
      {
        kind: "operate",
        name: "respondStructuredInput",
        sessionId: "ses_1",
        incarnation: 1,
        params: {
          requestId: "q_1",
          action: "accept",
          workspacePath: "/w",
          content: {
            answer_0: "vitest",
            answer_1: ["auth", "db"],
            answers: { "Which test runner?": ["vitest"], "Which files should I test?": ["auth", "db"] },
          },
        },
      },
    ]);
    expect(b.pendingCount()).toBe(0);
  });

  it("one question → `answer` mirrors answer_0 (multi-select too)", async () => {
    const t = makeContext();
    broker().handleUserInput({ ...QUESTIONS, questions: [QUESTIONS.questions[1]] }, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve({ action: "accept", content: { answer_0: ["user"] } });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()[0]!.content).toEqual({
      answer_0: ["user"],
      answer: ["user"],
      answers: { "Which files should I test?": ["user"] },
    });
  });

  it.each([
    ["a value that was not offered", { answer_0: "jest", answer_1: ["auth"] }],
    ["a label instead of a value", { answer_0: "Vitest", answer_1: ["auth"] }],
    ["an empty multi-select", { answer_0: "vitest", answer_1: [] }],
    ["a string for a multi-select", { answer_0: "vitest", answer_1: "auth" }],
    ["a list for a single-select", { answer_0: ["vitest"], answer_1: ["auth"] }],
    ["a missing answer", { answer_0: "vitest" }],
    ["no content", undefined],
  ])("rejects %s → decline", async (_name, content) => {
    const t = makeContext();
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve(content === undefined ? { action: "accept" } : { action: "accept", content });
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action: "decline", workspacePath: "/w" }]);
  });

  it.each([
    ["decline", { action: "decline" }, "decline"],
    ["cancel", { action: "cancel" }, "cancel"],
    ["an unknown action", { action: "_later" }, "decline"],
  ])("client %s → %s (no content)", async (_name, response, action) => {
    const t = makeContext();
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.resolve(response);
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action, workspacePath: "/w" }]);
    expect(t.failures).toEqual([]);
  });

  it("client error → cancel to the host", async () => {
    const t = makeContext();
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.client.elicitations[0]!.reject(new Error("-32603"));
    await until(() => t.host.elicitationAnswers().length === 1, TURNS);
    expect(t.host.elicitationAnswers()[0]!.action).toBe("cancel");
  });

  it("client without elicitation.form → a real decline, then the turn fails INTERACTION_UNSUPPORTED", async () => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    const b = broker();
    b.handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action: "decline", workspacePath: "/w" }]);
    expect(t.failures[0]!.code).toBe("INTERACTION_UNSUPPORTED");
    expect(t.failures[0]!.message).toContain("elicitation.form");
    expect(t.client.elicitations).toHaveLength(0);
    expect(t.client.permissions).toHaveLength(0);
    expect(b.pendingCount()).toBe(0);
  });

  it("fails the turn without waiting for the host's reply to the decline (the host may finish the turn first)", async () => {
    const t = makeContext({ capabilities: NO_ELICITATION });
    t.host.operateResult = () => new Promise(() => {}); // the reply never comes
    broker().handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action: "decline", workspacePath: "/w" }]);
  });

  it("a question request without valid questions → decline and the turn fails", async () => {
    for (const questions of [undefined, [], [{ question: "?", header: "h", options: [] }]]) {
      const t = makeContext();
      broker().handleUserInput({ ...QUESTIONS, questions }, t.ctx);
      await until(() => t.failures.length === 1, TURNS);
      expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action: "decline", workspacePath: "/w" }]);
      expect(t.failures[0]!.code).toBe("NATIVE_PROTOCOL_ERROR");
      expect(t.client.elicitations).toHaveLength(0);
    }
  });

  it("a malformed request with a requestId is declined; without one the turn just fails", async () => {
    const t = makeContext();
    broker().handleUserInput({ requestId: "bad", prompt: 42 }, t.ctx);
    broker().handleUserInput({ prompt: "no id" }, t.ctx);
    await until(() => t.failures.length === 2, TURNS);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "bad", action: "decline", workspacePath: "/w" }]);
  });

  it("deduplicates re-announcements and withdraws with cancel exactly once", async () => {
    const t = makeContext();
    const b = broker();
    b.handleUserInput(QUESTIONS, t.ctx);
    b.handleUserInput(QUESTIONS, t.ctx);
    await until(() => t.client.elicitations.length === 1, TURNS);
    t.turn.abort();
    await b.withdrawAll("ses_1", "cancel");
    b.handleUserInput(QUESTIONS, t.ctx);
    await settle();
    expect(t.client.elicitations).toHaveLength(1);
    expect(t.client.elicitations[0]!.signal.aborted).toBe(true);
    expect(t.host.elicitationAnswers()).toEqual([{ requestId: "q_1", action: "cancel", workspacePath: "/w" }]);
  });
});
