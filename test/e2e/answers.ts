/**
 * The answers one session's interactions got from the bridge, whichever way the install takes
 * them: the legacy `zcode-task.respondPermission` / `respondElicitation` calls, or on the
 * zcode-task-v3 line (4.0.0, no legacy answer calls) the V4 `resolveInteraction` commands
 * (zcode-v4.md §5.3), given in the legacy calls' shape so that a suite states the same facts on
 * every line: which answer, how many times.
 */
import type { CallLogEntry } from "../../fixtures/sim-install.js";
import { SIM_RELEASES, type SimRelease } from "../../fixtures/sim-install.js";
import { callsFor, nativeCalls } from "../support/bridge-process.js";

/** the simulated release's line is zcode-task-v3: turns are read from V4 rows and answered by V4 commands */
export const V3 = SIM_RELEASES[(process.env.ZCODE_ACP_SIM_RELEASE ?? "3.11.2") as SimRelease].line === "zcode-task-v3";

type AnswerMethod = "respondPermission" | "respondElicitation";

/** the resolveInteraction envelopes of one session */
export function resolveInteractions(log: CallLogEntry[], sessionId: string): Array<Record<string, unknown>> {
  return nativeCalls(log, "sendConversationCommandV4")
    .map((p) => p.envelope as Record<string, unknown> | undefined)
    .filter((e): e is Record<string, unknown> => e?.type === "resolveInteraction" && e.sessionId === sessionId);
}

/**
 * `method`'s answers for `sessionId`. On zcode-task-v3 the legacy method is never called (asserted
 * here: the install has none), and each resolveInteraction is one answer: a permission's
 * `{optionId}` as `{taskId, requestId, optionId}`, a question's `{action, content?}` as
 * `{taskId, requestId, action, content?}`.
 */
export function answersFor(log: CallLogEntry[], method: AnswerMethod, sessionId: string): Array<Record<string, unknown>> {
  if (!V3) return callsFor(log, method, sessionId);
  const legacy = callsFor(log, method, sessionId);
  if (legacy.length > 0) throw new Error(`zcode-task-v3 got ${legacy.length} legacy ${method} call(s)`);
  return resolveInteractions(log, sessionId).flatMap((envelope): Array<Record<string, unknown>> => {
    const payload = (envelope.payload ?? {}) as { interactionId?: string; answer?: Record<string, unknown> };
    const answer = payload.answer ?? {};
    const base = { taskId: sessionId, requestId: payload.interactionId };
    const isPermission = answer.optionId !== undefined && answer.action === undefined;
    if (method === "respondPermission") {
      return isPermission
        ? [{ ...base, optionId: answer.optionId, ...(answer.freeText !== undefined ? { reason: answer.freeText } : {}) }]
        : [];
    }
    if (isPermission) return [];
    return [{ ...base, action: answer.action, ...(answer.content !== undefined ? { content: answer.content } : {}) }];
  });
}
