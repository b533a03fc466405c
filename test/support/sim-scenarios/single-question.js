// Test-only scenarios for a simulated install (added by ../question-scenarios.ts): AskUserQuestion
// with ONE question, single-select (`sim:question`) or multi-select (`sim:question multi=1`).
// Same event sequence and reply as the fixtures' `questions` scenario (plans.js). The `answer`
// key is present for one question (docs/zcode-host.md §6.2).

const QUESTION = "Which test runner should I use?";

async function question(t) {
  const multi = t.arg("multi", "0") === "1";
  const toolCallId = t.newToolCallId();
  const input = { questions: 1 };
  t.emit("tool.updated", { kind: "scheduled", toolCallId, toolName: "AskUserQuestion", assistantMessageId: t.assistantMessageId, input });
  t.emit("tool.updated", { kind: "started", toolCallId, toolName: "AskUserQuestion", startedAt: Date.now() });
  const response = await t.userInput({
    toolCallId,
    toolName: "AskUserQuestion",
    prompt: QUESTION,
    questions: [
      {
        question: QUESTION,
        header: "Runner",
        ...(multi ? { multiSelect: true } : {}),
        options: [
          { value: "vitest", label: "Vitest", description: "Fast, ESM-first" },
          { value: "node", label: "node:test", description: "No dependency" },
          { value: "jest", label: "Jest" },
        ],
      },
    ],
  });
  if (response.action === "accept") {
    t.emit("tool.updated", {
      kind: "result",
      toolCallId,
      toolName: "AskUserQuestion",
      result: { success: true, content: JSON.stringify(response.content) },
      duration: 1,
    });
    await t.streamText(`Runner: ${JSON.stringify(response.content?.answer)}.`, { chunks: 2 });
  } else {
    t.emit("tool.updated", {
      kind: "error",
      toolCallId,
      toolName: "AskUserQuestion",
      error: { type: "user_declined", message: `User ${response.action}ed the question` },
    });
    await t.streamText("No answer given.", { chunks: 1 });
  }
}

export const testScenarios = { question };
