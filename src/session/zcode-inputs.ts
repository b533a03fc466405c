/**
 * ZCode's input queue for one session, as the bridge owns it (adr/0023). Every input the bridge
 * hands to ZCode — a `session/prompt`, a `_session/steering` text — is one `SessionInput`, a small
 * state machine:
 *
 *     waiting ──send──→ sending ──ack──→ started  (ZCode started a turn with it)
 *        │                 │      └───→ queued   (ZCode queued it, or holds it as a guide)
 *        │                 │                 │
 *        │                 └─ lost ack ─→ unknown (abandoned: removed from ZCode's queue, or stopped if it runs)
 *        │                                   │
 *        │         turn.started with its id ─┴─→ running ──turn end──→ ended
 *        │         turn.steerDrained with its id ─────────────────────→ ended (injected)
 *        └──────────── stop routine ───────────────────────────────────→ removed
 *
 * What this module guarantees (zcode-v4-source-check.md is the record of ZCode's side):
 * - send order: a session's sends are strictly first in, first out; the next `sendText` leaves
 *   only after the previous one's ack (one chain of native input commands per session);
 * - pairing: an input becomes the running turn only when ZCode's `turn.started` carries its id;
 *   never by assumed order (only the legacy line, whose `sendPrompt` has no id, pairs its one
 *   input with the next turn that is not ZCode's own);
 * - steering: "injected" only when ZCode reports `turn.steerDrained` for the input, a turn of its
 *   own when a `turn.started` carries its id; the wait is bounded;
 * - one stop routine for every path (cancel, a turn the bridge fails, a lost subscription, a
 *   given-up turn, close): the waiting inputs are answered at once, then — after the sends in
 *   flight — removed from ZCode's queue one compare-and-set delete at a time, then the running
 *   turn is stopped; a stop may leave ZCode's queue held, so the next send first releases it;
 * - an input whose send's outcome is unknown is abandoned alone (`abandon`): it leaves ZCode's
 *   queue if it is there, its turn is stopped if it runs or starts later, and everything else —
 *   the turn running before it, the inputs behind it, ZCode's own work — goes on;
 * - bounds: at most `MAX_WAITING_INPUTS` inputs wait (prompts and steering alike).
 */
import type { Logger } from "../log/logger.js";
import type { NativeApi, SentInput } from "../native/native-api.js";
import type { TurnStartedPayload } from "../protocol/native-types.js";
import { BridgeError, describeError, isBridgeError, isOutcomeUnknown } from "../util/errors.js";
import { uuidV7 } from "../util/uuid-v7.js";
import { ActiveTurn } from "./active-turn.js";
import type { HostPromptInput } from "./prompt-content.js";

/** how many inputs (prompts and steering texts) may wait for ZCode behind the running turn of one session */
export const MAX_WAITING_INPUTS = 8;
/** abandoned inputs not found in ZCode's queue, watched in case ZCode starts them (the oldest are forgotten) */
export const MAX_ABANDONED_INPUTS = MAX_WAITING_INPUTS;
/** how long a `_session/steering` request waits for ZCode to say where the text went */
export const DEFAULT_STEER_OUTCOME_MS = 60_000;
/** how long inputs of ours may wait in a queue ZCode holds for its own reasons (adr/0038; the timeout table's `heldQueue`) */
export const DEFAULT_HELD_QUEUE_MS = 300_000;

/** What the client is told of a hold of ZCode's queue that is not ours (adr/0038). */
export interface QueueHoldNotice {
  held: boolean;
  /** ZCode's `queue.pauseReason` (V4 read path): `error` after a failed turn, `stopped` after a stop, `manual` after a pause */
  pauseReason?: string;
  /** prompts of ours waiting in the held queue */
  waitingPrompts?: number;
  /** when they are taken out and answered with an error unless ZCode resumes its queue first */
  deadline?: string;
  message?: string;
}

const PAUSE_REASONS: Record<string, string> = {
  error: "after a turn failed",
  stopped: "after a stop",
  manual: "on request (paused in ZCode)",
};

/** ZCode's pause reason in words ("" when it gave none) */
function pauseWords(reason: string | undefined): string {
  return reason === undefined ? "" : (PAUSE_REASONS[reason] ?? `(${reason})`);
}

/** turns ZCode starts on its own (never a prompt's): a background result, a subagent */
const OWN_TURN_SOURCES = new Set(["background_task", "subagent"]);

export type InputState = "waiting" | "sending" | "started" | "queued" | "unknown" | "running" | "ended" | "removed";
export type SteerOutcome = "injected" | "startedNewTurn";

export class SessionInput {
  state: InputState = "waiting";
  /** the id ZCode knows the input by (the V4 command id; `turn.started` carries it); undefined on the legacy line once acked */
  inputId: string | undefined = uuidV7();
  /** legacy `sendPrompt`: no id, paired with the next turn that is not ZCode's own */
  pairsByOrder = false;
  /** ZCode's stop went out for its turn (one stop per turn) */
  stopSent = false;
  /** its send's outcome is unknown and its answer went out: if ZCode runs it, only its turn is stopped */
  abandoned = false;
  /** cancelled while ZCode may hold it: if ZCode starts it, its turn is stopped at once (adr/0036) */
  stopOnStart = false;
  /** the turn ZCode runs for it after its answer went out (not shown; ended by `turnEnded`) */
  unseenTurnId: string | undefined;
  /** ZCode's end of its turn was seen (a stop must not go out for it any more: ZCode may run another turn now) */
  endSeen = false;
  /** the ACP turn it feeds: a prompt's from the start, a steering text's once it runs as a turn of its own */
  turn: ActiveTurn | undefined;
  /** a steering text waiting to learn where it went */
  private steerWaiter: { resolve(outcome: SteerOutcome): void; reject(error: BridgeError): void } | undefined;
  readonly steerOutcome: Promise<SteerOutcome> | undefined;

  constructor(
    readonly kind: "prompt" | "steer",
    readonly content: HostPromptInput,
  ) {
    if (kind === "prompt") this.turn = new ActiveTurn();
    else {
      this.steerOutcome = new Promise<SteerOutcome>((resolve, reject) => (this.steerWaiter = { resolve, reject }));
      this.steerOutcome.catch(() => undefined);
    }
  }

  /** still before ZCode's turn for it (or its injection): counts against the bound, answered by a stop */
  get waiting(): boolean {
    return this.state === "waiting" || this.state === "sending" || this.state === "queued" || this.state === "started";
  }

  get done(): boolean {
    return this.state === "ended" || this.state === "removed";
  }

  /** ZCode's queue item of a queued input (`queue_` + its id, as the CLI names it) */
  get queueItemId(): string | undefined {
    return this.inputId === undefined ? undefined : `queue_${this.inputId}`;
  }

  resolveSteer(outcome: SteerOutcome): void {
    this.steerWaiter?.resolve(outcome);
    this.steerWaiter = undefined;
  }

  rejectSteer(error: BridgeError): void {
    this.steerWaiter?.reject(error);
    this.steerWaiter = undefined;
  }
}

export interface ZCodeInputsDeps {
  native: NativeApi;
  where: { workspacePath: string; sessionId: string };
  logger: Logger;
  /** resume the session natively (ZCode's CLI no longer held it): a send is retried once after it */
  resume(): Promise<void>;
  steerOutcomeMs?: number;
  /** the bound of a hold that is not ours (default DEFAULT_HELD_QUEUE_MS) */
  heldQueueMs?: number;
  /** tell the client that ZCode holds (or no longer holds) prompts of ours (adr/0038) */
  queueNotice?(notice: QueueHoldNotice): void;
}

/** What a stop does with ZCode's running turn. */
export interface StopPlan {
  /** the answer of every input still waiting: cancelled, or this error */
  error?: BridgeError;
  /** send ZCode's stop for what runs (false when the host is gone: its queue went with it) */
  native: boolean;
  /**
   * a cancel: a prompt whose input ZCode may have started (sent, not yet paired) is answered when
   * its turn ends — its updates come before its answer — or after this many ms; every other
   * waiting input is answered at once
   */
  graceMs?: number;
}

export class ZCodeInputs {
  /** every input not yet done, oldest first */
  private readonly inputs: SessionInput[] = [];
  /** the chain of native input commands (sends, removals, stops, releases): one at a time, in order */
  private chain: Promise<void> = Promise.resolve();
  /** a stop may have left ZCode's queue held (autoDrain off): the next send releases it first */
  private mayBeHeld = false;
  /**
   * queue items of steering texts answered by a stop while ZCode held them as guides: ZCode turns
   * an undrained guide into a queue item when its turn ends, so they are removed again before a
   * held queue is released (else the release would run text the client was told was removed)
   */
  private leftovers: string[] = [];
  /**
   * a compaction failed or was stopped while inputs of ours were queued: ZCode holds its queue
   * after it (goal-compact.ts `setQueueAutoDrain(false)`, as after a stop), which would leave our
   * prompts waiting for ever; it is released when the compaction's turn ends, and again once
   * ZCode reports the hold (V4 read path) in case the first release came before it
   */
  private heldByCompaction = false;
  /**
   * inputs of ours wait in ZCode's queue while nothing runs (adr/0038): ZCode holds its queue for
   * reasons of its own (a failed turn, a stop or a pause in its desktop). Armed when a turn ends
   * with inputs of ours queued, or when ZCode reports the hold (V4 read path, with its reason);
   * disarmed when a turn starts or ZCode reports the queue running again. When it runs out, our
   * inputs are taken out of ZCode's queue and answered with an error (never released by us).
   */
  private heldWait: { timer: NodeJS.Timeout; reason: string | undefined; since: number } | undefined;
  /** the client was told of a hold (told again when it ends) */
  private holdNoticed = false;
  /** ZCode's last report (V4 read path): its queue is held, with this reason; undefined: not held, or not reported */
  private reportedHold: { reason: string | undefined } | undefined;

  constructor(private readonly deps: ZCodeInputsDeps) {}

  /** ZCode's compaction failed or was stopped (it holds its queue when items wait behind it). */
  compactionStopped(): void {
    if (this.inputs.some((input) => input.state === "queued")) this.heldByCompaction = true;
  }

  /**
   * ZCode reports whether its queue is held (V4 `queue.autoDrain`, with its `pauseReason`). After
   * a failed or stopped compaction with prompts of ours queued, the queue is released (on the
   * chain) so that they run: they were sent to run, and ZCode's hold protects the user's own order
   * of intent in its desktop, which a client's queued prompts keep. Any other hold is ZCode's (or
   * its user's) decision: not released by us; the client is told, and the wait is bounded
   * (adr/0038). The next send still meets ZCode's "held" refusal and releases it (adr/0023).
   */
  queueHeld(held = true, reason?: string): void {
    if (!held) {
      this.reportedHold = undefined;
      this.endHeldWait();
      return;
    }
    this.reportedHold = { reason };
    if (this.heldByCompaction) {
      this.heldByCompaction = false;
      this.releaseAfterCompaction();
      return;
    }
    if (this.heldInputs().length === 0) return;
    this.armHeldWait(reason, true);
  }

  /** inputs of ours ZCode holds in its queue (not those on their way out: cancelled, given up) */
  private heldInputs(): SessionInput[] {
    return this.inputs.filter((input) => input.state === "queued" && !input.stopOnStart && !input.abandoned);
  }

  /** a turn ended, or ZCode reports a hold: start the bounded wait (once), told to the client when the reason is known */
  private armHeldWait(reason: string | undefined, reported: boolean): void {
    if (this.running || this.heldInputs().length === 0) return;
    const ms = this.deps.heldQueueMs ?? DEFAULT_HELD_QUEUE_MS;
    if (!this.heldWait) {
      const timer = setTimeout(() => this.heldWaitOver(), ms);
      timer.unref?.();
      this.heldWait = { timer, reason, since: Date.now() };
    } else if (reason !== undefined) this.heldWait.reason = reason;
    // told once per hold (ZCode's later snapshots repeat it)
    if (!reported || this.holdNoticed) return;
    const waiting = this.heldInputs().filter((input) => input.kind === "prompt").length;
    const why = pauseWords(reason);
    const seconds = Math.round(ms / 1000);
    this.holdNoticed = true;
    this.deps.queueNotice?.({
      held: true,
      ...(reason !== undefined ? { pauseReason: reason } : {}),
      waitingPrompts: waiting,
      deadline: new Date(this.heldWait.since + ms).toISOString(),
      message:
        `ZCode paused this session's queue ${why}`.trimEnd() +
        `; ${waiting} prompt(s) wait in it. They run when the queue is resumed in ZCode; cancel them to drop them. ` +
        `If it is not resumed within ${seconds} s they are taken out of the queue and answered with an error.`,
    });
  }

  /** a turn started, or ZCode reports its queue running: nothing waits in a held queue any more */
  private endHeldWait(): void {
    if (this.heldWait) clearTimeout(this.heldWait.timer);
    this.heldWait = undefined;
    if (!this.holdNoticed) return;
    this.holdNoticed = false;
    this.deps.queueNotice?.({ held: false });
  }

  /** a stop or a withdrawal took inputs out: when none of ours is left in a held queue, the hold is over for us */
  private heldOverIfEmpty(): void {
    if (this.heldInputs().length === 0) this.endHeldWait();
  }

  /**
   * The bound of a hold ran out: each input of ours still in ZCode's queue is taken out (one
   * compare-and-set delete after the other, on the chain) and answered with QUEUE_HELD. One that
   * ZCode started meanwhile (the delete says it was not there) runs and is answered by its turn.
   */
  private heldWaitOver(): void {
    const wait = this.heldWait;
    this.heldWait = undefined;
    if (!wait) return;
    const held = this.heldInputs();
    if (this.running || held.length === 0) return;
    const seconds = Math.round((Date.now() - wait.since) / 1000);
    const why = pauseWords(wait.reason) || "(no reason given)";
    const error = new BridgeError(
      "QUEUE_HELD",
      `ZCode held this session's queue ${why} and did not resume it within ${seconds} s. ` +
        "The prompt was taken out of ZCode's queue and not run; send it again to run it.",
      { details: { pauseReason: wait.reason ?? null, waitedMs: Date.now() - wait.since } },
    );
    this.deps.logger.warn("ZCode held its queue past the bound; the inputs waiting in it are taken out", {
      pauseReason: wait.reason,
      inputs: held.length,
    });
    void this.onChain(async () => {
      for (const input of held) {
        if (input.state !== "queued" || input.stopOnStart || input.abandoned) continue;
        const removed = await this.removeOne(input);
        // not there: ZCode started it meanwhile (its turn answers it)
        if (removed === false) continue;
        const turn = input.turn;
        if (turn?.settle({ error })) turn.deliver();
        input.rejectSteer(error);
        if (removed === true) {
          input.state = "removed";
          this.forget(input);
        } else this.watch(input); // the removal failed: removed again before a release, stopped if ZCode starts it
      }
      this.heldOverIfEmpty();
    });
  }

  private releaseAfterCompaction(): void {
    if (!this.inputs.some((input) => input.state === "queued")) return;
    void this.onChain(async () => {
      try {
        await this.deps.native.releaseHeldQueue(this.deps.where);
        this.mayBeHeld = false;
      } catch (e) {
        this.deps.logger.warn("ZCode's queue, held after a compaction, could not be released", { error: describeError(e) });
      }
    });
  }

  /** inputs waiting for ZCode (the bound counts these) */
  get waitingCount(): number {
    return this.inputs.filter((input) => input.waiting).length;
  }

  /** the input whose turn runs now (paired by `turn.started`) */
  get running(): SessionInput | undefined {
    return this.inputs.find((input) => input.state === "running");
  }

  /** Is some input of ours, sent or not, still before its end? (the session is not idle) */
  get active(): boolean {
    // an abandoned input only watched in case ZCode starts it keeps nothing busy
    return this.inputs.some((input) => !(input.abandoned && input.state === "unknown"));
  }

  /** Admit a new input (a prompt or a steering text), or refuse it when too many wait. */
  admit(kind: "prompt" | "steer", content: HostPromptInput): SessionInput {
    if (this.waitingCount >= MAX_WAITING_INPUTS) {
      throw new BridgeError(
        "SESSION_BUSY",
        `Session ${this.deps.where.sessionId} already has ${MAX_WAITING_INPUTS} inputs waiting for ZCode. ` +
          "Wait for one to finish, or cancel them (session/cancel), then send this again.",
        { details: { waiting: this.waitingCount, limit: MAX_WAITING_INPUTS } },
      );
    }
    const input = new SessionInput(kind, content);
    this.inputs.push(input);
    return input;
  }

  /**
   * Hand `input` to ZCode, in order after every native input command before it; resolves with
   * the ack (the input's state says what ZCode did), rejects when ZCode refused it or the outcome
   * is unknown (then the input is `unknown`: a stop treats it as running).
   */
  send(input: SessionInput): Promise<SentInput | undefined> {
    let sent: SentInput | undefined;
    return this.onChain(async () => {
      sent = await this.sendNow(input);
    }).then(() => sent);
  }

  private async sendNow(input: SessionInput): Promise<SentInput | undefined> {
    if (input.done || input.turn?.settled) return undefined; // answered (cancelled) while it waited for its place
    const live = await this.deps.native.takesLiveInput();
    input.pairsByOrder = !live;
    if (this.mayBeHeld && live) {
      this.mayBeHeld = false;
      for (const queueItemId of this.leftovers.splice(0)) {
        await this.deps.native
          .removeQueuedInput({ ...this.deps.where, queueItemId })
          .catch((e: unknown) =>
            this.deps.logger.warn("a steering text could not be removed from ZCode's queue", { error: describeError(e) }),
          );
      }
      await this.deps.native.releaseHeldQueue(this.deps.where);
    }
    // answered meanwhile (a cancel while the release above or the line check ran: it never left the bridge)
    if (input.done || input.turn?.settled) return undefined;
    input.state = "sending";
    let retried: "held" | "session" | undefined;
    for (;;) {
      try {
        const sent = await this.deps.native.sendInput({
          ...this.deps.where,
          content: input.content.content,
          attachments: input.content.attachments,
          ...(input.inputId !== undefined ? { inputId: input.inputId } : {}),
          ...(input.kind === "steer" ? { delivery: "guide" as const } : {}),
        });
        this.admitted(input, sent);
        return sent;
      } catch (error) {
        const failure = isBridgeError(error) ? error : new BridgeError("HOST_CALL_FAILED", describeError(error), { cause: error });
        if (input.done) throw failure;
        if (!retried && live && reasonOf(failure) === "heldQueueDispositionRequired") {
          // ZCode held its queue (a stop, ours or the desktop's, left items): let it run again, then once more
          retried = "held";
          await this.deps.native.releaseHeldQueue(this.deps.where);
        } else if (!retried && failure.code === "SESSION_NOT_FOUND") {
          // ZCode's CLI no longer holds the session (it restarted): resume it, then once more
          retried = "session";
          this.deps.logger.info("ZCode did not hold the session for an input; resuming it and sending once more");
          await this.deps.resume();
        } else {
          // a lost ack: unknown, unless ZCode's turn for it was seen already (then it runs)
          if (!isOutcomeUnknown(failure)) input.state = "removed";
          else if (stateOf(input) !== "running") input.state = "unknown";
          if (input.state === "removed") this.forget(input);
          throw failure;
        }
        // the refused command id is spent in ZCode's command table: a new one for the new try
        input.inputId = uuidV7();
      }
    }
  }

  private admitted(input: SessionInput, sent: SentInput): void {
    if (sent.inputId === undefined) input.inputId = undefined;
    else if (sent.inputId !== input.inputId) {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode acknowledged the input under another id than the one it was sent with.", {
        details: { sent: input.inputId, acked: sent.inputId },
      });
    }
    // a turn.started for it may have come before its ack: it is running already
    if (input.state === "sending") input.state = sent.delivery === "startNow" ? "started" : "queued";
    if (input.kind === "steer" && sent.delivery === "startNow") input.resolveSteer("startedNewTurn"); // idle: ZCode started it
    // queued, and the turn it waited behind was seen to end before this ack: ZCode may hold its
    // queue already, and no turn end is left to start the bound (adr/0038); a turn start ends it
    if (input.state === "queued") this.armHeldWait(this.reportedHold?.reason, this.reportedHold !== undefined);
  }

  /**
   * ZCode started a turn (`turn.started`): the input it carries, now running, or undefined when the
   * turn is not one of ours (ZCode's own: a background result, a subagent, a desktop prompt).
   */
  pair(payload: TurnStartedPayload): SessionInput | undefined {
    const inputId = typeof payload.inputId === "string" && payload.inputId !== "" ? payload.inputId : undefined;
    this.endHeldWait(); // ZCode runs a turn: its queue is not held
    let input = inputId === undefined ? undefined : this.inputs.find((candidate) => candidate.inputId === inputId && !candidate.done);
    if (!input && !OWN_TURN_SOURCES.has(String(payload.inputSource))) {
      // the legacy line's one input has no id: the next turn that is not ZCode's own is its
      input = this.inputs.find((candidate) => candidate.pairsByOrder && (candidate.state === "sending" || candidate.state === "started"));
    }
    if (!input || input.state === "running") return undefined;
    input.state = "running";
    this.heldByCompaction = false; // the queue runs again
    // its answer went out (what it does is not shown), or it was cancelled while ZCode held it: stopped alone
    if (input.abandoned || input.stopOnStart) void this.onChain(() => this.stopAlone(input));
    if (input.kind === "steer") {
      input.turn ??= new ActiveTurn(); // a steering text that runs as a turn of its own: no prompt awaits it
      input.resolveSteer("startedNewTurn");
    }
    return input;
  }

  /** ZCode injected guided inputs into its running turn (`turn.steerDrained`). */
  drained(ids: readonly string[]): void {
    for (const input of this.inputs) {
      if (input.kind !== "steer" || input.inputId === undefined || !ids.includes(input.inputId)) continue;
      input.state = "ended";
      input.resolveSteer("injected");
      this.forget(input);
    }
  }

  /** Is `inputId` one of ours still before its turn? (a turn that carries it is not the running one's) */
  isWaiting(inputId: string): boolean {
    return this.inputs.some((input) => input.inputId === inputId && input.waiting);
  }

  /** The running input's turn ended. */
  ended(input: SessionInput): void {
    input.state = "ended";
    this.forget(input);
    // the turn of a compaction that failed or was stopped: what waits behind it is let run
    if (this.heldByCompaction) this.releaseAfterCompaction();
    // else ZCode starts what waits next; if it does not, its queue is held (bounded, adr/0038)
    else this.armHeldWait(this.reportedHold?.reason, this.reportedHold !== undefined);
  }

  /** An input that failed before anything of it reached ZCode: it is done, its steering request fails with `error`. */
  dropUnsent(input: SessionInput, error: BridgeError): void {
    if (input.done) return;
    input.state = "removed";
    input.rejectSteer(error);
    this.forget(input);
  }

  /** ZCode started `input`'s turn after its answer went out: watched until `turnEnded`, stopped alone (queued by `pair`). */
  runsUnseen(input: SessionInput, turnId: string): void {
    input.unseenTurnId = turnId;
    if (!input.abandoned && !input.stopOnStart) {
      input.abandoned = true;
      void this.onChain(() => this.stopAlone(input));
    }
  }

  /** A turn not shown as a prompt's ended: an input whose unseen turn it was is over (a stop for it is not sent any more). */
  turnEnded(turnId: string): void {
    for (const input of [...this.inputs]) {
      if (input.unseenTurnId !== turnId) continue;
      input.endSeen = true;
      this.ended(input);
    }
    this.armHeldWait(this.reportedHold?.reason, this.reportedHold !== undefined);
  }

  /** `$/cancel_request` of the running prompt: only its turn is stopped; what waits in ZCode's queue runs on. */
  stopOne(input: SessionInput): Promise<void> {
    return this.onChain(() => this.stopAlone(input));
  }

  /**
   * `$/cancel_request` of a waiting prompt: only it leaves ZCode's queue. Answered `cancelled` once
   * ZCode will not run it (never sent, or removed); if ZCode started it meanwhile, its turn is
   * stopped and its end answers it; `graceMs` bounds the wait (then it is watched: stopped if it starts).
   */
  withdraw(input: SessionInput, graceMs: number): Promise<void> {
    const turn = input.turn;
    if (!turn || input.done || turn.settled) return Promise.resolve();
    if (input.state === "waiting") {
      if (turn.settle({ stopReason: "cancelled" })) turn.deliver();
      input.state = "removed";
      this.forget(input);
      return Promise.resolve();
    }
    this.defer(input, turn, graceMs);
    return this.onChain(async () => {
      if (input.done || turn.settled || input.state === "waiting") {
        if (!input.done && input.state === "waiting") this.removeUnsent(input);
        return;
      }
      const removed = await this.removeOne(input);
      if (removed === true) {
        if (turn.settle({ stopReason: "cancelled" })) turn.deliver();
        input.state = "removed";
        this.forget(input);
      } else if (stateOf(input) === "running") await this.stopAlone(input);
      this.heldOverIfEmpty();
    });
  }

  /** A cancelled input ZCode may hold or run: answered by its removal or its stopped turn's end, bounded by `graceMs`. */
  private defer(input: SessionInput, turn: ActiveTurn, graceMs: number | undefined, error?: BridgeError): void {
    turn.cancelRequested = true;
    turn.abortSignal("cancel");
    input.stopOnStart = true;
    if (graceMs === undefined) return;
    turn.startGraceTimer(graceMs, () => {
      this.deps.logger.warn("a cancelled prompt was neither removed from ZCode's queue nor seen to end within the grace; answered");
      if (turn.settle(error ? { error: notRun(error) } : { stopReason: "cancelled" })) turn.deliver();
      // still watched: if ZCode starts it later, its turn is stopped (and not shown)
      if (input.state !== "running" && !input.done) this.watch(input);
    });
  }

  /** Keep an input whose answer went out but which ZCode may still start: `pair` stops it then. */
  private watch(input: SessionInput): void {
    input.abandoned = true;
    input.state = "unknown";
    const watched = this.inputs.filter((other) => other.abandoned && other.state === "unknown");
    for (const old of watched.slice(0, Math.max(0, watched.length - MAX_ABANDONED_INPUTS))) {
      old.state = "removed";
      this.forget(old);
    }
  }

  private removeUnsent(input: SessionInput): void {
    const turn = input.turn;
    if (turn?.settle({ stopReason: "cancelled" })) turn.deliver();
    input.state = "removed";
    this.forget(input);
  }

  /**
   * Take `input` out of ZCode's queue (one compare-and-set delete): true when removed, false when it
   * was not there, undefined when the removal failed (then it is removed again before a held queue
   * is released, and stopped if ZCode starts it).
   */
  private async removeOne(input: SessionInput): Promise<boolean | undefined> {
    const queueItemId = input.queueItemId;
    if (queueItemId === undefined) return false;
    const removed = await this.deps.native.removeQueuedInput({ ...this.deps.where, queueItemId }).catch((e: unknown) => {
      this.deps.logger.warn("a queued input could not be removed from ZCode's queue", { error: describeError(e) });
      return undefined;
    });
    if (removed === undefined) {
      input.stopOnStart = true;
      this.leftovers = [...this.leftovers.filter((id) => id !== queueItemId), queueItemId].slice(-MAX_WAITING_INPUTS);
    }
    return removed;
  }

  /** Wait (bounded) for ZCode to say where a steering text went. */
  async steerOutcome(input: SessionInput): Promise<SteerOutcome> {
    const ms = this.deps.steerOutcomeMs ?? DEFAULT_STEER_OUTCOME_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new BridgeError(
              "HOST_TIMEOUT",
              `ZCode took the steering text but did not say within ${ms} ms whether it joined the running turn or waits as a prompt ` +
                "of its own. It was withdrawn: if it waits as a prompt of its own it is removed, or stopped if ZCode starts it; " +
                "if ZCode already gave it to the running turn, that turn has it. Send it again if it still applies.",
            ),
          ),
        ms,
      );
      timer.unref?.();
    });
    try {
      return await Promise.race([input.steerOutcome!, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The one stop routine. Now: every input still waiting that never reached ZCode is answered
   * (cancelled, or `plan.error`) and leaves the bound. An input ZCode may hold or run is answered
   * only once ZCode will not run it (adr/0036): on the chain (after the sends in flight) each of
   * them leaves ZCode's queue (one compare-and-set delete after the other) and is answered when it
   * was removed; one that ZCode started meanwhile is stopped and answered by its turn's end (a
   * cancel: bounded by `graceMs`; else once the stop went out). Then — when one of ours still runs
   * or may run, checked right before it — ZCode's running turn is stopped. Resolves when that
   * native part is done (never rejects: failures are logged; the next send releases a held queue,
   * after removing again what could not be removed).
   */
  stop(plan: StopPlan): Promise<void> {
    /** what of ours runs now (the caller may end its ACP turn at once: ZCode still runs it until its end is seen) */
    const running = this.running;
    const answered = this.inputs.filter((input) => input.waiting || (input.state === "unknown" && !input.abandoned));
    const answer = (input: SessionInput): void => {
      const turn = input.turn;
      const error = plan.error;
      // a running input's turn is answered by its end (the stop ends it)
      if (turn && input.state !== "running" && turn.settle(error ? { error: notRun(error) } : { stopReason: "cancelled" })) turn.deliver();
      input.rejectSteer(
        error
          ? notRun(error)
          : new BridgeError(
              "TURN_FAILED",
              "The session's turn was cancelled before ZCode took the steering text; it was removed. Send it again as a prompt if it still applies.",
            ),
      );
    };
    /** prompts ZCode may hold or run: answered by their removal or their stopped turn's end, not now */
    const deferred: SessionInput[] = [];
    for (const input of answered) {
      const turn = input.turn;
      if (plan.native && input.state !== "waiting") input.stopOnStart = true; // if ZCode starts it, it is stopped
      if (plan.native && turn && !turn.settled && input.state !== "waiting") {
        this.defer(input, turn, plan.graceMs, plan.error);
        deferred.push(input);
        continue;
      }
      // a steering text ZCode may hold is answered once the chain knows where it is
      if (plan.native && !turn && input.state !== "waiting") continue;
      answer(input);
    }
    if (!plan.native) {
      for (const input of [...answered, ...(running ? [running] : []), ...this.inputs.filter((input) => input.abandoned)]) {
        input.state = "removed";
        this.forget(input);
      }
      this.mayBeHeld = false; // a new host has a new queue
      this.leftovers = [];
      this.endHeldWait();
      return Promise.resolve();
    }
    return this.onChain(async () => {
      /** not in ZCode's queue any more and not seen to end: ZCode may run it now */
      const mayRun: SessionInput[] = [];
      for (const input of answered) {
        // never sent (answered before its place on the chain came), or refused: nothing to remove
        if (input.state === "waiting" || input.state === "removed") {
          if (deferred.includes(input)) answer(input);
          input.state = "removed";
          this.forget(input);
          continue;
        }
        let removed: boolean | undefined = false;
        if (input.state === "queued" || input.state === "sending" || input.state === "unknown") removed = await this.removeOne(input);
        if (removed === true) {
          answer(input);
          input.state = "removed";
          this.forget(input);
          continue;
        }
        const now = stateOf(input);
        if (now === "ended" || now === "removed") continue;
        if (removed === undefined && input.kind === "steer") {
          // not removed: kept as a leftover (removed again before a release); its request is answered
          answer(input);
          input.state = "removed";
          this.forget(input);
          continue;
        }
        if (removed === false && input.kind === "steer" && now !== "running") {
          // held by ZCode as a guide of the running turn: the stop turns it into a queue item, removed before a release
          const queueItemId = input.queueItemId;
          if (queueItemId !== undefined) this.leftovers = [...this.leftovers, queueItemId].slice(-MAX_WAITING_INPUTS);
          answer(input);
          input.state = "removed";
          this.forget(input);
          continue;
        }
        // ZCode started it, may start it, or runs it now: the stop below ends it; `pair` stops it if it starts later
        if (removed === false || now === "started" || now === "running" || now === "unknown") mayRun.push(input);
        if (!deferred.includes(input) && input.kind === "prompt") answer(input);
      }
      // right before the stop: only when one of ours runs now or may have started (#10: never ZCode's next turn blindly)
      const targets = this.inputs.filter(
        (input) => input.state === "running" || ((input.state === "started" || input.pairsByOrder) && input.stopOnStart),
      );
      for (const input of [...(running ? [running] : []), ...mayRun]) if (!targets.includes(input)) targets.push(input);
      for (const input of [...targets]) {
        if (input.stopSent || input.endSeen || input.state === "removed") targets.splice(targets.indexOf(input), 1);
      }
      if (targets.length > 0) {
        for (const input of targets) input.stopSent = true;
        await this.deps.native
          .stopTurn(this.deps.where)
          .catch((e: unknown) => this.deps.logger.warn("ZCode's stop failed", { error: describeError(e) }));
        this.mayBeHeld = true;
      }
      // not running and not seen to start: watched (stopped if ZCode starts it later); the legacy line's input has no id to watch
      for (const input of mayRun) {
        if (input.state !== "unknown" && input.state !== "queued") continue;
        if (input.inputId === undefined || input.pairsByOrder) {
          input.state = "removed";
          this.forget(input);
        } else if (input.turn?.settled !== false) this.watch(input);
      }
      // a steering text that ZCode may run: stopped now (or when it starts); its request is answered
      for (const input of mayRun) if (input.kind === "steer") answer(input);
      // without a grace (a close, a failed turn): what was stopped is answered now; still watched in case ZCode starts it
      for (const input of deferred) {
        if (plan.graceMs !== undefined || input.done) continue;
        answer(input);
        if (input.state !== "running") this.watch(input);
      }
      this.heldOverIfEmpty();
    });
  }

  /**
   * An input whose send's outcome is unknown; the caller answered it already (the prompt with the
   * error, the steering request with it). Only this input is given up: on the chain, it leaves
   * ZCode's queue if it is there (a compare-and-set delete); if it runs, ZCode's turn is stopped;
   * if it is neither, it never reached ZCode or starts later, and `pair` stops its turn then. The
   * running turn of another input, the inputs behind it and ZCode's own turns go on. Resolves when
   * the native part is done (never rejects).
   */
  abandon(input: SessionInput): Promise<void> {
    if (input.done) return Promise.resolve();
    input.abandoned = true;
    input.rejectSteer(new BridgeError("HOST_CALL_FAILED", "ZCode did not confirm the steering text; it was not sent again."));
    // it runs now (its turn ends on the caller's side right after this, which marks it ended)
    if (input.state === "running") return this.onChain(() => this.stopAlone(input));
    return this.onChain(async () => {
      if (input.done) return;
      const queueItemId = input.queueItemId;
      const removed =
        queueItemId === undefined
          ? false
          : await this.deps.native
              .removeQueuedInput({ ...this.deps.where, queueItemId })
              .catch((e: unknown) =>
                this.deps.logger.warn("an input ZCode did not confirm could not be removed from its queue", { error: describeError(e) }),
              );
      if (removed === true) {
        input.state = "removed";
        this.forget(input);
        return;
      }
      // paired while the removal was out: it runs (pair queued its stop)
      if (stateOf(input) !== "unknown") return;
      // not in the queue, not seen to start: it never reached ZCode, or starts later (then `pair` stops it)
      const watched = this.inputs.filter((other) => other.abandoned && other.state === "unknown");
      for (const old of watched.slice(0, Math.max(0, watched.length - MAX_ABANDONED_INPUTS))) {
        old.state = "removed";
        this.forget(old);
      }
    });
  }

  /**
   * Stop ZCode's running turn, which is `input`'s (abandoned): one stop, and — since a stop holds
   * ZCode's queue — the queue released again at once, so what waits in it runs.
   */
  private async stopAlone(input: SessionInput): Promise<void> {
    // ZCode runs one turn of a session at a time: when another input of ours runs now, its turn is over
    // re-checked right before the stop: its turn must still run (seen to end: ZCode may run another turn now)
    if (
      input.stopSent ||
      input.endSeen ||
      input.state === "removed" ||
      this.inputs.some((other) => other !== input && other.state === "running")
    )
      return;
    input.stopSent = true;
    await this.deps.native
      .stopTurn(this.deps.where)
      .catch((e: unknown) => this.deps.logger.warn("ZCode's stop failed", { error: describeError(e) }));
    // nothing else was meant to stop: what waits in ZCode's queue (ours, or ZCode's own) runs on
    await this.deps.native.releaseHeldQueue(this.deps.where).catch((e: unknown) => {
      this.mayBeHeld = true; // the next send tries again
      this.deps.logger.warn("ZCode's held queue could not be released", { error: describeError(e) });
    });
  }

  /** Resolves when every native input command issued so far has answered. */
  settled(): Promise<void> {
    return this.chain;
  }

  private onChain(step: () => Promise<void>): Promise<void> {
    const result = this.chain.then(step);
    this.chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private forget(input: SessionInput): void {
    const index = this.inputs.indexOf(input);
    if (index >= 0) this.inputs.splice(index, 1);
  }
}

/** an input's state now (it changes while the stop routine awaits ZCode) */
function stateOf(input: SessionInput): InputState {
  return input.state;
}

function reasonOf(error: BridgeError): unknown {
  const details = error.details;
  return details?.reasonCode;
}

/** The error of an input answered by a stop that `error` caused: it was not run. */
function notRun(error: BridgeError): BridgeError {
  return new BridgeError(error.code, `Not run: ${error.message}`, { cause: error, ...(error.details ? { details: error.details } : {}) });
}
