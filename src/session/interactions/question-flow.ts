/**
 * `userInput.request` (AskUserQuestion and other structured questions) → form
 * `elicitation/create` → `respondElicitation` (zcode-host.md §6.2, acp.md §3.6).
 * Without the client capability elicitation.form: a real decline to the host, and the turn
 * fails with INTERACTION_UNSUPPORTED. Plan approvals go to plan-flow.ts.
 */
import type { CreateElicitationRequest, CreateElicitationResponse } from "@agentclientprotocol/sdk";
import { BridgeError, describeError } from "../../util/errors.js";
import { hasFormElicitation } from "./client-updates.js";
import type { NativeQuestion, NativeUserInputRequest } from "./native-requests.js";
import type { PendingInteraction } from "./pending.js";
import { nativeAnswerContent, questionMessage, questionSchema } from "./question-form.js";
import type { PendingRegistry } from "./registry.js";
import type { InteractionContext } from "./types.js";

function questionLabel(req: NativeUserInputRequest): string {
  return req.toolName ? `a question (${req.toolName})` : "a question";
}

export function unsupportedQuestionError(req: NativeUserInputRequest): BridgeError {
  return new BridgeError(
    "INTERACTION_UNSUPPORTED",
    `ZCode asked ${questionLabel(req)}, but this ACP client does not advertise the elicitation.form capability (clientCapabilities.elicitation.form), so it cannot be asked; the question was declined and the turn was stopped`,
    { details: { requestId: req.requestId, missingCapability: "elicitation.form" } },
  );
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
      await pending.answerAndFailTurn({ method: "elicitation", action: "decline" }, unsupportedQuestionError(req));
      return;
    }
    const toolCallId = req.toolCallId && ctx.describeToolCall(req.toolCallId) ? req.toolCallId : undefined;
    await askQuestionsForm(ctx, pending, req, questions, toolCallId, questionMessage(req.prompt, questions));
  })().catch((error: unknown) => void pending.fallBack(`internal error: ${describeError(error)}`, unsupportedQuestionError(req)));
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
  if (!pending.shouldAsk) return undefined;
  try {
    const response = await ctx.client.createElicitation(params, pending.clientSignal());
    pending.clientSettled();
    if (pending.isEnded) return undefined;
    return response as CreateElicitationResponse & { content?: Record<string, unknown> | null };
  } catch (error) {
    pending.clientSettled();
    if (!pending.isEnded) {
      await pending.fallBack(
        `client request failed: ${describeError(error)}`,
        new BridgeError("INTERACTION_UNSUPPORTED", "the ACP client failed to answer ZCode's question; the turn was stopped"),
      );
    }
    return undefined;
  }
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
    sessionId: ctx.sessionId,
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

/** accept with the rebuilt native content, or decline when an answer is missing or not offered */
export async function answerWithContent(
  pending: PendingInteraction,
  questions: readonly NativeQuestion[],
  content: unknown,
): Promise<void> {
  const rebuilt = nativeAnswerContent(questions, content);
  if (!rebuilt.ok) {
    pending.ctx.logger.warn("question: answer refused; declined", { requestId: pending.requestId, problem: rebuilt.problem });
    await pending.answer({ method: "elicitation", action: "decline" });
    return;
  }
  await pending.answer({ method: "elicitation", action: "accept", content: rebuilt.content });
}
