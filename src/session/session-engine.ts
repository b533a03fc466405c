/**
 * One ACP session bound to one native ZCode session: the host event subscription, turn state,
 * event → update translation, cancellation and resynchronisation (adr/0004). The engine talks
 * to the ACP client only through `ClientPort` and to the host only through `NativeApi`.
 */
import type { ContentBlock, SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { NativeSubscription } from "../native/native-api.js";
import type { SessionDeps } from "./session-deps.js";
import type { SessionSnapshot } from "../protocol/native-types.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import { ActiveTurn, type TurnResult } from "./active-turn.js";
import { promptUsage } from "./prompt-usage.js";
import { convertPrompt } from "./prompt-content.js";
import { replayMessages } from "./history-replay.js";
import { SnapshotState, type ApplyOptions } from "./snapshot-state.js";
import { PromptQueue } from "./prompt-queue.js";
import { steerTurn, type SteeringOutcome, type IdleBehavior } from "./steering.js";
import { EventRouter, type RoutedSession } from "./event-router.js";
import { UpdateCoalescer } from "./update-coalescer.js";
import { setSessionConfigOption, setSessionMode, type SettingsContext } from "./session-settings.js";
import type { TurnOutcome } from "./stop-reason.js";

const RUNNING_STATUSES = new Set(["running", "waiting"]);

function isRunning(snapshot: SessionSnapshot): boolean {
  return RUNNING_STATUSES.has(String(snapshot.session.status)) || Boolean(snapshot.runtime?.activeTurnId);
}

function toBridgeError(error: unknown, code: "HOST_CALL_FAILED" | "INTERNAL" = "HOST_CALL_FAILED"): BridgeError {
  return isBridgeError(error) ? error : new BridgeError(code, describeError(error), { cause: error });
}

export class SessionEngine {
  readonly sessionId: string;
  readonly workspacePath: string;
  private readonly logger: Logger;
  private readonly state = new SnapshotState();
  private readonly router: EventRouter;
  private subscription: NativeSubscription | undefined;
  private subscriptionGeneration = 0;
  private subscriptionLost = false;
  private turn: ActiveTurn | undefined;
  private needsResync = false;
  private closed = false;
  /** the last stopGeneration on its way; close waits for it before the host may be stopped */
  private stopCall: Promise<void> | undefined;
  private readonly updates: UpdateCoalescer;
  /** the slash commands go out again when the first prompt starts */
  private commandsAgainAtPrompt = false;
  /** this engine was opened by session/load (its commands went out before the response) */
  private replayed = false;
  /** prompts waiting in ZCode's queue behind the running turn (adr/0022) */
  private readonly queue: PromptQueue;

  constructor(
    snapshot: SessionSnapshot,
    private readonly deps: SessionDeps,
  ) {
    this.sessionId = snapshot.session.sessionId;
    this.workspacePath = snapshot.session.workspace.workspacePath;
    this.logger = deps.logger.child(`session.${this.sessionId}`);
    this.updates = new UpdateCoalescer({
      send: (update) => this.deps.client.sessionUpdate({ sessionId: this.sessionId, update }),
      onError: (e) => this.logger.warn("session/update not delivered", { error: describeError(e) }),
      merge: deps.mergeDeltas,
    });
    this.state.apply(snapshot, { emit: false });
    this.queue = new PromptQueue({
      native: deps.native,
      where: this.where,
      logger: this.logger,
      failRunning: (turn, error) => this.endTurn(turn, { error }, false),
    });
    this.router = new EventRouter(this.routedSession(), deps, this.state, snapshot.runtime?.eventSeq ?? -1);
  }

  /** What the event router may do with this session: a narrow view over the private members. */
  private routedSession(): RoutedSession {
    const incarnation = (): number => this.incarnation;
    const liveTurn = (): ActiveTurn | undefined => this.liveTurn();
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
      endTurn: (turn, outcome, reportUsage) => this.endTurn(turn, outcome, reportUsage),
      waitingInput: (inputId) => this.queue.has(inputId),
      failTurn: (turn, error) => this.failTurn(turn, error),
      markSuspect: () => {
        // a protocol error outside a live turn: resynchronise before the next prompt
        this.needsResync = true;
      },
      applySnapshot: (snapshot, how) => this.applySnapshot(snapshot, how),
      post: (update) => this.post(update),
      // resolves when written (rejects if the client is gone); text chunks may be merged while the client is behind
      emit: (update) => this.updates.push(update),
    };
  }

  // ---- lifecycle ----

  /** Subscribe to the session's events. Call before answering session/new, load or resume. */
  async attach(): Promise<void> {
    const generation = ++this.subscriptionGeneration;
    this.subscription = await this.deps.native.subscribe(
      { workspacePath: this.workspacePath, sessionId: this.sessionId },
      {
        onEvent: (event) => {
          if (!this.closed && generation === this.subscriptionGeneration) this.router.receive(event);
          // while the client is behind, the host channel is held back (backpressure)
          return this.updates.pressure();
        },
        onEnd: (error) => {
          if (generation === this.subscriptionGeneration) this.lostHost(error ?? new BridgeError("HOST_EXITED", "The ZCode host stopped."));
        },
      },
    );
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

  /** Send the slash commands; call once the session/new, load or resume response is out. */
  announceCommands(): void {
    this.publish();
    if (this.replayed) {
      // a loaded session had them before its response; a later resume of it announces them again
      this.replayed = false;
      return;
    }
    const commands = this.state.commands();
    if (commands) this.post(commands);
    // a client that learns the session id only once the response is handled (Paseo) drops
    // these: they are sent once more when the first prompt starts
    this.commandsAgainAtPrompt = commands !== undefined;
  }

  /** session/load: replay the whole history (then title, plan, usage, commands) before answering. */
  async replay(snapshot: SessionSnapshot): Promise<void> {
    this.publish();
    this.state.apply(snapshot, { emit: false });
    for (const update of replayMessages(snapshot.messages ?? [], this.workspacePath, this.logger)) this.post(update);
    for (const update of this.state.metadata()) this.post(update);
    const commands = this.state.commands();
    if (commands) this.post(commands);
    this.replayed = true;
    await this.updates.drain();
  }

  /** The host went away (subscription ended or host exit). Idempotent. */
  lostHost(error: BridgeError): void {
    if (this.closed || this.subscriptionLost) return;
    this.logger.warn("host connection lost", { code: error.code });
    this.subscriptionLost = true;
    this.subscription = undefined;
    this.subscriptionGeneration++;
    void this.deps.broker
      .withdrawAll(this.sessionId, "host-exit")
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    this.queue.failAll(error);
    const turn = this.turn;
    if (turn && !turn.settled) this.endTurn(turn, turn.cancelRequested ? { stopReason: "cancelled" } : { error }, false);
  }

  /** session/close: cancel, withdraw interactions, close natively, unsubscribe. */
  async close(reason: "close" | "disconnect"): Promise<void> {
    if (this.closed) return;
    const removals = this.queue.cancelAll();
    const turn = this.turn;
    if (turn && !turn.settled) {
      turn.cancelRequested = true;
      if (turn.sendIssued) this.requestStop(turn, removals);
      this.endTurn(turn, { stopReason: "cancelled" }, false);
    }
    this.closed = true;
    this.publish();
    await this.deps.broker
      .withdrawAll(this.sessionId, reason)
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    await this.stopCall;
    const subscription = this.subscription;
    this.subscription = undefined;
    this.subscriptionGeneration++;
    if (reason === "close" && !this.subscriptionLost) {
      await this.deps.native.closeSession(this.where).catch((e) => this.logger.warn("closeSession failed", { error: describeError(e) }));
    }
    await subscription?.dispose().catch((e) => this.logger.warn("unsubscribe failed", { error: describeError(e) }));
  }

  /** Counts for leak checks (`_zcode/diagnostics`). */
  diagnostics(): { turn: boolean; queuedUpdates: number; activityWaiters: number; subscribed: boolean } {
    return {
      turn: this.turn !== undefined,
      queuedUpdates: this.updates.queued,
      activityWaiters: this.router.waiting,
      subscribed: this.subscription !== undefined,
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---- prompt turn ----

  async prompt(blocks: readonly ContentBlock[]): Promise<TurnResult> {
    if (this.closed) throw new BridgeError("SESSION_NOT_FOUND", `Session ${this.sessionId} is closed.`);
    const input = convertPrompt(blocks, this.workspacePath);
    const running = this.turn;
    if (running && !running.settled) {
      if (running.cancelRequested) {
        throw new BridgeError(
          "SESSION_BUSY",
          `Session ${this.sessionId} is still stopping its previous prompt. Wait for that prompt's answer, then send this one.`,
        );
      }
      // a second prompt waits in ZCode's queue and answers when its own turn ends (adr/0022)
      return this.queue.add(input);
    }
    const turn = new ActiveTurn();
    this.turn = turn;
    try {
      if (this.subscriptionLost || this.needsResync || this.router.hasForeignTurns()) await this.resync(turn);
    } catch (error) {
      if (!turn.settled) {
        turn.settle({ error: toBridgeError(error) });
        if (this.turn === turn) this.turn = undefined;
        throw toBridgeError(error);
      }
    }
    if (turn.settled) return turn.result;
    if (this.commandsAgainAtPrompt) {
      this.commandsAgainAtPrompt = false;
      const commands = this.state.commands();
      if (commands) this.post(commands);
    }
    turn.sendIssued = true;
    this.logger.debug("sendPrompt", { turn: turn.number, attachments: input.attachments.length });
    try {
      const sent = await this.deps.native.sendPrompt({ ...this.where, content: input.content, attachments: input.attachments });
      turn.inputId = sent.inputId;
    } catch (error) {
      if (!turn.settled) {
        this.needsResync = true;
        this.endTurn(turn, turn.cancelRequested ? { stopReason: "cancelled" } : { error: toBridgeError(error) }, false);
      }
    }
    return turn.result;
  }

  /** session/cancel: stop generation once, withdraw interactions, resolve `cancelled`. */
  cancel(): void {
    // the waiting prompts first: out of ZCode's queue before the stop, so it stops only the running turn
    const removals = this.queue.cancelAll();
    const turn = this.turn;
    if (!turn || turn.settled || turn.cancelRequested) return;
    turn.cancelRequested = true;
    turn.abortSignal("cancel");
    if (!turn.sendIssued) {
      this.endTurn(turn, { stopReason: "cancelled" }, false);
      return;
    }
    this.requestStop(turn, removals);
    void this.deps.broker
      .withdrawAll(this.sessionId, "cancel")
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    turn.startGraceTimer(this.deps.cancelGraceMs, () => {
      this.logger.warn("no terminal event after stopGeneration; the session will be resynchronised", { graceMs: this.deps.cancelGraceMs });
      this.needsResync = true;
      this.endTurn(turn, { stopReason: "cancelled" }, false);
    });
  }

  /** `_session/steering`: the text joins the running turn as guided input, or (idle) see `idle`. */
  steer(blocks: readonly ContentBlock[], idle: IdleBehavior): Promise<SteeringOutcome> {
    if (this.closed) throw new BridgeError("SESSION_NOT_FOUND", `Session ${this.sessionId} is closed.`);
    const running = this.liveTurn();
    return steerTurn(
      {
        native: this.deps.native,
        where: this.where,
        running: running && !running.cancelRequested ? running : undefined,
        prompt: (b) => this.prompt(b),
        adopt: (sent) => {
          const turn = this.queue.adopt(sent);
          // ZCode started it at once: the running turn ended meanwhile
          if (!this.turn || this.turn.settled) this.turn = this.queue.next();
          return turn;
        },
        logger: this.logger,
      },
      blocks,
      idle,
    );
  }

  /** The current turn if it may receive native events (prompt sent, not settled). */
  private liveTurn(): ActiveTurn | undefined {
    const turn = this.turn;
    return turn && turn.sendIssued && !turn.settled ? turn : undefined;
  }

  /** Fail the turn: stop generation once and answer the prompt with the error (or cancelled). */
  private failTurn(turn: ActiveTurn, error: BridgeError): void {
    if (turn.settled) return;
    this.logger.warn("turn failed", { code: error.code, message: error.message });
    if (turn.sendIssued) this.requestStop(turn);
    this.needsResync = true;
    this.endTurn(turn, turn.cancelRequested ? { stopReason: "cancelled" } : { error }, false);
  }

  /** End the turn with this outcome; the prompt answers after queued updates (and usage). */
  private endTurn(turn: ActiveTurn, outcome: TurnOutcome, reportUsage: boolean): void {
    if (!turn.settle(outcome)) return;
    if (turn.turnId) this.router.turnEnded(turn.turnId);
    // the oldest waiting prompt is ZCode's next turn: it receives the events from now on
    if (this.turn === turn) this.turn = this.queue.next();
    // tools the client saw running get a final status before the prompt answers
    const early =
      "error" in outcome ? `Not finished: ${outcome.error.message}` : outcome.stopReason === "cancelled" ? "Cancelled." : undefined;
    if (early !== undefined) for (const update of this.router.closeOpenTools(early)) this.post(update);
    this.router.forgetTools();
    void this.deps.broker
      .withdrawAll(this.sessionId, "turn-end")
      .catch((e) => this.logger.warn("withdrawAll failed", { error: describeError(e) }));
    void this.finishTurn(turn, reportUsage);
  }

  private async finishTurn(turn: ActiveTurn, reportUsage: boolean): Promise<void> {
    if (reportUsage) await this.reportUsage(turn).catch((e) => this.logger.warn("usage report failed", { error: describeError(e) }));
    await this.updates.drain();
    if (this.turn === turn) this.turn = undefined;
    turn.deliver();
  }

  private requestStop(turn: ActiveTurn, after: Promise<void> = Promise.resolve()): void {
    if (turn.stopRequested) return;
    turn.stopRequested = true;
    this.stopCall = after
      .then(() => this.deps.native.cancel(this.where))
      .then(
        () => undefined,
        (e) => this.logger.warn("stopGeneration failed", { error: describeError(e) }),
      );
  }

  private async reportUsage(turn: ActiveTurn): Promise<void> {
    const [tokens, snapshot] = await Promise.all([
      this.deps.native.tokenUsage(this.where).catch((e) => {
        this.logger.warn("getTaskTokenUsage failed", { error: describeError(e) });
        return undefined;
      }),
      this.readSnapshot(),
    ]);
    // usage first: it records the usage key, so applying the snapshot does not repeat it
    const usage = this.state.turnUsage(snapshot, tokens);
    if (usage) this.post(usage);
    turn.usage = promptUsage(tokens);
    this.applySnapshot(snapshot, { emit: true });
  }

  // ---- resynchronisation ----

  private readSnapshot(): Promise<SessionSnapshot> {
    return this.deps.native.readSession(this.where);
  }

  private get where(): { workspacePath: string; sessionId: string } {
    return { workspacePath: this.workspacePath, sessionId: this.sessionId };
  }

  /** Before a prompt after a lost host, an unfinished cancel, a protocol error or a background turn. */
  private async resync(turn: ActiveTurn): Promise<void> {
    this.logger.info("resynchronising the session", { subscriptionLost: this.subscriptionLost });
    if (this.subscriptionLost) {
      const resumed = await this.deps.native.resumeSession({ ...this.where, expectedMode: this.state.options.currentMode });
      this.router.resetSeq(resumed.runtime?.eventSeq ?? -1);
      this.subscriptionLost = false;
      await this.attach();
    }
    let snapshot = await this.readSnapshot();
    const deadline = Date.now() + this.deps.cancelGraceMs;
    while (isRunning(snapshot)) {
      const active = snapshot.runtime?.activeTurnId;
      if (active) this.router.turnEnded(active);
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new BridgeError("SESSION_BUSY", "ZCode is still finishing the previous turn of this session. Try again in a moment.");
      }
      await this.router.nextActivity(remaining);
      if (turn.settled) return;
      snapshot = await this.readSnapshot();
    }
    this.router.raiseSeq(snapshot.runtime?.eventSeq ?? -1);
    this.applySnapshot(snapshot, { emit: true });
    this.router.clearForeignTurns();
    this.needsResync = false;
  }

  // ---- settings (adr/0005) ----

  setMode(modeId: string): Promise<void> {
    return setSessionMode(this.settingsContext(), modeId);
  }

  setConfigOption(configId: string, value: string): Promise<SessionConfigOption[]> {
    return setSessionConfigOption(this.settingsContext(), configId, value);
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
    for (const update of this.state.apply(snapshot, how)) this.post(update);
  }

  /** Queue a session/update nobody waits for (no promise is made per update; update-coalescer.ts). */
  private post(update: SessionUpdate): void {
    this.updates.post(update);
  }
}
