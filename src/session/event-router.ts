/**
 * Routes the raw events of one session's subscription (adr/0004): validation of the 7 top-level
 * types and the session.event envelope, strictly increasing `seq`, binding of native turn ids to
 * the ACP prompt whose input the turn carries (session-turns.ts, adr/0023), filtering of late and
 * foreign turns, and dispatch by the event table
 * (src/protocol/event-table.ts) to one handler per type: translation, terminal handling, the
 * interaction broker.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import {
  sessionEventRowOf,
  type HandledSessionEventType,
  type PayloadOf,
  type ScopeOf,
  type TopLevelEvent,
  type TopLevelEventType,
} from "../protocol/event-table.js";
import type { HostEvent, SessionEventEnvelope, SessionSnapshot, StateUpdatedEvent, TurnStartedPayload } from "../protocol/native-types.js";
import { parseHostEvent, parseSessionEventPayload } from "../protocol/event-validation.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import type { InteractionContext } from "./interactions/types.js";
import type { ActiveTurn } from "./active-turn.js";
import type { SessionDeps } from "./session-deps.js";
import type { ApplyOptions } from "./snapshot-state.js";
import type { TurnOutcome } from "./stop-reason.js";
import type { Logger } from "../log/logger.js";
import type { SnapshotState } from "./snapshot-state.js";
import { clientSurface, StreamTranslator } from "./stream-translator.js";
import { compactionStopped } from "./compaction.js";
import { abortableDelay } from "./session-lifecycle.js";
import { completedOutcome, failedOutcome } from "./stop-reason.js";
import { requestOrigin, Subagents, type ChildInteractionTarget } from "./subagents.js";

const ENDED_TURNS_KEPT = 256;

type Owner = "current" | "other";

/** What a handler of an inner type gets besides its payload: the running prompt for a turn-scoped type. */
type HandlerContext<T extends HandledSessionEventType> =
  ScopeOf<T> extends "turn" ? { event: SessionEventEnvelope; turn: ActiveTurn } : { event: SessionEventEnvelope };

/** Exactly one handler for each `turn` and `session` row of the event table. */
type SessionEventHandlers = { [T in HandledSessionEventType]: (payload: PayloadOf<T>, ctx: HandlerContext<T>) => void };

/** Exactly one handler for each top-level row. */
type TopLevelHandlers = { [T in TopLevelEventType]: (event: TopLevelEvent<T>) => void };

function protocolError(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", message, details ? { details } : {});
}

/** What the router needs of its session: the engine builds one over its private members and hands it over. */
export interface RoutedSession {
  readonly sessionId: string;
  readonly workspacePath: string;
  readonly logger: Logger;
  readonly incarnation: number;
  /** the running turn, if it may receive native events */
  readonly liveTurn: ActiveTurn | undefined;
  endTurn(turn: ActiveTurn, outcome: TurnOutcome, reportUsage: boolean): void;
  /** ZCode started a turn: the prompt whose input it carries (now the live turn), or undefined when it is not ours */
  turnStarted(turnId: string, payload: TurnStartedPayload): ActiveTurn | undefined;
  /** a turn that was not the running prompt's ended (its end event) */
  foreignTurnEnded?(turnId: string): void;
  /** ZCode injected guided inputs into its running turn */
  steerDrained(ids: readonly string[]): void;
  /** ZCode's compaction failed or was stopped (ZCode then holds what is queued behind it) */
  compactionStopped(): void;
  failTurn(turn: ActiveTurn, error: BridgeError): void;
  markSuspect(): void;
  applySnapshot(snapshot: SessionSnapshot, how: ApplyOptions): void;
  /** queue an update: on this session, or under `target` (a subagent's child session) */
  post(update: SessionUpdate, target?: string): void;
  /** resolves when written; `target`: a subagent's child session */
  emit(update: SessionUpdate, target?: string): Promise<void>;
}

export class EventRouter {
  private translator: StreamTranslator;
  /** native turns that ended or are not ours to show: their events are dropped */
  private readonly endedTurnIds = new Set<string>();
  /** native turns running without an ACP prompt (background tasks) */
  private readonly foreignTurnIds = new Set<string>();
  private readonly activityWaiters = new Set<() => void>();
  /**
   * subagents as child sessions (./subagents.ts), only for a client that advertised
   * `clientCapabilities.subagents`; without it their work stays flattened into the parent turn
   */
  readonly subagents: Subagents | undefined;

  private readonly topLevelHandlers: TopLevelHandlers = {
    snapshot: (event) => this.snapshot(event.snapshot),
    "state.updated": (event) => this.stateUpdated(event.notification),
    // a subagent's permission, question or plan approval is asked under its child session (./subagents.ts)
    "permission.request": (event) => this.deps.broker.handlePermission(event.request, this.interactionContext(event.request, true)),
    "userInput.request": (event) => this.deps.broker.handleUserInput(event.request, this.interactionContext(event.request, true)),
    "providerRuntimeHeaders.request": (event) =>
      this.deps.broker.handleProviderHeaders(event.request, this.interactionContext(event.request)),
    "userInput.response": () => {}, // echo of an answered request
    "session.event": (event) => this.sessionEvent(event.event),
  };

  private readonly sessionEventHandlers: SessionEventHandlers = {
    "model.streaming": (payload) => this.emitAll(this.translator.modelStreaming(payload)),
    "tool.updated": (payload, { turn }) => {
      if (this.subagents?.toolUpdated(payload)) return;
      this.emitAll(this.translator.toolUpdated(payload, clientSurface(this.deps.client.capabilities)));
      this.subagents?.parentToolUpdated(payload, turn.cancelRequested);
    },
    // a V4 parent's `subagent` row: the child's announcement, cancellability and end (./subagents.ts)
    "subagent.updated": (payload) => this.subagents?.subagentRow(payload),
    "turn.started": () => {}, // validated; its turn id was bound by ownerOf
    "turn.completed": (payload, { turn }) => this.engine.endTurn(turn, completedOutcome(payload, turn.cancelRequested), true),
    "turn.failed": (payload, { turn }) => this.engine.endTurn(turn, failedOutcome(payload, turn.cancelRequested), !turn.cancelRequested),
    "turn.steerDrained": (payload) => this.engine.steerDrained([...payload.pendingInputIds, ...(payload.queryIds ?? [])]),
    "part.upserted": (payload) => {
      this.emitAll(this.translator.partUpserted(payload, clientSurface(this.deps.client.capabilities)));
      const part = payload.part;
      if (typeof part === "object" && part !== null && compactionStopped(part as Record<string, unknown>)) this.engine.compactionStopped();
    },
    "session.titleUpdated": (payload, { event }) => this.emitAll(this.state.titleChanged(payload.title, event.timestamp)),
    "session.updated": (payload) => {
      const mode = payload.mode;
      if (typeof mode === "string" && mode !== "" && ("previousMode" in payload || "source" in payload)) {
        this.emitAll(this.state.modeChanged(mode));
      }
      const usage = payload.contextUsage as { used?: unknown; size?: unknown } | undefined;
      if (typeof usage?.used === "number" && typeof usage.size === "number" && usage.used >= 0 && usage.size > 0) {
        this.emitAll(this.state.contextUsage(usage.used, usage.size));
      }
    },
  };

  constructor(
    private readonly engine: RoutedSession,
    private readonly deps: SessionDeps,
    private readonly state: SnapshotState,
    private lastSeq: number,
  ) {
    this.translator = new StreamTranslator(engine.workspacePath, engine.logger);
    if (deps.client.subagents === true) {
      this.subagents = new Subagents({
        parentSessionId: engine.sessionId,
        cwd: engine.workspacePath,
        logger: engine.logger.child("subagents"),
        post: (update, target) => engine.post(update, target),
        describeParentTool: (toolCallId) => this.translator.describeToolCall(toolCallId),
      });
    }
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
  closeOpenTools(reason: string): SessionUpdate[] {
    // the subagents of the turn end with it (their own updates are queued here, before the parent's)
    this.subagents?.endAll("cancelled", reason);
    return this.translator.closeOpenTools(reason);
  }

  /** Drop what is known about tool calls: they belong to an ended turn. */
  forgetTools(): void {
    this.subagents?.endAll("end_turn");
    this.translator = new StreamTranslator(this.engine.workspacePath, this.engine.logger);
  }

  /** After a re-subscription to a restarted host: the snapshot's seq is the new baseline. */
  resetSeq(seq: number): void {
    this.lastSeq = seq;
  }

  raiseSeq(seq: number): void {
    this.lastSeq = Math.max(this.lastSeq, seq);
  }

  /** Resolves on the next event of this session, after `ms`, or when one of `signals` aborts. */
  nextActivity(ms: number, signals: readonly AbortSignal[] = []): Promise<void> {
    return abortableDelay(ms, signals, (wake) => {
      this.activityWaiters.add(wake);
      return () => void this.activityWaiters.delete(wake);
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
    (this.topLevelHandlers[event.type] as unknown as (event: HostEvent) => void)(event);
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
    const row = sessionEventRowOf(event.type);
    if (!row) {
      throw protocolError(`ZCode sent an unknown session event type "${event.type}"`, { eventType: event.type, seq: event.seq });
    }
    if (row.scope === "ignored") return;
    if (row.scope === "turn" && this.ownerOf(event) !== "current") {
      this.engine.logger.debug("event of another turn dropped", { type: event.type, turnId: event.turnId, seq: event.seq });
      return;
    }
    // the row of `event.type` says which handler and which context; its payload is validated against the row
    const handle = this.sessionEventHandlers[event.type as HandledSessionEventType] as unknown as (
      payload: unknown,
      ctx: { event: SessionEventEnvelope; turn?: ActiveTurn },
    ) => void;
    handle(parseSessionEventPayload(event, row), row.scope === "turn" ? { event, turn: this.engine.liveTurn! } : { event });
  }

  /**
   * Does this turn-scoped event belong to the running ACP prompt? A `turn.started` binds its turn
   * to the prompt whose input it carries (never by assumed order: ZCode runs turns of its own).
   */
  private ownerOf(event: SessionEventEnvelope): Owner {
    const turnId = event.turnId;
    const terminal = event.type === "turn.completed" || event.type === "turn.failed";
    if (!turnId) return this.engine.liveTurn ? "current" : "other";
    if (this.endedTurnIds.has(turnId)) return "other";
    if (this.engine.liveTurn?.turnId === turnId) return "current";
    if (event.type === "turn.started" && !this.foreignTurnIds.has(turnId)) {
      const turn = this.engine.turnStarted(turnId, event.payload);
      if (turn) return "current";
    }
    if (terminal) {
      this.turnEnded(turnId);
      this.engine.foreignTurnEnded?.(turnId);
    } else this.foreignTurnIds.add(turnId);
    return "other";
  }

  /** The context of a reverse request: the running prompt if the request belongs to it (binds the native turn id). */
  private interactionContext(request: Record<string, unknown>, underChild = false): InteractionContext {
    const requestTurnId = typeof request.turnId === "string" && request.turnId !== "" ? request.turnId : undefined;
    let turn: ActiveTurn | undefined = this.engine.liveTurn;
    if (turn && requestTurnId) {
      if (turn.turnId === undefined && !this.endedTurnIds.has(requestTurnId) && !this.foreignTurnIds.has(requestTurnId)) {
        turn.turnId = requestTurnId;
      }
      if (turn.turnId !== requestTurnId) turn = undefined;
    }
    const origin = underChild && this.subagents && turn ? requestOrigin(request) : undefined;
    const child = origin ? this.subagents?.interactionTarget(origin) : undefined;
    return this.context(turn, requestTurnId, child);
  }

  /**
   * Interaction context; without a live turn of its own the signal is already aborted (never allow).
   * `child`: a subagent's request, asked under its child session and withdrawn when the child ends.
   */
  private context(turn: ActiveTurn | undefined, turnId: string | undefined, child?: ChildInteractionTarget): InteractionContext {
    const engine = this.engine;
    if (child && turn) {
      return {
        sessionId: engine.sessionId,
        clientSessionId: child.sessionId,
        workspacePath: engine.workspacePath,
        turnId: turn.turnId ?? turnId,
        incarnation: engine.incarnation,
        native: this.deps.native,
        client: this.deps.client,
        logger: engine.logger.child("interaction"),
        signal: AbortSignal.any([turn.signal, child.signal]),
        update: (update) => engine.emit(update, child.sessionId),
        failTurn: (error) => engine.failTurn(turn, error),
        describeToolCall: child.describe,
        adoptToolCall: child.adopt,
      };
    }
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
      adoptToolCall: (call) => this.translator.adoptToolCall(call),
    };
  }

  private emitAll(updates: readonly SessionUpdate[]): void {
    for (const update of updates) this.engine.post(update);
  }
}
