/**
 * `userInput.request` (AskUserQuestion and other structured questions) → form
 * `elicitation/create` → `respondElicitation` (docs/zcode-host.md §6.2, docs/acp.md §3.6).
 * Without the client capability elicitation.form (adr/0009): one single-select question is asked
 * as `session/request_permission` whose options are its choices (choice-permission.ts); anything
 * else (several questions, multi-select) gets a real decline to the host, and the turn fails with
 * INTERACTION_UNSUPPORTED. Plan approvals go to plan-flow.ts.
 */
import type { CreateElicitationRequest, CreateElicitationResponse, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { BridgeError, describeError } from "../../util/errors.js";
import { askChoiceAsPermission } from "./choice-permission.js";
import { textContent } from "../tool-presentation.js";
import { hasFormElicitation, permissionToolCall, showToolCall } from "./client-updates.js";
import type { NativeQuestion, NativeUserInputRequest } from "./native-requests.js";
import type { PendingInteraction } from "./pending.js";
import { answerWithContent, questionMessage, questionSchema } from "./question-form.js";
import type { PendingRegistry } from "./registry.js";
import type { InteractionContext } from "./types.js";

function questionLabel(req: NativeUserInputRequest): string {
  return req.toolName ? `a question (${req.toolName})` : "a question";
}

/** what a client without forms cannot be asked: several questions, or a multi-select one */
function unmappable(questions: readonly NativeQuestion[]): string | undefined {
  if (questions.length > 1) return `${questions.length} questions at once`;
  if (questions[0]?.multiSelect === true) return "a multi-select question";
  return undefined;
}

function unsupportedQuestionError(req: NativeUserInputRequest, why?: string): BridgeError {
  const subject = `${why ?? "a question"}${req.toolName ? ` (${req.toolName})` : ""}`;
  return new BridgeError(
    "INTERACTION_UNSUPPORTED",
    `ZCode asked ${subject}, but this ACP client does not advertise the elicitation.form capability ` +
      "(clientCapabilities.elicitation.form); without it zcode-acp can only offer one single-choice question, as a permission. " +
      "The question was declined and the turn was stopped: use a client with form elicitation, or answer in the ZCode app.",
    { details: { requestId: req.requestId, missingCapability: "elicitation.form" } },
  );
}

/** the permission's tool call: the AskUserQuestion call as the engine knows it, titled with the question */
function questionToolCall(ctx: InteractionContext, req: NativeUserInputRequest, question: NativeQuestion): ToolCallUpdate {
  const call = permissionToolCall(ctx, req.toolCallId ?? `question-${req.requestId}`, {
    toolName: req.toolName,
    reason: undefined,
    input: req.input,
  });
  const choices = question.options.map((o) => `- ${o.label || o.value}${o.description ? `: ${o.description}` : ""}`).join("\n");
  const header = question.header && question.header !== question.question ? `**${question.header}**\n\n` : "";
  return { ...call, title: question.question, content: [textContent(`${header}${question.question}\n\n${choices}`)] };
}

export function startQuestions(req: NativeUserInputRequest, ctx: InteractionContext, registry: PendingRegistry): void {
  const pending = registry.open({
    ctx,
    family: "userInput",
    requestId: req.requestId,
    label: "question",
    fallback: { method: "elicitation", action: "cancel" },
  });
  void (async () => {
    const questions = req.questions;
    if (questions === undefined) {
      await pending.answerAndFailTurn(
        { method: "elicitation", action: "decline" },
        new BridgeError(
          "NATIVE_PROTOCOL_ERROR",
          `ZCode asked ${questionLabel(req)} without any valid choice; it was declined and the turn was stopped`,
          { details: { requestId: req.requestId } },
        ),
      );
      return;
    }
    if (!hasFormElicitation(ctx)) {
      const why = unmappable(questions);
      const question = questions[0];
      if (why !== undefined || question === undefined) {
        await pending.answerAndFailTurn({ method: "elicitation", action: "decline" }, unsupportedQuestionError(req, why));
        return;
      }
      if (!pending.shouldAsk) return;
      const call = questionToolCall(ctx, req, question);
      await showToolCall(ctx, call);
      // reject and cancelled are a real decline: the user saw the question and did not answer it
      await askChoiceAsPermission(pending, question, call, { rejected: "decline", cancelled: "decline" }, unsupportedQuestionError(req));
      return;
    }
    const toolCallId = await formToolCall(ctx, req, questions);
    if (!pending.shouldAsk) return;
    await askQuestionsForm(ctx, pending, req, questions, toolCallId, questionMessage(req.prompt, questions));
  })().catch((error: unknown) => void pending.fallBack(`internal error: ${describeError(error)}`, unsupportedQuestionError(req)));
}

/**
 * The tool call a question form names: the asking tool call when the client has seen it. A
 * subagent's question can be read before its child's tool row (the row comes on the child's own
 * conversation): then the call is shown first, so the form never names a call the client does not
 * know, and the row read later updates it. On the parent the row comes first on the same stream;
 * a call it never named is not invented.
 */
async function formToolCall(
  ctx: InteractionContext,
  req: NativeUserInputRequest,
  questions: readonly NativeQuestion[],
): Promise<string | undefined> {
  if (!req.toolCallId) return undefined;
  if (ctx.describeToolCall(req.toolCallId) !== undefined) return req.toolCallId;
  if (ctx.clientSessionId === undefined || !ctx.adoptToolCall) return undefined;
  const call = permissionToolCall(ctx, req.toolCallId, {
    toolName: req.toolName,
    reason: questions[0]?.question,
    input: req.input,
  });
  await showToolCall(ctx, call);
  return req.toolCallId;
}

/**
 * `elicitation/create`; resolves the client's response, or undefined when the interaction
 * ended meanwhile or the client request failed (then the fallback was applied).
 */
export async function askForm(
  ctx: InteractionContext,
  pending: PendingInteraction,
  params: CreateElicitationRequest,
): Promise<(CreateElicitationResponse & { content?: Record<string, unknown> | null }) | undefined> {
  const asked = await pending.askClient(
    (signal) => ctx.client.createElicitation(params, signal),
    new BridgeError("INTERACTION_UNSUPPORTED", "the ACP client failed to answer ZCode's question; the turn was stopped"),
  );
  return asked?.response;
}

/** ask the native questions as one form and answer the host with the native content convention */
export async function askQuestionsForm(
  ctx: InteractionContext,
  pending: PendingInteraction,
  req: NativeUserInputRequest,
  questions: readonly NativeQuestion[],
  toolCallId: string | undefined,
  message: string,
): Promise<void> {
  const params: CreateElicitationRequest = {
    sessionId: ctx.clientSessionId ?? ctx.sessionId,
    mode: "form",
    message,
    requestedSchema: questionSchema(questions),
  };
  if (toolCallId !== undefined) params.toolCallId = toolCallId;
  const result = await askForm(ctx, pending, params);
  if (result === undefined) return;
  switch (result.action) {
    case "accept":
      await answerWithContent(pending, questions, result.content);
      return;
    case "cancel":
      await pending.answer({ method: "elicitation", action: "cancel" });
      return;
    case "decline":
      await pending.answer({ method: "elicitation", action: "decline" });
      return;
    default:
      ctx.logger.warn("question: unknown elicitation action; declined", { requestId: req.requestId, action: result.action });
      await pending.answer({ method: "elicitation", action: "decline" });
  }
}
