/**
 * The typed native API of one ZCode release line (docs/architecture.md): the ONLY interface the
 * session layer uses to reach ZCode. Implementations (one folder per line under src/native/) are
 * the only code that knows ZCode method names, parameter conventions (`deliveryKind`,
 * `persistence`, …), result shapes and snapshot parsing. Snapshots come back in the bridge's
 * session model (`SessionSnapshot` of src/protocol/native-types.ts), whatever the line's own shape.
 */
import type { ExitListener, HostEventSink, HostSubscription } from "../host/types.js";
import type { Disposable } from "../util/disposable.js";
import { DEFAULT_FRAME_LIMIT_BYTES } from "../channel/limits.js";
import type { ModelRef, SessionSnapshot, SnapshotMessage, TaskTokenUsage } from "../protocol/native-types.js";

/** a subscription to a session's events, and where its events go */
export type NativeSubscription = HostSubscription;
export type NativeEventSink = HostEventSink;
/** the largest message the host channel carries (a prompt must fit in one, with its envelope) */
export const NATIVE_FRAME_LIMIT_BYTES = DEFAULT_FRAME_LIMIT_BYTES;

export interface SessionRef {
  workspacePath: string;
  sessionId: string;
}

export interface NewSession {
  workspacePath: string;
  /** ACP mcpServers, passed through */
  mcpServers: readonly unknown[];
  /** "deferred": nothing is persisted until the first prompt */
  persistence: "immediate" | "deferred";
  /** the id to give the session (re-creating a released session that was never prompted); else ZCode picks one */
  sessionId?: string;
}

export interface ResumeSession extends SessionRef {
  mcpServers?: readonly unknown[];
  /** the mode the bridge believes the session is in (a line that loses plan on a cold resume re-applies it) */
  expectedMode?: string;
}

export interface NativeSessionEntry {
  sessionId: string;
  workspacePath: string | undefined;
  title: string | undefined;
  /** ms since the epoch */
  updatedAt: number | undefined;
}

export interface PromptInput {
  /**
   * the id ZCode is to know the input by (a UUID v7; the V4 command id, which its turn's
   * `turn.started` carries); the bridge makes it before sending so that a turn that starts
   * before the ack is still paired. The legacy line ignores it.
   */
  inputId?: string;
  /** the host's content convention (text) */
  content: string;
  attachments: readonly object[];
}

/**
 * how ZCode should take an input: join the running turn (guide), or run after it (queue).
 * `startNow` is ZCode's forced send-now (it aborts the running turn); no caller asks for it.
 */
export type InputDelivery = "startNow" | "guide" | "queue";

/** what ZCode did with a prompt it acknowledged */
export interface SentInput {
  /** the input's id: the turn it starts carries it (`turn.started` / `turn.completed` `inputId`); unknown on the legacy path */
  inputId: string | undefined;
  /** how ZCode admitted it: started a turn, or queued it (a guide is acked `queue` while busy; ZCode never acks `guide`) */
  delivery: "startNow" | "queue";
  /** the queue item that removes it before it runs, for a queued input */
  queueItemId?: string;
  /**
   * true: the ack was lost and ZCode confirmed the input afterwards only from its transcript (its
   * command table no longer had it), without saying how it was admitted. The input was taken and
   * is not to be sent again; `delivery` is then `startNow` and `inputId` the command id, which the
   * input's turn carries, but that turn may have started, or ended, before the caller listens.
   */
  recovered?: true;
}

export type QuestionAnswer = { action: "accept"; content: unknown } | { action: "decline" | "cancel" };

export type { ExitListener } from "../host/types.js";

/** a session's context, by category (ZCode 3.18+ `getContextComposition`; shape guessed) */
export interface ContextComposition {
  /** tokens in the context now */
  used: number;
  /** the context window, where ZCode says it */
  size: number | undefined;
  categories: Array<{ id: string; label: string; tokens: number }>;
}

export interface NativeApi {
  /** the release line (manifest `protocol.id`) */
  readonly lineId: string;
  /** host incarnation: interactions are bound to it */
  readonly incarnation: number;
  /** told of every host exit until the returned subscription is disposed */
  onExit(listener: ExitListener): Disposable;

  /** throws AUTH_REQUIRED (not signed in / no provider) or HOST_CALL_FAILED */
  checkSignIn(workspacePath: string): Promise<void>;
  createSession(params: NewSession): Promise<SessionSnapshot>;
  /** throws SESSION_NOT_FOUND for a session the host does not have */
  resumeSession(params: ResumeSession): Promise<SessionSnapshot>;
  /** the session's state (settings, runtime, usage, commands) without its history; needs the session resumed */
  readSession(params: SessionRef): Promise<SessionSnapshot>;
  /** the session's history, oldest first, in bounded pieces (docs/history.md); needs the session resumed */
  readHistory(params: SessionRef): AsyncIterable<SnapshotMessage[]>;
  listSessions(workspacePath: string): Promise<NativeSessionEntry[]>;
  closeSession(params: SessionRef & { persistence?: "immediate" | "deferred" }): Promise<void>;
  /**
   * Hand one input to ZCode; the host acknowledged it and the turn arrives as events. Through V4
   * `sendText` where the install allows it; else the legacy `sendPrompt` (idle sessions only).
   * Without `delivery` ZCode routes it (idle: starts a turn; busy: queues it): an ordinary prompt
   * never asks for `startNow`, which preempts whatever ZCode runs (zcode-v4-source-check.md §2.4).
   */
  sendInput(params: SessionRef & PromptInput & { delivery?: InputDelivery; inputId?: string }): Promise<SentInput>;
  /** does this install take input while a turn runs (guide / queue)? Starts the host lazily. */
  takesLiveInput(): Promise<boolean>;
  /** remove a queued input before it runs (compare-and-set `deleteQueueItem`); false when it was not in the queue (it ran, or left) */
  removeQueuedInput(params: SessionRef & { queueItemId: string }): Promise<boolean>;
  /**
   * let ZCode's input queue run again after a stop held it (`setAutoDrain(true)`); nothing on a
   * line without V4 input
   */
  releaseHeldQueue(params: SessionRef): Promise<void>;
  /**
   * Delete the session in ZCode (session/delete) as its desktop does (`zcode-task.deleteTask`: it
   * leaves ZCode's lists, its conversation is kept; adr/0032), after the caller closed it. Throws
   * UNSUPPORTED_ZCODE where the install has no real delete (`sessionCalls`). Where it has one,
   * `listSessions` leaves deleted sessions out and `resumeSession` of one is SESSION_NOT_FOUND.
   */
  deleteSession(params: SessionRef): Promise<void>;
  /**
   * Set the session's title (session/set_title, V4 `renameSession`). `held`: ZCode's agent holds
   * the session (the bridge has it open); else it is resumed for the call and closed again.
   */
  renameSession(params: SessionRef & { title: string; held: boolean }): Promise<void>;
  /**
   * Fork the session at one of the agent's answers (session/fork, V4 `forkAssistant`), only at a
   * row ZCode allows a fork at (`actions.canFork`): the answer whose ACP messageId is `messageId`,
   * or the newest such row; INVALID_PARAMS for any other message and for ZCode's refusals. Resolves with the new session's
   * id (ZCode created and persisted it; the caller opens it). `held` as for renameSession.
   */
  forkSession(params: SessionRef & { messageId: string | undefined; held: boolean }): Promise<string>;
  setMode(params: SessionRef & { mode: string }): Promise<SessionSnapshot>;
  setModel(params: SessionRef & { model: ModelRef; thoughtLevel?: string | undefined }): Promise<SessionSnapshot>;
  setThoughtLevel(params: SessionRef & { thoughtLevel: string }): Promise<SessionSnapshot>;
  tokenUsage(params: SessionRef): Promise<TaskTokenUsage | undefined>;
  /** the session's context composition where the install allows it (3.18+); undefined, without a call, where it does not */
  contextComposition(params: SessionRef): Promise<ContextComposition | undefined>;
  /** stop ZCode's running turn (V4 `stop`, or the legacy stopGeneration) */
  stopTurn(params: SessionRef): Promise<void>;
  /** can ZCode stop one subagent (`stopSubagent`, 3.18+, allowed by the install's manifest)? */
  stopsSubagents(): Promise<boolean>;
  /** stop one subagent of the running turn, named by the tool call that started it (and its child session) */
  stopSubagent(params: SessionRef & { toolCallId: string; childSessionId: string }): Promise<void>;
  /**
   * Cancel one background work of the session (V4 `cancelBackgroundWork {workId}`, not
   * compare-and-set): a backgrounded subagent that ZCode lists `cancellable` in `backgroundWorks`.
   * Throws UNSUPPORTED_ZCODE on a line without V4 input.
   */
  cancelBackgroundWork(params: SessionRef & { workId: string }): Promise<void>;
  answerPermission(params: SessionRef & { requestId: string; optionId: string }): Promise<unknown>;
  answerQuestion(params: SessionRef & { requestId: string; answer: QuestionAnswer }): Promise<unknown>;
  /** provider runtime headers are never supplied: always a decline with this message */
  declineProviderHeaders(params: SessionRef & { requestId: string; message: string }): Promise<unknown>;
  /**
   * A session's subscription gave no first event within `waitedMs` (adr/0033): the native API
   * learns that the running host does not serve that stream; true when it now reads another way
   * (the caller subscribes once more), false when there is none. Absent: false.
   */
  subscriptionUnconfirmed?(waitedMs: number): Promise<boolean>;
  /** the session's events (snapshot first), in the bridge's session model */
  subscribe(params: SessionRef, sink: NativeEventSink): Promise<NativeSubscription>;
}
