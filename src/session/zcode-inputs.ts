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

  constructor(private readonly deps: ZCodeInputsDeps) {}

  /** ZCode's compaction failed or was stopped (it holds its queue when items wait behind it). */
  compactionStopped(): void {
    if (this.inputs.some((input) => input.state === "queued")) this.heldByCompaction = true;
  }

  /**
   * ZCode reports its queue held. After a failed or stopped compaction with prompts of ours queued,
   * the queue is released (on the chain) so that they run: they were sent to run, and ZCode's hold
   * protects the user's own order of intent in its desktop, which a client's queued prompts keep.
   * Any other hold (a stop) is left as it is: the next send releases it.
   */
  queueHeld(): void {
    if (!this.heldByCompaction) return;
    this.heldByCompaction = false;
    this.releaseAfterCompaction();
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
  }

  /**
   * ZCode started a turn (`turn.started`): the input it carries, now running, or undefined when the
   * turn is not one of ours (ZCode's own: a background result, a subagent, a desktop prompt).
   */
  pair(payload: TurnStartedPayload): SessionInput | undefined {
    const inputId = typeof payload.inputId === "string" && payload.inputId !== "" ? payload.inputId : undefined;
    let input = inputId === undefined ? undefined : this.inputs.find((candidate) => candidate.inputId === inputId && !candidate.done);
    if (!input && !OWN_TURN_SOURCES.has(String(payload.inputSource))) {
      // the legacy line's one input has no id: the next turn that is not ZCode's own is its
      input = this.inputs.find((candidate) => candidate.pairsByOrder && (candidate.state === "sending" || candidate.state === "started"));
    }
    if (!input || input.state === "running") return undefined;
    input.state = "running";
    this.heldByCompaction = false; // the queue runs again
    if (input.abandoned) void this.onChain(() => this.stopAlone(input)); // its answer went out: what it does is not shown
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
                "of its own. It was not sent again; its answer, if any, appears in the session.",
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
   * The one stop routine. Now: every input still waiting is answered (cancelled, or `plan.error`)
   * and leaves the bound. Then, on the chain (after the sends in flight): each of them that ZCode
   * may hold leaves its queue (one compare-and-set delete after the other), and — when one of ours
   * runs or may run — ZCode's running turn is stopped. Resolves when that native part is done
   * (never rejects: failures are logged; the next send releases a held queue).
   */
  stop(plan: StopPlan): Promise<void> {
    const running = this.running;
    const answered = this.inputs.filter((input) => input.waiting || (input.state === "unknown" && !input.abandoned));
    /** prompts ZCode may have started: answered by their turn's end (or the grace), not now */
    const awaitingTurn: SessionInput[] = [];
    for (const input of answered) {
      const error = plan.error;
      const turn = input.turn;
      if (turn && !error && plan.graceMs !== undefined && (input.state === "sending" || input.state === "started")) {
        turn.cancelRequested = true;
        turn.abortSignal("cancel");
        turn.startGraceTimer(plan.graceMs, () => {
          this.deps.logger.warn("a cancelled prompt's turn did not end within the grace; answered cancelled");
          if (turn.settle({ stopReason: "cancelled" })) turn.deliver();
          if (input.state !== "running") this.ended(input);
        });
        awaitingTurn.push(input);
        continue;
      }
      if (turn && turn.settle(error ? { error: notRun(error) } : { stopReason: "cancelled" })) turn.deliver();
      input.rejectSteer(
        error
          ? notRun(error)
          : new BridgeError(
              "TURN_FAILED",
              "The session's turn was cancelled before ZCode took the steering text; it was removed. Send it again as a prompt if it still applies.",
            ),
      );
    }
    if (!plan.native) {
      for (const input of [...answered, ...(running ? [running] : []), ...this.inputs.filter((input) => input.abandoned)]) {
        input.state = "removed";
        this.forget(input);
      }
      this.mayBeHeld = false; // a new host has a new queue
      this.leftovers = [];
      return Promise.resolve();
    }
    return this.onChain(async () => {
      // one stop per input: a second cancel (the transport and the handler both report one) adds none
      const stopFor = new Set<SessionInput>();
      if (running && !running.stopSent) stopFor.add(running);
      for (const input of answered) {
        // never sent (answered before its place on the chain came), or refused: nothing to remove
        if (input.state === "waiting" || input.state === "removed") {
          input.state = "removed";
          this.forget(input);
          continue;
        }
        // ZCode started it, may have, or runs it now (paired while the stop waited for its send)
        if ((input.state === "started" || input.state === "unknown" || input.state === "running" || input.pairsByOrder) && !input.stopSent)
          stopFor.add(input);
        const queueItemId = input.queueItemId;
        let removed: boolean | void = undefined;
        if (queueItemId !== undefined && (input.state === "queued" || input.state === "sending" || input.state === "unknown")) {
          removed = await this.deps.native
            .removeQueuedInput({ ...this.deps.where, queueItemId })
            .catch((e: unknown) =>
              this.deps.logger.warn("a queued input could not be removed from ZCode's queue", { error: describeError(e) }),
            );
          // not in the queue any more and not seen to end: ZCode may have started it (a prompt), or
          // holds it as a guide of the running turn, which the stop turns into a queue item
          if (removed === false && stateOf(input) !== "ended") {
            if (input.kind === "steer") this.leftovers = [...this.leftovers, queueItemId].slice(-MAX_WAITING_INPUTS);
            else if (!input.stopSent) stopFor.add(input);
          }
        }
        if (awaitingTurn.includes(input)) {
          // its turn runs, or will: the turn's end answers it (or the grace)
          const now = stateOf(input);
          if (removed !== true && (now === "started" || now === "running" || now === "queued")) continue;
          const turn = input.turn!;
          if (turn.settle({ stopReason: "cancelled" })) turn.deliver();
        }
        if (stateOf(input) !== "running") {
          input.state = "removed";
          this.forget(input);
        }
      }
      if (stopFor.size > 0) {
        for (const input of stopFor) input.stopSent = true;
        await this.deps.native
          .stopTurn(this.deps.where)
          .catch((e: unknown) => this.deps.logger.warn("ZCode's stop failed", { error: describeError(e) }));
        this.mayBeHeld = true;
      }
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
    if (input.stopSent || this.inputs.some((other) => other !== input && other.state === "running")) return;
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
