/**
 * Routes the raw events of one session's subscription (adr/0004): validation of the 7 top-level
 * types and the session.event envelope, strictly increasing `seq`, binding of native turn ids to
 * the ACP prompt, filtering of late and foreign turns, and dispatch to translation, terminal
 * handling and the interaction broker.
 */
import type { HostEvent, SessionEventEnvelope, SessionSnapshot, StateUpdatedEvent, TitleUpdatedPayload, TurnCompletedPayload, TurnFailedPayload, TurnStartedPayload } from "../protocol/native-types.js";
import { NO_OP_SESSION_EVENT_TYPES, parseHostEvent, parseSessionEventPayload } from "../protocol/event-validation.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import type { InteractionContext } from "./interactions/types.js";
import type { ActiveTurn } from "./active-turn.js";
import type { SessionDeps } from "./session-deps.js";
import type { ApplyOptions } from "./snapshot-state.js";
import type { TurnOutcome } from "./stop-reason.js";
import type { Logger } from "../log/logger.js";
import type { SnapshotState } from "./snapshot-state.js";
import { StreamTranslator } from "./stream-translator.js";
import { completedOutcome, failedOutcome } from "./stop-reason.js";

const TURN_SCOPED = new Set(["model.streaming", "tool.updated", "turn.started", "turn.completed", "turn.failed"]);
const NOT_USER_TURNS = new Set(["background_task", "subagent"]);
const ENDED_TURNS_KEPT = 256;

type Owner = "current" | "other";

function protocolError(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", message, details ? { details } : {});
}

/** What the router needs of its session (the engine implements it). */
export interface RoutedSession {
  readonly sessionId: string;
  readonly workspacePath: string;
  readonly logger: Logger;
  readonly incarnation: number;
  /** the running turn, if it may receive native events */
  readonly liveTurn: ActiveTurn | undefined;
  endTurn(turn: ActiveTurn, outcome: TurnOutcome, reportUsage: boolean): void;
  failTurn(turn: ActiveTurn, error: BridgeError): void;
  markSuspect(): void;
  applySnapshot(snapshot: SessionSnapshot, how: ApplyOptions): void;
  post(update: import("@agentclientprotocol/sdk").SessionUpdate): void;
  emit(update: import("@agentclientprotocol/sdk").SessionUpdate): Promise<void>;
}

export class EventRouter {
  private translator: StreamTranslator;
  /** native turns that ended or are not ours to show: their events are dropped */
  private readonly endedTurnIds = new Set<string>();
  /** native turns running without an ACP prompt (background tasks) */
  private readonly foreignTurnIds = new Set<string>();
  private readonly activityWaiters = new Set<() => void>();

  constructor(
    private readonly engine: RoutedSession,
    private readonly deps: SessionDeps,
    private readonly state: SnapshotState,
    private lastSeq: number,
  ) {
    this.translator = new StreamTranslator(engine.workspacePath, engine.logger);
  }

  /** callers waiting in nextActivity (diagnostics) */
  get waiting(): number {
    return this.activityWaiters.size;
  }

  hasForeignTurns(): boolean {
    return this.foreignTurnIds.size > 0;
  }

  clearForeignTurns(): void {
    this.foreignTurnIds.clear();
  }

  turnEnded(turnId: string): void {
    this.foreignTurnIds.delete(turnId);
    this.endedTurnIds.add(turnId);
    if (this.endedTurnIds.size > ENDED_TURNS_KEPT) {
      const oldest = this.endedTurnIds.values().next().value;
      if (oldest !== undefined) this.endedTurnIds.delete(oldest);
    }
  }

  /** Final updates for the tool calls of the turn still open (it ended early). */
  closeOpenTools(reason: string): import("@agentclientprotocol/sdk").SessionUpdate[] {
    return this.translator.closeOpenTools(reason);
  }

  /** Drop what is known about tool calls: they belong to an ended turn. */
  forgetTools(): void {
    this.translator = new StreamTranslator(this.engine.workspacePath, this.engine.logger);
  }

  /** After a re-subscription to a restarted host: the snapshot's seq is the new baseline. */
  resetSeq(seq: number): void {
    this.lastSeq = seq;
  }

  raiseSeq(seq: number): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
  }

  /** Resolves on the next event of this session, or after `ms`. */
  nextActivity(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.activityWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.activityWaiters.add(done);
    });
  }

  receive(raw: unknown): void {
    try {
      this.dispatch(parseHostEvent(raw));
    } catch (error) {
      this.protocolFailure(isBridgeError(error) ? error : new BridgeError("INTERNAL", describeError(error), { cause: error }));
    }
    if (this.activityWaiters.size > 0) for (const wake of [...this.activityWaiters]) wake();
  }

  private protocolFailure(error: BridgeError): void {
    this.engine.logger.error("host event rejected", { code: error.code, message: error.message });
    const turn = this.engine.liveTurn;
    if (turn) this.engine.failTurn(turn, error);
    else this.engine.markSuspect();
  }

  private dispatch(event: HostEvent): void {
    switch (event.type) {
      case "snapshot":
        return this.snapshot(event.snapshot);
      case "state.updated":
        return this.stateUpdated(event.notification);
      case "permission.request":
      case "userInput.request":
      case "providerRuntimeHeaders.request":
        return this.interaction(event.type, event.request);
      case "userInput.response":
        return; // echo of an answered request
      case "session.event":
        return this.sessionEvent(event.event);
    }
  }

  private snapshot(snapshot: SessionSnapshot): void {
    if (snapshot.session.sessionId !== this.engine.sessionId) {
      throw protocolError(`ZCode sent a snapshot of session ${snapshot.session.sessionId} on the stream of ${this.engine.sessionId}`);
    }
    this.engine.applySnapshot(snapshot, { emit: true });
  }

  private stateUpdated(notification: StateUpdatedEvent["notification"]): void {
    if (notification.scope !== "session" || notification.sessionId !== this.engine.sessionId) return;
    const mode = (notification.patch.mode as { current?: unknown } | undefined)?.current;
    if (typeof mode === "string" && mode !== "") this.emitAll(this.state.modeChanged(mode));
  }

  private sessionEvent(event: SessionEventEnvelope): void {
    if (event.sessionId !== this.engine.sessionId) {
      throw protocolError(`ZCode sent an event of session ${event.sessionId} on the stream of ${this.engine.sessionId}`);
    }
    if (event.seq <= this.lastSeq) {
      throw protocolError(`ZCode sent event seq ${event.seq} ("${event.type}") after seq ${this.lastSeq}: duplicate or out of order`, {
        seq: event.seq,
        lastSeq: this.lastSeq,
      });
    }
    this.lastSeq = event.seq;
    switch (event.type) {
      case "session.titleUpdated": {
        const payload = parseSessionEventPayload<TitleUpdatedPayload>(event);
        return this.emitAll(this.state.titleChanged(payload.title, event.timestamp));
      }
      case "session.updated": {
        const mode = event.payload.mode;
        if (typeof mode === "string" && mode !== "" && ("previousMode" in event.payload || "source" in event.payload)) {
          this.emitAll(this.state.modeChanged(mode));
        }
        const usage = event.payload.contextUsage as { used?: unknown; size?: unknown } | undefined;
        if (typeof usage?.used === "number" && typeof usage.size === "number" && usage.used >= 0 && usage.size > 0) {
          this.emitAll(this.state.contextUsage(usage.used, usage.size));
        }
        return;
      }
    }
    if (NO_OP_SESSION_EVENT_TYPES.has(event.type)) return;
    if (!TURN_SCOPED.has(event.type)) {
      throw protocolError(`ZCode sent an unknown session event type "${event.type}"`, { eventType: event.type, seq: event.seq });
    }
    if (this.ownerOf(event) !== "current") {
      this.engine.logger.debug("event of another turn dropped", { type: event.type, turnId: event.turnId, seq: event.seq });
      return;
    }
    const turn = this.engine.liveTurn!;
    switch (event.type) {
      case "turn.started":
        parseSessionEventPayload<TurnStartedPayload>(event);
        return;
      case "turn.completed": {
        const outcome = completedOutcome(parseSessionEventPayload<TurnCompletedPayload>(event), turn.cancelRequested);
        return this.engine.endTurn(turn, outcome, true);
      }
      case "turn.failed": {
        const outcome = failedOutcome(parseSessionEventPayload<TurnFailedPayload>(event), turn.cancelRequested);
        return this.engine.endTurn(turn, outcome, !turn.cancelRequested);
      }
      default:
        return this.emitAll(this.translator.translate(event));
    }
  }

  /** Does this turn-scoped event belong to the running ACP prompt? Binds the native turn id. */
  private ownerOf(event: SessionEventEnvelope): Owner {
    const turnId = event.turnId;
    const turn = this.engine.liveTurn;
    const terminal = event.type === "turn.completed" || event.type === "turn.failed";
    if (!turnId) return turn ? "current" : "other";
    if (this.endedTurnIds.has(turnId)) return "other";
    if (turn) {
      if (turn.turnId === turnId) return "current";
      const startedByOthers = event.type === "turn.started" && NOT_USER_TURNS.has(String((event.payload as TurnStartedPayload).inputSource));
      if (turn.turnId === undefined && !this.foreignTurnIds.has(turnId) && !startedByOthers) {
        turn.turnId = turnId;
        this.engine.logger.debug("native turn bound", { turn: turn.number, turnId });
        return "current";
      }
    }
    if (terminal) this.turnEnded(turnId);
    else this.foreignTurnIds.add(turnId);
    return "other";
  }

  private interaction(type: "permission.request" | "userInput.request" | "providerRuntimeHeaders.request", request: Record<string, unknown>): void {
    const requestTurnId = typeof request.turnId === "string" && request.turnId !== "" ? request.turnId : undefined;
    let turn: ActiveTurn | undefined = this.engine.liveTurn;
    if (turn && requestTurnId) {
      if (turn.turnId === undefined && !this.endedTurnIds.has(requestTurnId) && !this.foreignTurnIds.has(requestTurnId)) {
        turn.turnId = requestTurnId;
      }
      if (turn.turnId !== requestTurnId) turn = undefined;
    }
    const ctx = this.context(turn, requestTurnId);
    const broker = this.deps.broker;
    if (type === "permission.request") broker.handlePermission(request, ctx);
    else if (type === "userInput.request") broker.handleUserInput(request, ctx);
    else broker.handleProviderHeaders(request, ctx);
  }

  /** Interaction context; without a live turn of its own the signal is already aborted (never allow). */
  private context(turn: ActiveTurn | undefined, turnId: string | undefined): InteractionContext {
    const engine = this.engine;
    return {
      sessionId: engine.sessionId,
      workspacePath: engine.workspacePath,
      turnId: turn?.turnId ?? turnId,
      incarnation: engine.incarnation,
      native: this.deps.native,
      client: this.deps.client,
      logger: engine.logger.child("interaction"),
      signal: turn ? turn.signal : AbortSignal.abort("no active prompt for this request"),
      update: (update) => engine.emit(update),
      failTurn: (error) => {
        if (turn) engine.failTurn(turn, error);
        else engine.logger.warn("interaction failed outside a prompt", { code: error.code, message: error.message });
      },
      describeToolCall: (toolCallId) => this.translator.describeToolCall(toolCallId),
    };
  }

  private emitAll(updates: readonly import("@agentclientprotocol/sdk").SessionUpdate[]): void {
    for (const update of updates) this.engine.post(update);
  }
}
