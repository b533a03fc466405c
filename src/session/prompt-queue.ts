/**
 * The prompts of one session that wait behind its running turn (adr/0022). A `session/prompt`
 * that arrives while a turn runs is handed to ZCode at once as a queued input (`sendText` with
 * `requestedDelivery: "queue"`); ZCode starts it as its own turn after the running one, and the
 * engine makes the oldest waiting prompt its running turn when the running one ends (ZCode's queue
 * and this one are both first in, first out). `session/cancel` answers every waiting prompt
 * `cancelled` (once each) and removes its input from ZCode's queue before the running turn is
 * stopped, so the host receives one stop.
 */
import type { Logger } from "../log/logger.js";
import type { NativeApi, SentInput } from "../native/native-api.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import { ActiveTurn, type TurnResult } from "./active-turn.js";
import type { HostPromptInput } from "./prompt-content.js";

/** how many prompts may wait behind the running turn of one session */
export const MAX_QUEUED_PROMPTS = 8;

interface Waiting {
  turn: ActiveTurn;
  /** the send to ZCode: what it did with the input (undefined once the send failed) */
  sent: Promise<SentInput | undefined>;
  queueItemId?: string;
}

export interface PromptQueueDeps {
  native: NativeApi;
  where: { workspacePath: string; sessionId: string };
  logger: Logger;
  /** a waiting prompt the engine already made its running turn failed to send: end it there */
  failRunning(turn: ActiveTurn, error: BridgeError): void;
}

export class PromptQueue {
  private readonly waiting: Waiting[] = [];

  constructor(private readonly deps: PromptQueueDeps) {}

  get size(): number {
    return this.waiting.length;
  }

  /** Is `inputId` the input of a waiting prompt (so a turn that carries it is not the running one's)? */
  has(inputId: string): boolean {
    return this.waiting.some((entry) => entry.turn.inputId === inputId);
  }

  /** Queue `input` in ZCode behind the running turn; resolves when its own turn ends. */
  add(input: HostPromptInput): Promise<TurnResult> {
    if (this.waiting.length >= MAX_QUEUED_PROMPTS) {
      throw new BridgeError(
        "SESSION_BUSY",
        `Session ${this.deps.where.sessionId} already has ${MAX_QUEUED_PROMPTS} prompts waiting behind the running one. ` +
          "Wait for one to finish, or cancel them.",
        { details: { queued: this.waiting.length, limit: MAX_QUEUED_PROMPTS } },
      );
    }
    const turn = new ActiveTurn();
    // events of a new native turn may belong to it once it is the running turn
    turn.sendIssued = true;
    const entry: Waiting = { turn, sent: Promise.resolve(undefined) };
    this.waiting.push(entry);
    this.deps.logger.debug("prompt queued", { turn: turn.number, waiting: this.waiting.length });
    entry.sent = this.deps.native.sendInput({ ...this.deps.where, ...input, delivery: "queue" }).then(
      (sent) => {
        turn.inputId = sent.inputId;
        if (sent.queueItemId !== undefined) entry.queueItemId = sent.queueItemId;
        return sent;
      },
      (error: unknown) => {
        this.fail(entry, isBridgeError(error) ? error : new BridgeError("HOST_CALL_FAILED", describeError(error), { cause: error }));
        return undefined;
      },
    );
    turn.sending(entry.sent);
    return turn.result;
  }

  /**
   * A steered input ZCode did not join to the running turn (it queued it, or started it because
   * the turn had just ended): it runs as a turn of its own that no `session/prompt` awaits.
   */
  adopt(sent: SentInput): ActiveTurn {
    const turn = new ActiveTurn();
    turn.sendIssued = true;
    turn.inputId = sent.inputId;
    const entry: Waiting = { turn, sent: Promise.resolve(sent) };
    if (sent.queueItemId !== undefined) entry.queueItemId = sent.queueItemId;
    this.waiting.push(entry);
    return turn;
  }

  /** The oldest waiting prompt, taken out to become the running turn. */
  next(): ActiveTurn | undefined {
    return this.waiting.shift()?.turn;
  }

  /**
   * Answer every waiting prompt `cancelled`, or with `error` when the bridge gave up on the session's
   * turns (now, once each); resolves when their inputs are out of ZCode's queue (or could not be
   * removed: logged, the stop that follows ends what runs).
   */
  cancelAll(error?: BridgeError): Promise<void> {
    const entries = this.waiting.splice(0);
    for (const entry of entries) {
      entry.turn.cancelRequested = true;
      if (entry.turn.settle(error ? { error } : { stopReason: "cancelled" })) entry.turn.deliver();
    }
    return Promise.all(entries.map((entry) => this.remove(entry))).then(() => undefined);
  }

  /** Fail every waiting prompt (the host went away: its queue went with it). */
  failAll(error: BridgeError): void {
    for (const entry of this.waiting.splice(0)) if (entry.turn.settle({ error })) entry.turn.deliver();
  }

  private async remove(entry: Waiting): Promise<void> {
    await entry.sent;
    const queueItemId = entry.queueItemId;
    if (queueItemId === undefined) return;
    await this.deps.native
      .removeQueuedInput({ ...this.deps.where, queueItemId })
      .catch((e) => this.deps.logger.warn("a queued prompt could not be removed from ZCode's queue", { error: describeError(e) }));
  }

  private fail(entry: Waiting, error: BridgeError): void {
    const index = this.waiting.indexOf(entry);
    if (index >= 0) {
      this.waiting.splice(index, 1);
      if (entry.turn.settle({ error })) entry.turn.deliver();
      return;
    }
    if (!entry.turn.settled) this.deps.failRunning(entry.turn, error);
  }
}
