/**
 * One ACP session bound to one native ZCode session: its lifecycle (session-lifecycle.ts, one
 * operation at a time, adr/0017), the host event subscription, the snapshot state, history
 * replay, resynchronisation and settings. Its turns — which prompt receives ZCode's events, and
 * ZCode's input queue with the one stop routine — live in session-turns.ts and zcode-inputs.ts
 * (adr/0023). The engine talks to the ACP client only through `ClientPort` and to the host only
 * through `NativeApi`.
 */
import type { ContentBlock, SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { NativeSubscription, SessionRef } from "../native/native-api.js";
import type { SessionDeps } from "./session-deps.js";
import type { SessionSnapshot } from "../protocol/native-types.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import type { ActiveTurn, TurnResult } from "./active-turn.js";
import { promptUsage, withContextComposition } from "./prompt-usage.js";
import { HistoryReplay } from "./history-replay.js";
import { clientSurface } from "./stream-translator.js";
import { SnapshotState, type ApplyOptions } from "./snapshot-state.js";
import type { SteeringOutcome, IdleBehavior } from "./steering.js";
import { EventRouter, type RoutedSession } from "./event-router.js";
import { UpdateCoalescer } from "./update-coalescer.js";
import { setSessionConfigOption, setSessionMode, type SettingsContext } from "./session-settings.js";
import { SessionLifecycle } from "./session-lifecycle.js";
import { SessionTurns, type PromptControl } from "./session-turns.js";

const RUNNING_STATUSES = new Set(["running", "waiting"]);

function isRunning(snapshot: SessionSnapshot): boolean {
  return RUNNING_STATUSES.has(String(snapshot.session.status)) || Boolean(snapshot.runtime?.activeTurnId);
}

/** a subscription that ended with one of these ended with the host (the drop path); any other end leaves the host running */
const HOST_GONE = new Set(["HOST_EXITED", "CHANNEL_CLOSED", "HOST_START_FAILED"]);

/** how long ZCode may take to confirm a subscription with its first snapshot (SessionDeps.subscribeConfirmMs) */
export const DEFAULT_SUBSCRIBE_CONFIRM_MS = 30_000;

/**
 * How long one resynchronisation may take in all (resume, subscribe, read, wait for ZCode's turn
 * to end): each of its calls has its own host timeout, this bounds their sum, so that a prompt
 * waiting on a resync whose answers never come is answered (adr/0033).
 */
export const DEFAULT_RESYNC_TIMEOUT_MS = 180_000;

export type CloseReason = "close" | "disconnect" | "release";

function toBridgeError(error: unknown, code: "HOST_CALL_FAILED" | "INTERNAL" = "HOST_CALL_FAILED"): BridgeError {
  return isBridgeError(error) ? error : new BridgeError(code, describeError(error), { cause: error });
}

export class SessionEngine {
  readonly sessionId: string;
  readonly workspacePath: string;
  /** state and the one-at-a-time queue of this session's operations */
  readonly lifecycle: SessionLifecycle;
  private readonly logger: Logger;
  /** the to-do list as plan operations for a client that asked for them (read when used: the closure runs after the constructor) */
  private readonly state = new SnapshotState(() => clientSurface(this.deps.client.capabilities).planOps);
  private readonly router: EventRouter;
  private subscription: NativeSubscription | undefined;
  private subscriptionGeneration = 0;
  /** ZCode holds the session resident for us (created or resumed in the current host incarnation) */
  private resident = false;
  /** the session's turns and ZCode's input queue (session-turns.ts) */
  private readonly turns: SessionTurns;
  private needsResync = false;
  private opening: Promise<void> | undefined;
  /** the open succeeded (the snapshot is applied) */
  private opened = false;
  private closing: Promise<void> | undefined;
  private nativeClose: Promise<void> | undefined;
  private readonly updates: UpdateCoalescer;
  /** the slash commands go out again when the first prompt starts */
  private commandsAgainAtPrompt = false;
  /** this engine was opened by session/load (its commands went out before the response) */
  private replayed = false;

  constructor(
    ref: SessionRef,
    private readonly deps: SessionDeps,
    options: { prompted: boolean; reopened?: boolean },
  ) {
    this.sessionId = ref.sessionId;
    this.workspacePath = ref.workspacePath;
    this.lifecycle = new SessionLifecycle(this.sessionId);
    this.logger = deps.logger.child(`session.${this.sessionId}`);
    this.updates = new UpdateCoalescer({
      send: (update, target) => this.deps.client.sessionUpdate({ sessionId: target ?? this.sessionId, update }),
      onError: (e) => this.logger.warn("session/update not delivered", { error: describeError(e) }),
      merge: deps.mergeDeltas,
    });
    this.turns = new SessionTurns(
      {
        sessionId: this.sessionId,
        where: this.where,
        logger: this.logger,
        deps,
        lifecycle: this.lifecycle,
        updates: this.updates,
        post: (update) => this.post(update),
        beforeSend: (signal, turn) => this.beforeSend(signal, turn),
        markResync: () => {
          this.needsResync = true;
        },
        closeTurnEvents: (turn, early) => {
          if (turn.turnId) this.router.turnEnded(turn.turnId);
          // tools the client saw running get a final status before the prompt answers
          if (early !== undefined) for (const update of this.router.closeOpenTools(early)) this.post(update);
          this.router.forgetTools();
        },
        reportUsage: (turn, post) => this.reportUsage(turn, post),
        runningNow: async () => isRunning(await this.readSnapshot()),
        resume: () => this.resumeAfterRuntimeRestart(),
      },
      options.prompted,
    );
    this.router = new EventRouter(this.routedSession(), deps, this.state, -1);
    // a released session opened again: the client has known its id all along
    if (options.reopened) this.publish();
  }

  /** What the event router may do with this session: a narrow view over the private members. */
  private routedSession(): RoutedSession {
    const incarnation = (): number => this.incarnation;
    const liveTurn = (): ActiveTurn | undefined => this.turns.live;
    return {
      sessionId: this.sessionId,
      workspacePath: this.workspacePath,
      logger: this.logger,
      get incarnation() {
        return incarnation();
      },
      get liveTurn() {
        return liveTurn();
      },
      endTurn: (turn, outcome, reportUsage) => this.turns.turnEndSeen(turn, outcome, reportUsage),
      turnStarted: (turnId, payload) => this.turns.turnStarted(turnId, payload),
      foreignTurnEnded: (turnId) => this.turns.foreignTurnEnded(turnId),
      steerDrained: (ids) => this.turns.steerDrained(ids),
      compactionStopped: () => this.turns.compactionStopped(),
      failTurn: (turn, error) => this.turns.failTurn(turn, error),
      markSuspect: () => {
        // a protocol error outside a live turn: resynchronise before the next prompt
        this.needsResync = true;
      },
      applySnapshot: (snapshot, how) => this.applySnapshot(snapshot, how),
      post: (update, target) => this.updates.post(update, target),
      // resolves when written (rejects if the client is gone); text chunks may be merged while the client is behind
      emit: (update, target) => this.updates.push(update, target),
    };
  }

  // ---- lifecycle ----

  /**
   * Open the session: `load` creates or resumes it natively (the snapshot it answers is checked by
   * `check`), then the engine subscribes to its events. `restore`: the option values a reopened
   * session must have (in the order they are set); what differs is set again, then checked — the
   * open fails rather than leave the session in other settings. Idempotent: a second call joins the first.
   */
  open(load: () => Promise<SessionSnapshot>, restore: Record<string, string> = {}): Promise<void> {
    this.opening ??= this.lifecycle.run(async (signal) => {
      const snapshot = await load();
      this.resident = true;
      if (signal.aborted) throw this.lifecycle.closedError(); // closed meanwhile: the close work closes it natively
      this.state.apply(snapshot, { emit: false });
      this.router.resetSeq(snapshot.runtime?.eventSeq ?? -1);
      // children advertise cancel only where ZCode can stop one subagent (./subagents.ts)
      const subagents = this.router.subagents;
      if (subagents) subagents.canStop = await this.deps.native.stopsSubagents().catch(() => false);
      await this.attach(signal);
      this.lifecycle.to(this.subscription ? "attached" : "detached");
      await this.restore(restore, signal);
      this.opened = true;
    });
    return this.opening;
  }

  /** A reopened session gets the option values it had (mode, plan included; model; thought level), or the open fails. */
  private async restore(values: Record<string, string>, signal: AbortSignal): Promise<void> {
    const differing = (): Array<[string, string]> => Object.entries(values).filter(([id, value]) => this.configValues()[id] !== value);
    for (const [configId, value] of differing()) {
      if (signal.aborted) throw this.lifecycle.closedError();
      if (this.configValues()[configId] === value) continue; // an earlier change set it too
      try {
        await setSessionConfigOption(this.settingsContext(), configId, value);
      } catch (error) {
        const failure = toBridgeError(error);
        throw new BridgeError(
          failure.code,
          `Session ${this.sessionId} could not be reopened with its ${configId} "${value}": ${failure.message} ` +
            "Nothing was run; send the request again to retry.",
          { cause: error, details: { sessionId: this.sessionId } },
        );
      }
    }
    if (signal.aborted) throw this.lifecycle.closedError();
    const still = differing();
    if (still.length === 0) return;
    const now = this.configValues();
    throw new BridgeError(
      "HOST_CALL_FAILED",
      `Session ${this.sessionId} was reopened with other settings than it had (` +
        still.map(([id, value]) => `${id} "${now[id] ?? "none"}" instead of "${value}"`).join(", ") +
        "). Nothing was run; send the request again to retry.",
      { details: { sessionId: this.sessionId } },
    );
  }

  /** Resolves when the open (started by whoever registered the engine) is done; rejects as it did. */
  whenOpen(): Promise<void> {
    return this.opening ?? Promise.reject(new BridgeError("INTERNAL", `session ${this.sessionId} was never opened`));
  }

  /**
   * Subscribe to the session's events. Paired with `detach`: a subscription that arrives after a
   * close is disposed at once. Every wait ends (adr/0033): ZCode confirms with the first event
   * within `subscribeConfirmMs`; a subscription that ends before it fails the open with its own
   * end's error at once; one that stays silent tells the native API, which may read the session
   * another way (a host that does not serve the legacy stream: V4), and is tried once more.
   */
  private async attach(signal: AbortSignal, retried = false): Promise<void> {
    const generation = ++this.subscriptionGeneration;
    let confirmed = false;
    /** set once the subscription is held (`this.subscription`): from then on its end is a lost subscription */
    let held = false;
    /** the end of a subscription that was not held yet: before its snapshot, or right after it (a fatal early frame) */
    let endedEarly: BridgeError | undefined;
    let settle: (() => void) | undefined;
    const subscription = await this.deps.native.subscribe(
      { workspacePath: this.workspacePath, sessionId: this.sessionId },
      {
        onEvent: (event) => {
          confirmed = true;
          settle?.();
          if (!this.lifecycle.ended && generation === this.subscriptionGeneration) this.router.receive(event);
          // while the client is behind, the host channel is held back (backpressure)
          return this.updates.pressure();
        },
        onEnd: (error) => {
          if (generation !== this.subscriptionGeneration) return;
          const ended = error ?? new BridgeError("HOST_EXITED", "The ZCode host stopped.");
          if (!held) {
            // ended before its snapshot (review #8), or after it but before the open holds it (an
            // early frame that was fatal): the confirmation wait ends now, with this end
            endedEarly = ended;
            if (HOST_GONE.has(ended.code)) this.resident = false;
            settle?.();
            return;
          }
          this.lostSubscription(ended, HOST_GONE.has(ended.code));
        },
      },
    );
    // ZCode confirms a subscription with its first event, the snapshot; a host that could not
    // subscribe natively only logs it (docs/zcode-history.md §4.4): no snapshot, no subscription
    const confirmMs = this.deps.subscribeConfirmMs ?? DEFAULT_SUBSCRIBE_CONFIRM_MS;
    if (!confirmed && endedEarly === undefined && !signal.aborted && generation === this.subscriptionGeneration) {
      await new Promise<void>((resolve) => {
        const finish = (): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", finish);
          settle = undefined;
          resolve();
        };
        const timer = setTimeout(finish, confirmMs);
        signal.addEventListener("abort", finish, { once: true });
        settle = finish;
      });
    }
    if (confirmed && endedEarly === undefined && !signal.aborted && generation === this.subscriptionGeneration) {
      this.subscription = subscription;
      held = true;
      return;
    }
    // closed (or the host went away, or ZCode never confirmed) while subscribing: nothing may outlive this engine
    const unconfirmed = generation === this.subscriptionGeneration;
    if (unconfirmed) this.subscriptionGeneration++; // its end is ours, not a lost subscription
    await subscription.dispose().catch((e) => this.logger.warn("unsubscribe failed", { error: describeError(e) }));
    if (signal.aborted) throw this.lifecycle.closedError();
    if (endedEarly !== undefined) {
      const when = confirmed ? "right after its first snapshot" : "before its first snapshot";
      throw new BridgeError(
        endedEarly.code,
        `ZCode ended the event subscription of session ${this.sessionId} ${when}: ${endedEarly.message}`,
        { cause: endedEarly, details: { sessionId: this.sessionId } },
      );
    }
    if (!unconfirmed) return;
    // a silent subscription: the running host may not serve this stream (adr/0033)
    if (!retried && (await this.deps.native.subscriptionUnconfirmed?.(confirmMs)) === true) {
      this.logger.warn("the session's subscription gave no first snapshot; reading it another way", { confirmMs });
      if (signal.aborted) throw this.lifecycle.closedError();
      return this.attach(signal, true);
    }
    throw new BridgeError(
      "HOST_TIMEOUT",
      `ZCode did not confirm the event subscription of session ${this.sessionId} within ${confirmMs} ms (no first snapshot).`,
    );
  }

  /**
   * ZCode's CLI no longer held the session (its agent runtime restarted, review #7): resume it and,
   * as the runtime's V4 subscriptions went with it (zcode-v4.md §3.2), subscribe again before the
   * input is sent once more. The old subscription is ended as ours (its end is not a loss: the
   * prompt about to be resent stays).
   */
  private async resumeAfterRuntimeRestart(): Promise<void> {
    const resumed = await this.deps.native.resumeSession({ ...this.where, expectedMode: this.state.options.currentMode });
    this.resident = true;
    if (this.subscription === undefined) return; // the send's own resync subscribes
    await this.detach();
    this.router.resetSeq(resumed.runtime?.eventSeq ?? -1);
    const signal = this.lifecycle.signal;
    try {
      await this.attach(signal);
    } finally {
      if (!this.lifecycle.ended) this.lifecycle.to(this.subscription ? "attached" : "detached");
    }
    if (!this.subscription) {
      throw new BridgeError(
        "HOST_CALL_FAILED",
        `Session ${this.sessionId} could not subscribe again after ZCode's agent restarted; send the prompt again to retry.`,
      );
    }
  }

  /** End the subscription (the pair of `attach`). */
  private async detach(): Promise<void> {
    const subscription = this.subscription;
    this.subscription = undefined;
    this.subscriptionGeneration++;
    await subscription?.dispose().catch((e) => this.logger.warn("unsubscribe failed", { error: describeError(e) }));
  }

  /** Let queued updates reach the client (after the client knows the session id). */
  private publish(): void {
    this.updates.open();
  }

  private get incarnation(): number {
    return this.subscription?.incarnation ?? this.deps.native.incarnation;
  }

  modes(): SessionModeState {
    return this.state.modes();
  }

  configOptions(): SessionConfigOption[] {
    return this.state.configOptions();
  }

  /** The current value of each config option (kept while the session is released). */
  configValues(): Record<string, string> {
    const values: Record<string, string> = {};
    for (const option of this.state.configOptions()) if (typeof option.currentValue === "string") values[option.id] = option.currentValue;
    return values;
  }

  /** Send the slash commands; call once the session/new, load or resume response is out. */
  announceCommands(): void {
    this.publish();
    if (this.replayed) {
      // a loaded session had them before its response; a later resume of it announces them again
      this.replayed = false;
      this.commandsAgainAtPrompt = this.state.commands() !== undefined;
      return;
    }
    const commands = this.state.commands();
    if (commands) this.post(commands);
    // a client that learns the session id only once the response is handled (Paseo) drops
    // these: they are sent once more when the first prompt starts
    this.commandsAgainAtPrompt = commands !== undefined;
  }

  /**
   * session/load: replay the whole history (then title, plan, usage, commands) before answering,
   * in turn with the other operations of the session. A session whose subscription ended (a host
   * restart) is resumed first: history reads need it resident.
   */
  replay(): Promise<void> {
    return this.lifecycle.run(async (signal) => {
      await this.ready(signal);
      await this.replayHistory();
    });
  }

  /**
   * The history comes in bounded pieces (docs/history.md); each piece's updates are written before
   * the next is read, so neither side holds more than one piece.
   */
  private async replayHistory(): Promise<void> {
    this.publish();
    // a subagents-capable client gets a subagent's work as a child session, as live (adr/0027)
    const replay = new HistoryReplay(
      this.workspacePath,
      this.logger,
      clientSurface(this.deps.client.capabilities),
      this.deps.client.subagents === true ? this.sessionId : undefined,
    );
    for await (const messages of this.deps.native.readHistory(this.where)) {
      for (const { update, target } of replay.piece(messages)) this.post(update, target);
      await this.updates.drain();
    }
    for (const { update, target } of replay.finish()) this.post(update, target);
    for (const update of this.state.metadata()) this.post(update);
    const commands = this.state.commands();
    if (commands) this.post(commands);
    this.replayed = true;
    await this.updates.drain();
  }

  /** The host exited (the service is told of every exit). Idempotent. */
  lostHost(error: BridgeError): void {
    this.lostSubscription(error, true);
  }

  /**
   * The subscription ended. With the host (`hostGone`): the drop path, nothing to stop. While the
   * host lives: ZCode's turn may run on unseen, so it is stopped. Either way the turn ends and the
   * next operation resyncs.
   */
  private lostSubscription(error: BridgeError, hostGone: boolean): void {
    if (this.lifecycle.ended) return;
    const wasResident = this.resident;
    if (hostGone) this.resident = false;
    // idempotent: the subscription's end and the host's exit report the same loss
    if (this.subscription === undefined && !(hostGone && wasResident)) return;
    this.logger.warn(hostGone ? "host connection lost" : "subscription ended while the host runs", { code: error.code });
    this.subscription = undefined;
    this.subscriptionGeneration++;
    if (this.lifecycle.state === "attached") this.lifecycle.to("detached");
    void this.deps.broker
      .withdrawAll(this.sessionId, "host-exit")
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    // with the host, ZCode's queue is gone; while it lives, the stop routine empties it and stops what runs
    this.turns.giveUp(error, { native: !hostGone });
  }

  /**
   * session/close ("close"), the client going away ("disconnect"), or an idle session let go to
   * keep the host's resident sessions bounded ("release": unsubscribed and closed natively, resumed
   * at its next use). The bridge side ends at once; the native side after the running operation
   * (aborted). Resolves when the native side is done, or at once while an operation still runs.
   */
  close(reason: CloseReason): Promise<void> {
    if (this.closing) return this.closing;
    const busy = this.lifecycle.busy;
    // every input ends `cancelled`; ZCode's side (removals, the stop) is done before the native close
    const stopped = this.turns.closeAll(true);
    this.publish();
    const withdrawn = this.deps.broker
      .withdrawAll(this.sessionId, reason === "disconnect" ? "disconnect" : "close")
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    const done = this.lifecycle.close(async () => {
      await withdrawn;
      await stopped;
      this.turns.releaseHolds();
      await this.detach();
      if (reason !== "disconnect" && this.resident) {
        this.resident = false;
        await this.deps.native.closeSession(this.where).catch((e) => this.logger.warn("closeSession failed", { error: describeError(e) }));
      }
    });
    this.nativeClose = done;
    this.closing = busy ? Promise.resolve() : done;
    if (busy) void done.catch((e) => this.logger.warn("close failed", { error: describeError(e) }));
    return this.closing;
  }

  /** Resolves when the native side of a close is done (a released session is reopened only after it). */
  whenClosed(): Promise<void> {
    return (this.nativeClose ?? Promise.resolve()).catch(() => undefined);
  }

  /** Counts for leak checks (`_zcode/diagnostics`). */
  diagnostics(): { turn: boolean; queuedUpdates: number; activityWaiters: number; subscribed: boolean } {
    return {
      turn: this.turns.busy,
      queuedUpdates: this.updates.queued,
      activityWaiters: this.router.waiting,
      subscribed: this.subscription !== undefined,
    };
  }

  get isClosed(): boolean {
    return this.lifecycle.ended;
  }

  /** opened and not closing: operations may start without waiting */
  get isOpen(): boolean {
    return this.opened && !this.lifecycle.ended;
  }

  /** Nothing runs: no turn, no pending interaction, no operation (a release candidate). */
  get idle(): boolean {
    return (
      this.lifecycle.state === "attached" && !this.lifecycle.busy && !this.turns.busy && this.deps.broker.pendingCount(this.sessionId) === 0
    );
  }

  // ---- turns (session-turns.ts) ----

  /** ZCode keeps the session: a prompt was accepted (or may have been) */
  get prompted(): boolean {
    return this.turns.prompted;
  }

  /** How many session/cancel this session has had: a prompt given the count from before it waited sees a cancel meanwhile. */
  get cancelCount(): number {
    return this.turns.cancelCount;
  }

  /** session/prompt: answers when the prompt's own turn ends (session-turns.ts). */
  prompt(
    blocks: readonly ContentBlock[],
    cancelsBefore = this.turns.cancelCount,
    control?: (control: PromptControl) => void,
  ): Promise<TurnResult> {
    return this.turns.prompt(blocks, cancelsBefore, control ? { control } : {});
  }

  /** session/cancel: answered at once in every state. */
  /**
   * `session/cancel` of one of this session's subagent children: false when it is not one of
   * them. A child advertises cancel only where ZCode can stop it: a backgrounded child whose work
   * ZCode lists `cancellable` (V4 `cancelBackgroundWork`), or any child where the install allows
   * `stopSubagent` (3.18+, GUESSED shape). There its open permission requests are withdrawn and
   * ZCode stops it (the child ends as `cancelled` once ZCode confirmed). Elsewhere the cancel is
   * ignored (the parent's cancel stops everything).
   */
  cancelSubagent(childSessionId: string): boolean {
    const subagents = this.router.subagents;
    if (!subagents?.has(childSessionId)) return false;
    const target = subagents.stopTarget(childSessionId);
    if (!target) {
      this.logger.info("session/cancel of a subagent that does not advertise cancel ignored", { childSessionId });
      return true;
    }
    if (!subagents.cancelling(childSessionId)) return true; // asked already
    const stopped =
      target.kind === "backgroundWork"
        ? this.deps.native.cancelBackgroundWork({ ...this.where, workId: target.workId })
        : this.deps.native.stopSubagent({ ...this.where, toolCallId: target.parentToolCallId, childSessionId });
    stopped.then(
      () => subagents.end(childSessionId, "cancelled", "Cancelled."),
      (error: unknown) => this.logger.warn("subagent not stopped", { childSessionId, error: describeError(error) }),
    );
    return true;
  }

  cancel(): void {
    this.turns.cancel();
  }

  /** `_session/steering`: the text joins the running turn as guided input, or (idle) see `idle`. */
  steer(blocks: readonly ContentBlock[], idle: IdleBehavior): Promise<SteeringOutcome> {
    return this.turns.steer(blocks, idle);
  }

  /** The answer of a prompt (its result or error, as `prompt` gave it) was written to the client: the next turn's updates may go. */
  answerWritten(answer: unknown): void {
    this.turns.answerWritten(answer);
  }

  /**
   * Before an input is sent, in its operation: resync when needed, the subscription must be there,
   * and the slash commands go out again at the first prompt.
   */
  private async beforeSend(signal: AbortSignal, turn: ActiveTurn | undefined): Promise<void> {
    if (this.lifecycle.state === "detached" || this.needsResync) await this.resync(signal, turn);
    else if (this.router.hasForeignTurns() && !(await this.deps.native.takesLiveInput())) await this.resync(signal, turn);
    if (turn?.settled) return;
    if (!this.subscription) {
      throw new BridgeError("HOST_CALL_FAILED", `Session ${this.sessionId} has no event subscription; send the prompt again to retry.`);
    }
    if (this.commandsAgainAtPrompt && turn) {
      this.commandsAgainAtPrompt = false;
      const commands = this.state.commands();
      if (commands) this.post(commands);
    }
  }

  /** `post`: in front of the ended turn's boundary (adr/0036) */
  private async reportUsage(turn: ActiveTurn, post: (update: SessionUpdate) => void): Promise<void> {
    // while the end-of-turn report is read, a snapshot event's usage is not said on its own: the
    // report carries the newest, and an update posted now would go out behind the turn's barrier,
    // after the answer, as a repeat of the report (adr/0036)
    this.state.usageReportsReading++;
    try {
      await this.readUsageReport(turn, post);
    } finally {
      this.state.usageReportsReading--;
    }
  }

  private async readUsageReport(turn: ActiveTurn, post: (update: SessionUpdate) => void): Promise<void> {
    const [tokens, snapshot, composition] = await Promise.all([
      this.deps.native.tokenUsage(this.where).catch((e) => {
        this.logger.warn("getTaskTokenUsage failed", { error: describeError(e) });
        return undefined;
      }),
      this.readSnapshot(),
      // ZCode 3.18+ where the install allows it (bounded wait); a failed read keeps the snapshot's usage
      this.deps.native.contextComposition(this.where).catch((e) => {
        this.logger.warn("context composition read failed; the session's own usage is reported", { error: describeError(e) });
        return undefined;
      }),
    ]);
    // usage first: it records the usage key, so applying the snapshot does not repeat it
    const usage = withContextComposition(this.state.turnUsage(snapshot, tokens), composition);
    if (usage) post(usage);
    turn.usage = promptUsage(tokens);
    for (const update of this.state.apply(snapshot, { emit: true })) post(update);
  }

  // ---- resynchronisation ----

  private readSnapshot(): Promise<SessionSnapshot> {
    return this.deps.native.readSession(this.where);
  }

  private get where(): { workspacePath: string; sessionId: string } {
    return { workspacePath: this.workspacePath, sessionId: this.sessionId };
  }

  /**
   * Before an operation after a lost subscription, an unfinished cancel, a protocol error or a
   * background turn. Ends early when the session closes or the turn it runs for settles; a failure
   * leaves the session marked (the next operation resyncs again) and says so.
   */
  private async resync(outer: AbortSignal, turn?: ActiveTurn): Promise<void> {
    // the whole resync is bounded: at the bound its work is aborted and the waiting prompt answered
    const limitMs = this.deps.resyncTimeoutMs ?? DEFAULT_RESYNC_TIMEOUT_MS;
    const bound = new AbortController();
    const signal = AbortSignal.any([outer, bound.signal]);
    let timer: NodeJS.Timeout | undefined;
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        bound.abort();
        reject(
          new BridgeError(
            "HOST_TIMEOUT",
            `Could not resynchronise session ${this.sessionId} with ZCode within ${limitMs} ms (ZCode did not answer). Send the prompt again to retry.`,
            { details: { sessionId: this.sessionId, timeoutMs: limitMs } },
          ),
        );
      }, limitMs);
    });
    overdue.catch(() => undefined);
    try {
      await Promise.race([this.resyncWork(signal, turn), overdue]);
    } catch (error) {
      // the bound's own end: the session stays marked, the next operation resyncs again
      if (bound.signal.aborted && !outer.aborted) {
        this.needsResync = true;
        if (!this.lifecycle.ended) this.lifecycle.to(this.subscription ? "attached" : "detached");
        throw isBridgeError(error, "HOST_TIMEOUT") ? error : await overdue.catch((e: unknown) => e);
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async resyncWork(signal: AbortSignal, turn?: ActiveTurn): Promise<void> {
    const stopped = (): boolean => signal.aborted || turn?.settled === true;
    this.logger.info("resynchronising the session", { subscribed: this.subscription !== undefined });
    this.lifecycle.to("resyncing");
    try {
      if (!this.subscription) {
        const resumed = await this.deps.native.resumeSession({ ...this.where, expectedMode: this.state.options.currentMode });
        this.resident = true;
        if (stopped()) return;
        this.router.resetSeq(resumed.runtime?.eventSeq ?? -1);
        await this.attach(signal);
        if (stopped()) return;
      }
      let snapshot = await this.readSnapshot();
      const deadline = Date.now() + this.deps.cancelGraceMs;
      // a line with V4 input lets ZCode route the next input (a busy session queues it, adr/0023);
      // the legacy line can only send to an idle session, so it waits for ZCode's turn to end
      const waitIdle = !(await this.deps.native.takesLiveInput());
      while (waitIdle && isRunning(snapshot)) {
        const active = snapshot.runtime?.activeTurnId;
        if (active) this.router.turnEnded(active);
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          throw new BridgeError("SESSION_BUSY", "ZCode is still finishing the previous turn of this session. Try again in a moment.");
        }
        await this.router.nextActivity(remaining, turn ? [signal, turn.signal] : [signal]);
        if (stopped()) return;
        snapshot = await this.readSnapshot();
      }
      if (stopped()) return;
      this.router.raiseSeq(snapshot.runtime?.eventSeq ?? -1);
      this.applySnapshot(snapshot, { emit: true });
      this.router.clearForeignTurns();
      this.needsResync = false;
    } catch (error) {
      const failure = toBridgeError(error);
      if (signal.aborted || failure.code === "SESSION_BUSY") throw failure;
      this.logger.warn("resynchronisation failed", { code: failure.code, message: failure.message });
      throw new BridgeError(
        failure.code,
        `Could not resynchronise session ${this.sessionId} with ZCode: ${failure.message} Send the prompt again to retry.`,
        {
          cause: error,
        },
      );
    } finally {
      if (!this.lifecycle.ended) this.lifecycle.to(this.subscription ? "attached" : "detached");
    }
  }

  /** Before a setting change: a session whose subscription ended resyncs first. */
  private async ready(signal: AbortSignal): Promise<void> {
    if (this.lifecycle.state === "detached") await this.resync(signal);
  }

  // ---- settings (adr/0005) ----

  setMode(modeId: string): Promise<void> {
    this.lifecycle.touch();
    return this.lifecycle.run(async (signal) => {
      await this.ready(signal);
      await setSessionMode(this.settingsContext(), modeId);
    });
  }

  setConfigOption(configId: string, value: string): Promise<SessionConfigOption[]> {
    this.lifecycle.touch();
    return this.lifecycle.run(async (signal) => {
      await this.ready(signal);
      return setSessionConfigOption(this.settingsContext(), configId, value);
    });
  }

  private settingsContext(): SettingsContext {
    return {
      native: this.deps.native,
      where: this.where,
      state: this.state,
      apply: (snapshot, how) => this.applySnapshot(snapshot, how),
    };
  }

  // ---- updates ----

  private applySnapshot(snapshot: SessionSnapshot, how: ApplyOptions): void {
    // V4 read path only: whether ZCode holds its queue, and why (adr/0038)
    const held = snapshot.runtime?.queueHeld;
    if (typeof held === "boolean") this.turns.queueHeld(held, snapshot.runtime?.queuePauseReason);
    for (const update of this.state.apply(snapshot, how)) this.post(update);
  }

  /** Queue a session/update nobody waits for (no promise is made per update; update-coalescer.ts). */
  private post(update: SessionUpdate, target?: string): void {
    this.updates.post(update, target);
  }
}
