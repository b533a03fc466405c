/**
 * Terminal events → the ACP end of a prompt (adr/0004, docs/zcode-host.md §5.10).
 * A cancel requested for the turn wins over everything: ACP forbids an error or `end_turn`
 * after `session/cancel`. Unknown result types are protocol errors, never `end_turn`.
 */
import type { StopReason } from "@agentclientprotocol/sdk";
import type { TurnCompletedPayload, TurnFailedPayload } from "../protocol/native-types.js";
import { BridgeError } from "../util/errors.js";

export type TurnOutcome = { stopReason: StopReason } | { error: BridgeError };

const STOP_REASON_BY_RESULT: Record<string, StopReason> = {
  success: "end_turn",
  cancelled: "cancelled",
  error_max_turns: "max_turn_requests",
  error_max_tool_calls: "max_turn_requests",
  error_max_budget: "max_turn_requests",
  // legacy values accepted by older adapters
  max_tokens: "max_tokens",
  token_limit: "max_tokens",
  max_turn_requests: "max_turn_requests",
  request_limit: "max_turn_requests",
  refusal: "refusal",
  interrupted: "cancelled",
  stopped: "cancelled",
};

export function completedOutcome(payload: TurnCompletedPayload, cancelRequested: boolean): TurnOutcome {
  if (cancelRequested) return { stopReason: "cancelled" };
  const stopReason = STOP_REASON_BY_RESULT[payload.resultType];
  if (stopReason) return { stopReason };
  if (payload.resultType === "error_during_execution") {
    return {
      error: new BridgeError("TURN_FAILED", "ZCode stopped the turn because of an error during execution.", {
        details: { resultType: payload.resultType },
      }),
    };
  }
  return {
    error: new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode ended the turn with an unknown result type "${payload.resultType}".`, {
      details: { resultType: payload.resultType },
    }),
  };
}

export function failedOutcome(payload: TurnFailedPayload, cancelRequested: boolean): TurnOutcome {
  if (cancelRequested) return { stopReason: "cancelled" };
  const { error } = payload;
  const detail = error.underlyingErrorMessage && error.underlyingErrorMessage !== error.message ? ` (${error.underlyingErrorMessage})` : "";
  const details: Record<string, unknown> = {};
  if (error.type) details.type = error.type;
  if (error.code !== undefined) details.nativeCode = error.code;
  if (payload.turnPhase) details.turnPhase = payload.turnPhase;
  return { error: new BridgeError("TURN_FAILED", `ZCode failed the turn: ${error.message}${detail}`, { details }) };
}
