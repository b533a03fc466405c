/**
 * Plan approval, both native forms (docs/zcode-host.md §6.3, ADR 0006):
 *  1. `permission.request` with toolName ExitPlanMode → answered with `respondPermission`;
 *  2. `userInput.request` with schema.interaction "plan_approval" → `respondElicitation`.
 * The plan markdown (input.plan) is published first as a `switch_mode` tool call. Then:
 *  - client with form elicitation → `elicitation/create`;
 *  - client without (Paseo) → `session/request_permission` on the switch_mode tool call.
 * A missing plan or an unknown choice never approves.
 */
import { BridgeError, describeError } from "../../util/errors.js";
import { hasFormElicitation, planToolCall, publishPlan, tellUser } from "./client-updates.js";
import { planMarkdownOf, type NativePermissionRequest, type NativeUserInputRequest } from "./native-requests.js";
import { askPermission, noDenyError, openPermission } from "./permission-flow.js";
import { findOffered } from "./permission-options.js";
import { askChoiceAsPermission } from "./choice-permission.js";
import { askForm, askQuestionsForm } from "./question-flow.js";
import type { PendingRegistry } from "./registry.js";
import type { InteractionContext } from "./types.js";

const MISSING_PLAN_TEXT = "ZCode asked to approve a plan but sent no plan text, so the plan was not approved.";

function planTitle(reason: string | undefined): string {
  return reason && reason.trim() ? reason : "Approve the plan";
}

/** form 1: ExitPlanMode permission */
export function startPlanPermission(req: NativePermissionRequest, ctx: InteractionContext, registry: PendingRegistry): void {
  const opened = openPermission(req, ctx, registry, "plan-permission");
  if (!opened) return;
  const { mapping, pending } = opened;
  const plan = planMarkdownOf(req.input);
  void (async () => {
    if (plan === undefined) {
      await tellUser(ctx, MISSING_PLAN_TEXT);
      await pending.fallBack("plan markdown missing", noDenyError(req));
      return;
    }
    if (mapping.offered.length === 0) {
      await pending.fallBack("no option can be offered to the client", noDenyError(req));
      return;
    }
    const call = planToolCall(req.toolCallId ?? `plan-${req.requestId}`, planTitle(req.reason), plan, req.input);
    if (!pending.shouldAsk) return;
    await publishPlan(ctx, call);
    if (!pending.shouldAsk) return;
    const resolve = (optionId: string): string | undefined => findOffered(mapping, optionId)?.native.optionId;
    if (!hasFormElicitation(ctx)) {
      await askPermission(
        ctx,
        pending,
        call,
        mapping.offered.map((m) => m.acp),
        resolve,
        noDenyError(req),
      );
      return;
    }
    const result = await askForm(ctx, pending, {
      sessionId: ctx.clientSessionId ?? ctx.sessionId,
      toolCallId: call.toolCallId,
      mode: "form",
      message: `${planTitle(req.reason)}\n\n${plan}`,
      requestedSchema: {
        type: "object",
        properties: {
          decision: {
            type: "string",
            title: "Plan",
            description: "Approve the plan to leave plan mode and start implementing it.",
            oneOf: mapping.offered.map((m) => ({ const: m.native.optionId, title: m.acp.name })),
          },
        },
        required: ["decision"],
      },
    });
    if (result === undefined) return;
    if (result.action === "accept") {
      const decision = result.content?.decision;
      const nativeId = resolve(
        typeof decision === "string" || typeof decision === "number" || typeof decision === "boolean" ? String(decision) : "",
      );
      if (nativeId !== undefined) {
        await pending.answer({ method: "permission", optionId: nativeId });
        return;
      }
      await pending.fallBack("form answer names no offered option", noDenyError(req));
      return;
    }
    await pending.fallBack(`client answered ${result.action}`, noDenyError(req));
  })().catch((error: unknown) => void pending.fallBack(`internal error: ${describeError(error)}`, noDenyError(req)));
}

/** form 2: user-input plan approval */
export function startPlanInput(req: NativeUserInputRequest, ctx: InteractionContext, registry: PendingRegistry): void {
  const pending = registry.open({
    ctx,
    family: "userInput",
    requestId: req.requestId,
    label: "plan-input",
    fallback: { method: "elicitation", action: "cancel" },
  });
  const plan = planMarkdownOf(req.input);
  void (async () => {
    if (plan === undefined) {
      await tellUser(ctx, MISSING_PLAN_TEXT);
      await pending.answer({ method: "elicitation", action: "decline" });
      return;
    }
    const questions = req.questions;
    if (questions === undefined) {
      await pending.answerAndFailTurn(
        { method: "elicitation", action: "decline" },
        new BridgeError(
          "NATIVE_PROTOCOL_ERROR",
          "ZCode's plan approval request carries no valid choice; the plan was not approved and the turn was stopped",
        ),
      );
      return;
    }
    const title = planTitle(req.prompt);
    const call = planToolCall(req.toolCallId ?? `plan-${req.requestId}`, title, plan, req.input);
    if (!pending.shouldAsk) return;
    await publishPlan(ctx, call);
    if (!pending.shouldAsk) return;
    if (hasFormElicitation(ctx)) {
      await askQuestionsForm(ctx, pending, req, questions, call.toolCallId, `${title}\n\n${plan}`);
      return;
    }
    const question = questions[0];
    if (questions.length !== 1 || !question || question.multiSelect === true) {
      await pending.answerAndFailTurn({ method: "elicitation", action: "decline" }, unsupportedPlanForm());
      return;
    }
    // Paseo path (choice-permission.ts): one allow_once option per native choice, plus a reject
    await askChoiceAsPermission(pending, question, call, { rejected: "decline", cancelled: "cancel" }, unsupportedPlanForm());
  })().catch((error: unknown) => void pending.fallBack(`internal error: ${describeError(error)}`, unsupportedPlanForm()));
}

function unsupportedPlanForm(): BridgeError {
  return new BridgeError(
    "INTERACTION_UNSUPPORTED",
    "ZCode asked for a plan approval this ACP client cannot answer without the elicitation.form capability; the plan was not approved and the turn was stopped",
  );
}
