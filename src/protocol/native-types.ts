/**
 * Native types of the ZCode 3.11.2 host's `onDynamicSessionEvent` stream and session snapshot
 * (zcode-host.md §5, §7). Only what the bridge reads is typed; everything else stays `unknown`
 * and passes through. Values of these types have been validated by ./event-validation.ts.
 */

export type TopLevelEventType =
  | "snapshot"
  | "state.updated"
  | "permission.request"
  | "userInput.request"
  | "userInput.response"
  | "providerRuntimeHeaders.request"
  | "session.event";

export interface SnapshotEvent {
  type: "snapshot";
  snapshot: SessionSnapshot;
}

export interface StateUpdatedEvent {
  type: "state.updated";
  notification: {
    type: "state.updated";
    scope: "server" | "workspace" | "session";
    sessionId?: string;
    revision: number;
    reason?: string;
    patch: Record<string, unknown>;
  };
}

export interface InteractionRequestEvent {
  type: "permission.request" | "userInput.request" | "providerRuntimeHeaders.request";
  /** raw request; validated by the interaction broker */
  request: Record<string, unknown>;
}

export interface UserInputResponseEvent {
  type: "userInput.response";
  requestId: string;
  response: unknown;
}

export interface SessionEventEnvelope {
  eventId: string;
  sessionId: string;
  turnId?: string;
  seq: number;
  traceId?: string;
  timestamp: number;
  deliveryKind: "desktop-continuous" | "web-remote-replayable";
  type: string;
  payload: Record<string, unknown>;
}

export interface SessionEventWrapper {
  type: "session.event";
  event: SessionEventEnvelope;
}

export type HostEvent =
  | SnapshotEvent
  | StateUpdatedEvent
  | InteractionRequestEvent
  | UserInputResponseEvent
  | SessionEventWrapper;

// ---- session.event payloads the bridge translates ----

export type ModelStreamingKind =
  | "start"
  | "finish"
  | "error"
  | "text_start"
  | "text_delta"
  | "text_end"
  | "reasoning_start"
  | "reasoning_delta"
  | "reasoning_end"
  | "tool_input_start"
  | "tool_input_delta"
  | "tool_input_end"
  | "tool_call";

export const MODEL_STREAMING_KINDS: readonly ModelStreamingKind[] = [
  "start",
  "finish",
  "error",
  "text_start",
  "text_delta",
  "text_end",
  "reasoning_start",
  "reasoning_delta",
  "reasoning_end",
  "tool_input_start",
  "tool_input_delta",
  "tool_input_end",
  "tool_call",
];

export interface ModelStreamingPayload {
  kind: ModelStreamingKind;
  assistantMessageId?: string;
  partId?: string;
  delta?: string;
  done?: boolean;
  input?: unknown;
  toolCallId?: string;
  toolName?: string;
  providerExecuted?: boolean;
}

export type ToolUpdatedKind = "scheduled" | "started" | "progress" | "result" | "error" | "batch" | "raw";

export const TOOL_UPDATED_KINDS: readonly ToolUpdatedKind[] = [
  "scheduled",
  "started",
  "progress",
  "result",
  "error",
  "batch",
  "raw",
];

export interface ToolUpdatedPayload {
  kind: ToolUpdatedKind;
  toolCallId?: string;
  toolName?: string;
  parentToolCallId?: string;
  source?: string;
  childSessionId?: string;
  description?: string;
  input?: unknown;
  inputOmitted?: boolean;
  // progress (Bash)
  elapsedMs?: number;
  outputPreview?: string;
  stdoutTail?: string;
  stderrTail?: string;
  // result / error
  result?: unknown;
  duration?: number;
  error?: { type?: string; message: string; code?: unknown; detail?: unknown };
  // batch
  toolCallIds?: string[];
}

export interface TurnStartedPayload {
  turnNumber?: number;
  input?: unknown;
  inputId?: string;
  inputSource?: string;
}

export interface TurnCompletedPayload {
  resultType: string;
  response?: string;
  tokenCount?: number;
  toolCallCount?: number;
  duration?: number;
  inputId?: string;
  usage?: Record<string, unknown>;
}

export interface TurnFailedPayload {
  error: { type?: string; message: string; code?: unknown; detail?: unknown; underlyingErrorMessage?: string };
  turnPhase?: string;
  inputId?: string;
}

export interface TitleUpdatedPayload {
  title: string;
  previousTitle?: string;
  source?: string;
}

// ---- snapshot (§7) ----

export interface ModelRef {
  providerId: string;
  modelId: string;
  variant?: string | null;
  [key: string]: unknown;
}

export interface SnapshotModelEntry {
  ref: ModelRef;
  label?: string;
  providerLabel?: string;
  contextWindow?: number;
}

export interface SnapshotThoughtLevel {
  enabled: boolean;
  current?: string;
  defaultLevel?: string;
  available: Array<{ value: string; label?: string; description?: string }>;
}

export interface SnapshotTodo {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority: "high" | "medium" | "low";
}

export interface SnapshotPart {
  type: string;
  [key: string]: unknown;
}

export interface SnapshotMessage {
  info: { messageId?: string; role: string; [key: string]: unknown };
  parts: SnapshotPart[];
}

export interface ContextUsage {
  used: number;
  size: number;
  cost?: { amount: number; currency: string } | null;
}

export interface SessionSnapshot {
  session: {
    sessionId: string;
    workspace: { workspacePath: string; [key: string]: unknown };
    title?: string;
    mode?: string;
    status?: string;
    createdAt?: number;
    updatedAt?: number;
    [key: string]: unknown;
  };
  settings?: {
    model?: { current?: ModelRef | null; available?: SnapshotModelEntry[] };
    thoughtLevel?: SnapshotThoughtLevel;
    mode?: { current?: string };
    [key: string]: unknown;
  };
  projection?: { contextUsed?: number; contextWindow?: number; currentTurnId?: string; [key: string]: unknown };
  runtime?: {
    eventSeq?: number;
    activeTurnId?: string | null;
    contextUsage?: ContextUsage | null;
    [key: string]: unknown;
  };
  messages?: SnapshotMessage[];
  todos?: SnapshotTodo[];
  slashCommands?: Array<{ name: string; description?: string; inputHint?: string }>;
  [key: string]: unknown;
}

export interface TaskTokenUsage {
  sessionId?: string;
  totalTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cacheCreationTokens?: number;
  cacheReadTokens?: number;
  [key: string]: unknown;
}

export interface SessionListEntry {
  sessionId: string;
  workspace?: { workspacePath?: string };
  title?: string;
  updatedAt?: number;
}
