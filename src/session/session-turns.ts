/**
 * The turns of one session (adr/0023): which ACP prompt receives ZCode's turn events now, how a
 * prompt, a steering text and a cancel become inputs of ZCode's queue (zcode-inputs.ts), and how a
 * turn ends — once, with its updates written before its answer and the next turn's after it.
 *
 * Every path that gives up on work runs the one stop routine of `ZCodeInputs.stop`: a cancel, a
 * turn the bridge fails itself, a lost subscription or host, a close. The running turn is ended
 * here; the waiting inputs are answered there. A send whose outcome is unknown gives up that input
 * alone (`ZCodeInputs.abandon`), except on the legacy line, whose one input is the session's work.
 */
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { TurnStartedPayload } from "../protocol/native-types.js";
import { BridgeError, describeError, isBridgeError, isOutcomeUnknown } from "../util/errors.js";
import type { ActiveTurn, TurnResult } from "./active-turn.js";
import { convertPrompt } from "./prompt-content.js";
import type { SessionDeps } from "./session-deps.js";
import type { SessionLifecycle } from "./session-lifecycle.js";
import type { IdleBehavior, SteeringOutcome } from "./steering.js";
import type { TurnOutcome } from "./stop-reason.js";
import type { TurnBarrier, UpdateCoalescer } from "./update-coalescer.js";
import { ZCodeInputs, type SessionInput } from "./zcode-inputs.js";

/** a send that failed this way failed with the host: nothing can be stopped (the next host has a new queue) */
const HOST_GONE = new Set(["HOST_EXITED", "CHANNEL_CLOSED", "HOST_START_FAILED"]);

/** What a session/prompt request may do with its own prompt (its `$/cancel_request`). */
export interface PromptControl {
  /** cancel this prompt only: out of ZCode's queue, or its turn stopped if it runs */
  cancel(): void;
  /** is its turn the one ZCode runs now? */
  runs(): boolean;
}

function toBridge(error: unknown): BridgeError {
  return isBridgeError(error) ? error : new BridgeError("HOST_CALL_FAILED", describeError(error), { cause: error });
}

/** What the turns need of their session; the engine builds it over its private members. */
export interface TurnSession {
  readonly sessionId: string;
  readonly where: { workspacePath: string; sessionId: string };
  readonly logger: Logger;
  readonly deps: SessionDeps;
  readonly lifecycle: SessionLifecycle;
  readonly updates: UpdateCoalescer;
  post(update: SessionUpdate): void;
  /** before an input is sent: resync when needed, check the subscription; throws when nothing may be sent */
  beforeSend(signal: AbortSignal, turn: ActiveTurn | undefined): Promise<void>;
  /** the next operation resynchronises first */
  markResync(): void;
  /** the native turn ended: its late events are dropped; final updates for tools still open */
  closeTurnEvents(turn: ActiveTurn, early: string | undefined): void;
  /**
   * the usage and snapshot read after a completed turn; its updates go through `post`, which puts
   * them in front of the turn's boundary (adr/0036: the next turn's updates wait behind it)
   */
  reportUsage(turn: ActiveTurn, post: (update: SessionUpdate) => void): Promise<void>;
  /** resume the session natively (ZCode's CLI lost it) */
  resume(): Promise<void>;
  /** does ZCode run a turn of this session now (its state, read)? */
  runningNow(): Promise<boolean>;
}

export class SessionTurns {
  readonly inputs: ZCodeInputs;
  /** the input whose turn receives ZCode's turn events now (paired by its `turn.started`) */
  private current: { input: SessionInput; turn: ActiveTurn } | undefined;
  /** counts session/cancel: a prompt that waited for its session sees a cancel meanwhile */
  private cancels = 0;
  /** turn boundaries lifted once these answers are written, by the value answered (adr/0036) */
  private readonly answerHolds = new Map<unknown, () => void>();
  /** ZCode accepted a prompt (or may have): it keeps the session (deferred persistence) */
  prompted: boolean;

  constructor(
    private readonly session: TurnSession,
    prompted: boolean,
  ) {
    this.prompted = prompted;
    this.inputs = new ZCodeInputs({
      native: session.deps.native,
      where: session.where,
      logger: session.logger,
      resume: () => session.resume(),
      ...(session.deps.steerOutcomeMs !== undefined ? { steerOutcomeMs: session.deps.steerOutcomeMs } : {}),
      ...(session.deps.heldQueueMs !== undefined ? { heldQueueMs: session.deps.heldQueueMs } : {}),
      // a session-level update: whether ZCode holds prompts of ours, why, and until when (adr/0038)
      queueNotice: (notice) => session.post({ sessionUpdate: "session_info_update", _meta: { zcode: { queueHold: notice } } }),
    });
  }

  get cancelCount(): number {
    return this.cancels;
  }

  /** the turn that may receive native events (running, not settled) */
  get live(): ActiveTurn | undefined {
    const turn = this.current?.turn;
    return turn && !turn.settled ? turn : undefined;
  }

  /** a turn runs or an input of ours waits: the session is not idle */
  get busy(): boolean {
    return this.current !== undefined || this.inputs.active;
  }

  /** Is `inputId` an input of ours still before its turn? */
  isWaiting(inputId: string): boolean {
    return this.inputs.isWaiting(inputId);
  }

  // ---- input ----

  /**
   * session/prompt: the prompt becomes an input of ZCode's queue, sent in turn with the session's
   * operations; it answers when its own turn ends. `cancelsBefore`: the `cancelCount` when the
   * request arrived; a cancel meanwhile answers it `cancelled` without a turn.
   */
  async prompt(
    blocks: readonly ContentBlock[],
    cancelsBefore = this.cancels,
    request: { awaited?: boolean; control?: (control: PromptControl) => void } = {},
  ): Promise<TurnResult> {
    const { lifecycle, deps } = this.session;
    if (lifecycle.ended) throw lifecycle.closedError();
    if (this.cancels !== cancelsBefore) return { stopReason: "cancelled" };
    const content = convertPrompt(blocks, this.session.where.workspacePath);
    if (this.busy && !(await deps.native.takesLiveInput())) {
      throw new BridgeError(
        "SESSION_BUSY",
        `Session ${this.session.sessionId} is still running (or stopping) its previous prompt, and this ZCode release cannot ` +
          "queue input while a turn runs (it lacks the V4 conversation commands). Wait for that prompt's answer, then send this one.",
      );
    }
    if (lifecycle.ended) throw lifecycle.closedError();
    if (this.cancels !== cancelsBefore) return { stopReason: "cancelled" };
    const input = this.inputs.admit("prompt", content);
    const turn = input.turn!;
    // only a session/prompt request waits for the answer's write (a steered turn of its own has none)
    turn.awaited = request.awaited !== false;
    request.control?.({ cancel: () => this.cancelOne(input), runs: () => this.current?.input === input });
    lifecycle.touch();
    void lifecycle
      .run(async (signal) => {
        if (turn.settled) return;
        await this.session.beforeSend(signal, turn);
        if (turn.settled) return;
        turn.sendIssued = true;
        const sent = await this.inputs.send(input);
        if (sent) this.prompted = true; // ZCode keeps the session from its first accepted prompt
        // its ack was lost and recovered from ZCode's record: its turn may have come and gone unseen
        if (sent?.recovered && input.state === "started" && !(await this.session.runningNow())) {
          this.endTurn(
            turn,
            {
              error: new BridgeError(
                "HOST_CALL_FAILED",
                "ZCode took this prompt (its acknowledgement was lost and recovered from ZCode's record), but its turn was not seen " +
                  "and ZCode is idle: it may have run already. It was not sent again; check the session in ZCode.",
              ),
            },
            false,
          );
          this.inputs.ended(input);
        }
      })
      .catch((error: unknown) => this.sendFailed(input, turn, error));
    return turn.result;
  }

  private sendFailed(input: SessionInput, turn: ActiveTurn, error: unknown): void {
    const failure = isBridgeError(error) ? error : new BridgeError("HOST_CALL_FAILED", describeError(error), { cause: error });
    if (isOutcomeUnknown(failure)) {
      this.session.markResync();
      if (HOST_GONE.has(failure.code) || input.pairsByOrder) {
        this.prompted = true; // it may have been accepted
        // the host went (its queue with it), or the legacy line's one input: the stop routine ends what runs
        this.giveUp(failure, { native: !HOST_GONE.has(failure.code), turn });
        return;
      }
      if (input.state === "unknown" || input.state === "running") {
        this.prompted = true; // it may have been accepted
        // an input of ZCode's queue: only it is given up (left out of the queue, or stopped if it runs);
        // the turn running before it and the prompts behind it go on
        void this.inputs.abandon(input);
        this.endTurn(turn, turn.cancelRequested ? { stopReason: "cancelled" } : { error: failure }, false);
        return;
      }
      // it failed before it was sent (a resync that could not subscribe): nothing of it reached ZCode
    }
    if (turn.settled) return;
    if (input.state !== "running") this.inputs.ended(input);
    this.endTurn(turn, turn.cancelRequested ? { stopReason: "cancelled" } : { error: failure }, false);
  }

  /** `_session/steering`: the text joins ZCode's running turn as guided input, or (idle) see `idle`. */
  async steer(blocks: readonly ContentBlock[], idle: IdleBehavior): Promise<SteeringOutcome> {
    const { lifecycle, deps } = this.session;
    if (lifecycle.ended) throw lifecycle.closedError();
    const current = this.live;
    if (!this.busy || (current?.cancelRequested === true && !this.inputs.active)) {
      if (idle === "promptRequired") return { outcome: "promptRequired", reason: "noRunningTurn" };
      // the behaviour both adapters keep for clients that did not opt in: a turn no request awaits
      const detached = this.prompt(blocks, this.cancels, { awaited: false });
      detached.catch((e: unknown) =>
        this.session.logger.warn("a steered prompt started as its own turn failed", { error: describeError(e) }),
      );
      return { outcome: "startedNewTurn" };
    }
    if (!(await deps.native.takesLiveInput())) {
      throw new BridgeError(
        "SESSION_BUSY",
        "This ZCode release cannot take input while a turn runs (it lacks the V4 conversation commands), so the text was not sent. " +
          "Send it as a new prompt once the turn ends.",
      );
    }
    const input = this.inputs.admit("steer", convertPrompt(blocks, this.session.where.workspacePath));
    lifecycle.touch();
    let sending = false;
    try {
      await lifecycle.run(async (signal) => {
        await this.session.beforeSend(signal, undefined);
        sending = true;
        await this.inputs.send(input).catch((error: unknown) => {
          // ZCode may hold it: it leaves ZCode's queue, or its turn is stopped (nothing else is)
          if (isOutcomeUnknown(error) && !HOST_GONE.has(error.code)) void this.inputs.abandon(input);
          else if (input.state === "sending" || input.state === "waiting") this.inputs.dropUnsent(input, toBridge(error));
          throw error;
        });
      });
    } catch (error) {
      // it failed before its send (a resync, no subscription, a refused operation): nothing of it reached ZCode
      if (!sending || input.state === "waiting") this.inputs.dropUnsent(input, toBridge(error));
      throw error;
    }
    const outcome = await this.inputs.steerOutcome(input).catch((error: unknown) => {
      // ZCode never said where it went (the bounded wait ran out): given up like an input whose ack was lost
      if (isBridgeError(error) && error.code === "HOST_TIMEOUT") void this.inputs.abandon(input);
      throw error;
    });
    this.session.logger.debug("steering text placed", { outcome });
    return { outcome };
  }

  // ---- ZCode's side ----

  /**
   * `turn.started`: the input it carries becomes the running turn (its ACP turn receives the
   * events from now on); undefined when the turn is not one of ours.
   */
  turnStarted(turnId: string, payload: TurnStartedPayload): ActiveTurn | undefined {
    const input = this.inputs.pair(payload);
    if (!input) return undefined;
    const turn = input.turn!;
    if (turn.settled) {
      // answered already (given up while it waited): what it does is not shown; `pair` queued its
      // stop, sent only while this turn still runs (`foreignTurnEnded` marks its end)
      this.inputs.runsUnseen(input, turnId);
      return undefined;
    }
    const previous = this.current;
    if (previous && !previous.turn.settled) {
      this.endTurn(
        previous.turn,
        previous.turn.cancelRequested
          ? { stopReason: "cancelled" }
          : {
              error: new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode started the next input's turn before this turn's end was seen.", {
                details: { turnId, previousTurnId: previous.turn.turnId },
              }),
            },
        false,
      );
    }
    turn.turnId = turnId;
    turn.sendIssued = true;
    this.current = { input, turn };
    if (turn.cancelRequested) {
      // cancelled while its input was on its way: the grace now ends it as the running turn
      turn.startGraceTimer(this.session.deps.cancelGraceMs, () => {
        this.session.markResync();
        this.endTurn(turn, { stopReason: "cancelled" }, false);
      });
    }
    this.session.logger.debug("native turn bound", { turn: turn.number, turnId });
    return turn;
  }

  /** A turn that is not the running prompt's ended (ZCode's own, or an input of ours given up). */
  foreignTurnEnded(turnId: string): void {
    this.inputs.turnEnded(turnId);
  }

  /** `turn.steerDrained`: guided inputs joined ZCode's running turn. */
  steerDrained(ids: readonly string[]): void {
    this.inputs.drained(ids);
  }

  /** ZCode's compaction failed or was stopped: it holds what is queued behind it (see `queueHeld`). */
  compactionStopped(): void {
    this.inputs.compactionStopped();
  }

  /** ZCode reports whether its queue is held (V4 `queue.autoDrain`, `pauseReason`; adr/0038). */
  queueHeld(held = true, reason?: string): void {
    this.inputs.queueHeld(held, reason);
  }

  // ---- stopping ----

  /** session/cancel: the running turn stops once, every waiting input is answered `cancelled`. Answered at once in every state. */
  cancel(): void {
    this.cancels++;
    const turn = this.live;
    if (turn && !turn.cancelRequested) this.cancelRunning(turn);
    void this.inputs.stop({ native: true, graceMs: this.session.deps.cancelGraceMs });
  }

  /**
   * The running turn is cancelled: its interactions are withdrawn, and its end answers `cancelled`,
   * at the latest after the cancel grace (then the session is resynchronised).
   */
  private cancelRunning(turn: ActiveTurn): void {
    turn.cancelRequested = true;
    turn.abortSignal("cancel");
    void this.session.deps.broker
      .withdrawAll(this.session.sessionId, "cancel")
      .catch((e) => this.session.logger.warn("withdrawAll failed", { error: describeError(e) }));
    turn.startGraceTimer(this.session.deps.cancelGraceMs, () => {
      this.session.logger.warn("no terminal event after ZCode's stop; the session will be resynchronised", {
        graceMs: this.session.deps.cancelGraceMs,
      });
      this.session.markResync();
      this.endTurn(turn, { stopReason: "cancelled" }, false);
    });
  }

  /**
   * `$/cancel_request` of one prompt: only it is cancelled. Running: ZCode's turn is stopped (the
   * queue behind it goes on) and its end answers `cancelled`; waiting: it leaves ZCode's queue and is
   * answered once it is out (or, if ZCode started it meanwhile, once its stopped turn ended).
   */
  private cancelOne(input: SessionInput): void {
    const turn = input.turn;
    if (!turn || turn.settled || turn.cancelRequested) return;
    if (this.current?.input === input) {
      this.cancelRunning(turn);
      void this.inputs.stopOne(input);
      return;
    }
    void this.inputs.withdraw(input, this.session.deps.cancelGraceMs);
  }

  /** The bridge fails the running turn itself (an interaction it cannot answer, a protocol error): stop it, fail what waits. */
  failTurn(turn: ActiveTurn, error: BridgeError): void {
    if (turn.settled) return;
    this.session.logger.warn("turn failed", { code: error.code, message: error.message });
    this.session.markResync();
    this.giveUp(error, { native: true, turn });
  }

  /**
   * The bridge gives up on the session's work with `error`: the stop routine (ZCode's stop unless
   * the host is gone), the running turn ends with the error (or cancelled), every waiting input
   * with a "not run" error.
   */
  giveUp(error: BridgeError, how: { native: boolean; turn?: ActiveTurn }): void {
    const own = how.turn;
    // the turn given up on answers with the error itself; the inputs waiting behind it answer "not run"
    if (own && own !== this.live && own.settle(own.cancelRequested ? { stopReason: "cancelled" } : { error })) own.deliver();
    void this.inputs.stop({ error, native: how.native });
    const live = this.live;
    if (live) this.endTurn(live, live.cancelRequested ? { stopReason: "cancelled" } : { error }, false);
  }

  /** close: everything ends `cancelled`; resolves when ZCode's side (removals, stop) is done. */
  closeAll(native: boolean): Promise<void> {
    this.cancels++;
    const stopped = this.inputs.stop({ native });
    const turn = this.live;
    if (turn) {
      turn.cancelRequested = true;
      this.endTurn(turn, { stopReason: "cancelled" }, false);
    }
    return stopped;
  }

  // ---- the end of a turn ----

  /** ZCode's end of the turn (`turn.completed` / `turn.failed`): seen, so no stop goes out for it any more. */
  turnEndSeen(turn: ActiveTurn, outcome: TurnOutcome, reportUsage: boolean): void {
    if (this.current?.turn === turn) this.current.input.endSeen = true;
    this.endTurn(turn, outcome, reportUsage);
  }

  /**
   * End the turn with this outcome (first one wins). The turn boundary (adr/0036) is set here, at
   * once: what is posted from now on (the next turn's updates) waits behind it; the turn's own
   * final updates (closed tools, usage) go in front of it; the prompt answers once they were
   * written, and the boundary lifts once that answer was written.
   */
  endTurn(turn: ActiveTurn, outcome: TurnOutcome, reportUsage: boolean): void {
    if (!turn.settle(outcome)) return;
    const current = this.current;
    if (current?.turn !== turn) {
      // never ran as ZCode's turn (refused, or answered while waiting): nothing of it was shown
      turn.deliver();
      return;
    }
    this.current = undefined;
    this.inputs.ended(current.input);
    const early =
      "error" in outcome ? `Not finished: ${outcome.error.message}` : outcome.stopReason === "cancelled" ? "Cancelled." : undefined;
    this.session.closeTurnEvents(turn, early);
    const boundary = this.session.updates.barrier();
    void this.session.deps.broker
      .withdrawAll(this.session.sessionId, "turn-end")
      .catch((e) => this.session.logger.warn("withdrawAll failed", { error: describeError(e) }));
    void this.finishTurn(turn, reportUsage, boundary);
  }

  private async finishTurn(turn: ActiveTurn, reportUsage: boolean, boundary: TurnBarrier): Promise<void> {
    if (reportUsage)
      await this.session
        .reportUsage(turn, (update) => boundary.post(update))
        .catch((e) => this.session.logger.warn("usage report failed", { error: describeError(e) }));
    await boundary.passed();
    const answer = turn.deliver();
    // from here what waits behind the boundary waits only for the client to read the answer
    boundary.answered();
    // the next turn's updates go out after this prompt's answer (a client shows them under the right prompt)
    if (turn.awaited && this.session.deps.answerWrites === true && !this.session.lifecycle.ended) {
      this.answerHolds.set(answer, () => {
        this.answerHolds.delete(answer);
        boundary.lift();
      });
      return;
    }
    boundary.lift();
  }

  /** The answer `answer` (the prompt's result or error) was written to the client. */
  answerWritten(answer: unknown): void {
    this.answerHolds.get(answer)?.();
  }

  /** Let every held update go (the session closes). */
  releaseHolds(): void {
    for (const done of [...this.answerHolds.values()]) done();
  }
}
