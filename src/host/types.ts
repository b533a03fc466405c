/**
 * The host client surface that the session engine uses. Implemented in src/host/ on top of
 * the NDJSON channel (src/channel/) and the launcher; faked in unit tests of src/session/.
 *
 * The host client knows ZCode services ("agent" = zcode-agent, "task" = zcode-task) and the
 * protocol descriptor's semantic operations; it does not know ACP.
 */
import type { Disposable } from "../util/disposable.js";
import type { BridgeError } from "../util/errors.js";
import type { OperationTimeout } from "./timeouts.js";
import type { Served } from "./served-surface.js";

/** Channel keys of the manifest's protocol descriptor (which ones a line has: src/manifest/release-lines.ts). */
export type ServiceName = "agent" | "task" | "modelSelection";

/** Per-call options: the timeout is keyed by the native API's operation (src/host/timeouts.ts). */
export interface CallOptions {
  timeout?: OperationTimeout;
}

/** Target of zcode-agent.onDynamicSessionEvent (docs/runtime-contract.md §4). */
export interface SessionEventTarget {
  workspacePath: string;
  sessionId: string;
  deliveryKind: "desktop-continuous";
  includeSnapshot?: boolean;
  afterSeq?: number;
}

/**
 * Target of a workspace-wide zcode-agent event (V4, docs/zcode-host.md §16):
 * onDynamicConversationFrame (every conversation frame of the workspace; the reader keeps those of
 * its own subscription) or, on zcode-task-v3, onDynamicWorkspaceProviderRuntimeHeadersRequest
 * (the workspace's provider header requests, each naming its session).
 */
export interface WorkspaceEventTarget {
  event: "onDynamicConversationFrame" | "onDynamicWorkspaceProviderRuntimeHeadersRequest";
  workspacePath: string;
}

export type HostEventTarget = SessionEventTarget | WorkspaceEventTarget;

export interface HostEventSink {
  /**
   * one raw host event (a top-level dynamic event: snapshot, session.event, …); not yet validated.
   * May return a promise: while too many returned promises are unsettled the host client stops
   * reading the host's channel (backpressure). A subscription whose consumer stays behind for too
   * long is ended with CHANNEL_OVERFLOW rather than buffered without bound.
   */
  onEvent(event: unknown): void | Promise<void>;
  /** the subscription ended: host exit, channel failure or dispose. Called at most once. */
  onEnd(error: BridgeError | null): void;
}

/** told of every host exit (crash or stop) with the incarnation that ended */
export type ExitListener = (info: { incarnation: number; error: BridgeError }) => void;

export interface HostSubscription {
  readonly id: string;
  /** host incarnation this subscription belongs to */
  readonly incarnation: number;
  dispose(): Promise<void>;
}

/** Semantic operations of the protocol descriptor (manifest `protocol.operations`). */
export type SemanticOperation = "cancelGeneration" | "respondStructuredInput" | "respondPermission";

export interface HostClient {
  /**
   * Current host incarnation: 0 before the first launch, incremented by every launch.
   * Interactions are bound to it; an answer for an older incarnation is dropped.
   */
  readonly incarnation: number;
  /** Call an allowlisted native method. Starts the host lazily. Rejects with BridgeError. */
  call<T = unknown>(service: ServiceName, method: string, params: Record<string, unknown>, options?: CallOptions): Promise<T>;
  /**
   * Run a semantic operation. `sessionId` is mapped to the descriptor's key (`taskId` for 3.11.2);
   * the other params are passed as they are.
   */
  operate<T = unknown>(operation: SemanticOperation, sessionId: string, params: Record<string, unknown>, options?: CallOptions): Promise<T>;
  /** The release line (`protocol.id`) of the verified install; starts the host lazily. */
  protocolId(): Promise<string>;
  /**
   * A held history (a read the bootstrap answered with `{historyId, total}`, docs/history.md):
   * "next" answers its next bounded piece `{messages, done}`, "close" releases it.
   */
  history(historyId: string, op: "next" | "close", options?: CallOptions): Promise<unknown>;
  /**
   * Does the verified install's manifest allowlist `service.method`, and has the running host not
   * answered it "Method not found" (src/host/served-surface.ts, adr/0033)? Starts the host lazily.
   */
  allows(service: ServiceName, method: string): Promise<boolean>;
  /**
   * Does the running host serve `service.method`? One bounded probe per host incarnation
   * (src/host/served-surface.ts). Absent (a test double): not probed ("unknown").
   */
  probe?(service: ServiceName, method: string): Promise<Served>;
  /** `service.name` (a method or an event) is not served by the running host: learned until it restarts. */
  learnUnserved?(service: ServiceName, name: string, how: string): void;
  /**
   * Does the verified build accept the optional parameter `param` of `service.method`? False for a
   * parameter its CLI dropped (src/manifest/release-lines.ts DROPPED_PARAMS). Starts the host lazily.
   * Absent (a test double): treated as false — the parameter is not sent.
   */
  acceptsParam?(service: ServiceName, method: string, param: string): Promise<boolean>;
  /**
   * Subscribe to onDynamicSessionEvent, or to the workspace event a target names (V4 frames, v3 header requests).
   * Resolves once the host acknowledged the subscription.
   */
  subscribe(target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription>;
  /** Listen for host exits (crash or stop) until the returned subscription is disposed. */
  onExit(listener: ExitListener): Disposable;
  /** Stop the host gracefully (dispose, bounded wait, SIGTERM, SIGKILL). Idempotent. */
  close(): Promise<void>;
}
