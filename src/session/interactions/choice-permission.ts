/**
 * One native single-select question as `session/request_permission` (adr/0009): for clients
 * without form elicitation (Paseo, Zed, acpx). Each native choice becomes an `allow_once` option
 * whose optionId is the native value and whose name is its label; a synthetic `reject_once`
 * "Reject" (id `reject`, suffixed until it collides with no value) comes last. Used by plain
 * questions (question-flow.ts) and by the user-input form of plan approval (plan-flow.ts).
 */
import type { PermissionOption, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { BridgeError } from "../../util/errors.js";
import type { NativeQuestion } from "./native-requests.js";
import type { PendingInteraction } from "./pending.js";
import { answerWithContent } from "./question-form.js";

interface ChoiceOptions {
  options: PermissionOption[];
  /** the native values, in native order, each once */
  values: string[];
  rejectId: string;
}

function choiceOptions(question: NativeQuestion): ChoiceOptions {
  const values = [...new Set(question.options.map((o) => o.value))];
  let rejectId = "reject";
  while (values.includes(rejectId)) rejectId = `${rejectId}_`;
  const options: PermissionOption[] = [
    ...values.map((value): PermissionOption => ({
      optionId: value,
      name: question.options.find((o) => o.value === value)?.label || value,
      kind: "allow_once",
    })),
    { optionId: rejectId, name: "Reject", kind: "reject_once" },
  ];
  return { options, values, rejectId };
}

/** what the host gets when the client did not pick a choice */
export interface NoChoiceAnswers {
  rejected: "decline" | "cancel";
  cancelled: "decline" | "cancel";
}

/**
 * Ask the question as a permission and answer the host: a native value → accept with the
 * content convention; reject / an unknown id → `rejected`; `cancelled` → `cancelled`; a client
 * failure → the pending interaction's fallback (or `ifClientFails` when it has none).
 */
export async function askChoiceAsPermission(
  pending: PendingInteraction,
  question: NativeQuestion,
  toolCall: ToolCallUpdate,
  noChoice: NoChoiceAnswers,
  ifClientFails: BridgeError,
): Promise<void> {
  const { ctx } = pending;
  const { options, values, rejectId } = choiceOptions(question);
  const asked = await pending.askClient(
    (signal) => ctx.client.requestPermission({ sessionId: ctx.clientSessionId ?? ctx.sessionId, toolCall, options }, signal),
    ifClientFails,
  );
  if (asked === undefined) return;
  const outcome = asked.response?.outcome;
  if (outcome?.outcome === "selected" && values.includes(outcome.optionId)) {
    await answerWithContent(pending, [question], { answer_0: outcome.optionId });
    return;
  }
  if (outcome?.outcome === "selected" && outcome.optionId !== rejectId) {
    ctx.logger.warn("question: client chose an option that was not offered; declined", { requestId: pending.requestId });
  }
  await pending.answer({ method: "elicitation", action: outcome?.outcome === "cancelled" ? noChoice.cancelled : noChoice.rejected });
}
