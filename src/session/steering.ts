/**
 * `_session/steering` (the ACP extension claude-agent-acp and codex-acp serve; adr/0022, adr/0023):
 * text sent while a turn runs joins that turn as guided input (V4 `sendText` with
 * `requestedDelivery: "guide"`), and the running `session/prompt` answers once, when ZCode's turn
 * ends. ZCode never acks a guide as `guide` (a guide is acked `queue` while busy), so the outcome
 * comes from what ZCode reports afterwards (session-turns.ts, zcode-inputs.ts):
 * - `injected`: ZCode's `turn.steerDrained` names the input (it joined the running turn);
 * - `startedNewTurn`: a `turn.started` carries it (ZCode ran it as a turn of its own — the turn had
 *   ended, or it could not guide), or the session was idle and the client did not opt out;
 * - `promptRequired` (reason `noRunningTurn`): idle, and the client asked for this answer with
 *   `_meta.steering.idleBehavior: "promptRequired"`; nothing was sent.
 */
export const STEERING_METHOD = "_session/steering";

export type IdleBehavior = "promptRequired" | "startNewTurn";

export type SteeringOutcome =
  { outcome: "injected" } | { outcome: "startedNewTurn" } | { outcome: "promptRequired"; reason: "noRunningTurn" };
