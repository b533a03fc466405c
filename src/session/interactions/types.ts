/**
 * The boundary between the session engine (src/session/) and the interaction broker
 * (src/session/interactions/): host requests that need a human — permissions, plan approval,
 * structured questions, provider runtime headers. See adr/0006-interaction-boundary.md.
 */
import type { SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { NativeApi } from "../../native/native-api.js";
import type { Logger } from "../../log/logger.js";
import type { BridgeError } from "../../util/errors.js";
import type { ClientPort } from "../client-port.js";

export interface InteractionContext {
  /** the ZCode session the request belongs to (its answer goes there) */
  sessionId: string;
  /**
   * the ACP session the client is asked under when it is not `sessionId`: a subagent's child
   * session (../subagents.ts); its `update`s go there too
   */
  clientSessionId?: string;
  workspacePath: string;
  turnId: string | undefined;
  incarnation: number;
  /** the release line's native API: the answers go through it */
  native: NativeApi;
  client: ClientPort;
  logger: Logger;
  /** turn-scoped abort: aborted when the turn ends / is cancelled / session closes */
  signal: AbortSignal;
  /** publish a session/update for this session */
  update(update: SessionUpdate): Promise<void>;
  /** end the current turn with this error: the engine stops generation (once) and fails the prompt */
  failTurn(error: BridgeError): void;
  /** what the engine knows about a tool call (title, kind, rawInput, content, locations) */
  describeToolCall(toolCallId: string): Partial<ToolCallUpdate> | undefined;
  /**
   * The interaction is about to show the client this call before any event of it was read:
   * recorded as announced, so the call's own events later update it instead of announcing it
   * twice. False when the engine already announced it (then only an update is due).
   */
  adoptToolCall?(call: ToolCallUpdate): boolean;
}

export type WithdrawReason = "cancel" | "close" | "turn-end" | "host-exit" | "disconnect";

export interface InteractionBroker {
  /** raw `request` of a permission.request event */
  handlePermission(request: unknown, ctx: InteractionContext): void;
  /** raw `request` of a userInput.request event */
  handleUserInput(request: unknown, ctx: InteractionContext): void;
  /** raw `request` of a providerRuntimeHeaders.request event */
  handleProviderHeaders(request: unknown, ctx: InteractionContext): void;
  /**
   * answer every pending interaction of the session exactly once (deny / cancel); reason for
   * logs. Resolves once the host has taken (or failed) every answer of the session on its way.
   */
  withdrawAll(sessionId: string, reason: WithdrawReason): Promise<void>;
  pendingCount(sessionId?: string): number;
  /** client requests still open (pending interactions, and ended ones inside the cancel grace) */
  clientRequestCount(): number;
}

export interface InteractionBrokerOptions {
  logger: Logger;
  /**
   * After the client's own `session/cancel`, how long its open permission / elicitation requests
   * may stay open for the client's own answer before the broker cancels them with
   * `$/cancel_request` (default CLIENT_CANCEL_GRACE_MS; 0 cancels at once). The host is answered
   * at once either way.
   */
  clientCancelGraceMs?: number;
}

/** default of `InteractionBrokerOptions.clientCancelGraceMs` */
export const CLIENT_CANCEL_GRACE_MS = 2_000;
