/**
 * `_session/steering` (the ACP extension claude-agent-acp and codex-acp serve; adr/0022): text sent
 * while a turn runs joins that turn as guided input (V4 `sendText` with `requestedDelivery:
 * "guide"`), and the running `session/prompt` answers once, when ZCode's turn ends. Outcomes:
 * - `injected`: ZCode took it into the running turn;
 * - `startedNewTurn`: it runs as a turn of its own (ZCode queued it — an attachment cannot guide —
 *   or the turn had just ended; or the session was idle and the client did not opt out);
 * - `promptRequired` (reason `noRunningTurn`): idle, and the client asked for this answer with
 *   `_meta.steering.idleBehavior: "promptRequired"`; nothing was sent.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { NativeApi, SentInput } from "../native/native-api.js";
import { BridgeError, describeError } from "../util/errors.js";
import type { ActiveTurn, TurnResult } from "./active-turn.js";
import { convertPrompt } from "./prompt-content.js";

export const STEERING_METHOD = "_session/steering";

export type IdleBehavior = "promptRequired" | "startNewTurn";

export type SteeringOutcome =
  { outcome: "injected" } | { outcome: "startedNewTurn" } | { outcome: "promptRequired"; reason: "noRunningTurn" };

export interface SteeringContext {
  native: NativeApi;
  where: { workspacePath: string; sessionId: string };
  /** the running turn that may take guided input (sent, not settled, not being cancelled) */
  running: ActiveTurn | undefined;
  /** start an ordinary prompt turn (the idle case) */
  prompt(blocks: readonly ContentBlock[]): Promise<TurnResult>;
  /** a steered input ZCode did not join to the running turn becomes a turn of its own */
  adopt(sent: SentInput): ActiveTurn;
  logger: Logger;
}

export async function steerTurn(ctx: SteeringContext, blocks: readonly ContentBlock[], idle: IdleBehavior): Promise<SteeringOutcome> {
  if (!ctx.running) {
    if (idle === "promptRequired") return { outcome: "promptRequired", reason: "noRunningTurn" };
    // the legacy behaviour both adapters keep for clients that did not opt in: a detached turn
    const detached = ctx.prompt(blocks);
    detached.catch((e: unknown) => ctx.logger.warn("a steered prompt started as its own turn failed", { error: describeError(e) }));
    return { outcome: "startedNewTurn" };
  }
  const input = convertPrompt(blocks, ctx.where.workspacePath);
  if (!(await ctx.native.takesLiveInput())) {
    throw new BridgeError(
      "SESSION_BUSY",
      "This ZCode release cannot take input while a turn runs (it lacks the V4 conversation commands), so the text was not sent. " +
        "Send it as a new prompt once the turn ends.",
    );
  }
  const sent = await ctx.native.sendInput({ ...ctx.where, content: input.content, attachments: input.attachments, delivery: "guide" });
  if (sent.delivery === "queue") return { outcome: "injected" };
  ctx.adopt(sent);
  ctx.logger.info("steered input runs as a turn of its own", { delivery: sent.delivery });
  return { outcome: "startedNewTurn" };
}
