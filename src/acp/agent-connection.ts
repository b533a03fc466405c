/**
 * What one ACP connection holds, the same for either protocol (the v1 agent ./agent-app.ts and
 * the v2 agent ./v2/agent-v2.ts): its port, interaction broker and session service (one connection
 * per app), the callbacks waiting for a response to be written, the session accessor, cancel,
 * shutdown, the diagnostics counts and the release notices sent once per session. The handlers,
 * and everything that differs between the protocols, stay in the agents.
 */
import type { JsonRpcId } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { NativeApi } from "../native/native-api.js";
import type { SessionCalls } from "../native/session-calls.js";
import type { ClientPort } from "../session/client-port.js";
import type { InteractionBroker } from "../session/interactions/types.js";
import type { SessionEngine } from "../session/session-engine.js";
import { SessionService, type OpenedSession } from "../session/session-service.js";
import { describeError } from "../util/errors.js";
import { noticeNotification, type ReleaseNotice } from "./release-notices.js";
import type { InteractionTracker } from "./wire-order.js";

export interface ZcodeAgentOptions {
  /** the typed native API of the install's release line */
  native: NativeApi;
  logger: Logger;
  createBroker: (logger: Logger) => InteractionBroker;
  /** how long a cancelled turn may take to end natively (default 30 s) */
  cancelGraceMs: number;
  /** merge text chunks while the client is behind (ZCODE_ACP_MERGE_DELTAS=0: off, the benchmark's baseline) */
  mergeDeltas: boolean;
  /** how long ZCode may take to confirm a session's event subscription with its first snapshot */
  subscribeConfirmMs?: number;
  /** how long prompts may wait in a queue ZCode holds for its own reasons (adr/0038) */
  heldQueueMs?: number;
  /** the workspace where ACP gives none (session/list without cwd, authenticate): the process's working directory */
  defaultCwd: string;
  /** told about every interaction request sent to the client (wire order, ./wire-order.ts) */
  tracker?: InteractionTracker;
  /** the warning-level advisories of the release the sessions run on (adr/0021); absent: none */
  releaseNotices?: () => readonly ReleaseNotice[];
  /**
   * The transport reports each response once it is written (`responseWritten`): a session's
   * opening updates then wait for it. Without it (in-process clients) the next turn of the event
   * loop after the handler stands for "written".
   */
  reportsWrites?: boolean;
  /** what the install's host offers of session management, for initialize to advertise (absent: nothing) */
  sessionCalls?: () => Promise<SessionCalls>;
}

export interface AgentConnection<P extends ClientPort> {
  /** the connection's port, once connected */
  readonly port: P | undefined;
  /**
   * The app's one connection is open: make its port, broker and session service; its end shuts
   * the sessions down. A second connection throws.
   */
  readonly connect: (makePort: () => P, closed: Promise<void>) => void;
  /** the session service; throws before the connection */
  readonly sessions: () => SessionService;
  /**
   * The session a request is for, once it is open: a released session is reopened first, so every
   * handler treats it as an attached one. On an open session `use` runs synchronously (the
   * operation keeps its place before a later close).
   */
  readonly withSession: <T>(sessionId: string, use: (engine: SessionEngine) => Promise<T>) => Promise<T>;
  /** Run `then` once the response to `requestId` was written (without write reports: a turn of the event loop later). */
  readonly afterWrite: (requestId: JsonRpcId, then: () => void) => void;
  /**
   * A session's opening updates (slash commands, …) go out once its response was written, in a
   * later turn of the event loop, so a client that learns the session id from the response has
   * handled it first (adr/0017); then `then`.
   */
  readonly afterResponse: (requestId: JsonRpcId, opened: OpenedSession, then?: () => void) => void;
  /** the transport wrote this message to the client (with `reportsWrites`) */
  readonly responseWritten: (message: object) => void;
  /** the release's advisories, once per session on this connection (adr/0021), where the client takes them */
  readonly sendReleaseNotices: (sessionId: string) => void;
  /** A released session runs nothing: its cancel (like an unknown session's) is answered at once without reopening it. */
  readonly cancelSession: (sessionId: string) => void;
  /** end every session (withdrawing interactions); idempotent. Does not stop the host. */
  readonly shutdown: () => Promise<void>;
  /** session counts for leak checks (`_zcode/diagnostics`) */
  readonly diagnostics: () => Record<string, number>;
}

/**
 * The session service of one connection (either protocol): the next turn's updates wait for the
 * previous prompt's answer to be written (v1: `afterWrite`; v2: the idle `state_update`).
 */
function sessionServiceOf(options: ZcodeAgentOptions, client: ClientPort, broker: InteractionBroker): SessionService {
  return new SessionService({
    native: options.native,
    client,
    broker,
    logger: options.logger.child("session"),
    cancelGraceMs: options.cancelGraceMs,
    mergeDeltas: options.mergeDeltas,
    answerWrites: true,
    ...(options.subscribeConfirmMs !== undefined ? { subscribeConfirmMs: options.subscribeConfirmMs } : {}),
    ...(options.heldQueueMs !== undefined ? { heldQueueMs: options.heldQueueMs } : {}),
    defaultCwd: options.defaultCwd,
  });
}

/**
 * One connection's state. `logger` is the agent's own; `acceptsNotices` says whether the client
 * takes release notices (v1: a capability; v2: a baseline update).
 */
export function createAgentConnection<P extends ClientPort>(
  options: ZcodeAgentOptions,
  logger: Logger,
  acceptsNotices: (port: P) => boolean,
): AgentConnection<P> {
  let service: SessionService | undefined;
  let port: P | undefined;
  let broker: InteractionBroker | undefined;
  let shutdownPromise: Promise<void> | undefined;

  /** callbacks waiting for their response to be written, by JSON-RPC request id */
  const waitingForWrite = new Map<unknown, () => void>();
  const afterWrite = (requestId: JsonRpcId, then: () => void): void => {
    if (options.reportsWrites) waitingForWrite.set(requestId, then);
    else setImmediate(then);
  };
  const afterResponse = (requestId: JsonRpcId, opened: OpenedSession, then?: () => void): void => {
    const publish = (): void =>
      void setImmediate(() => {
        opened.afterResponse();
        then?.();
      });
    if (options.reportsWrites) waitingForWrite.set(requestId, publish);
    else publish();
  };
  const responseWritten = (message: object): void => {
    if (waitingForWrite.size === 0 || !("id" in message)) return;
    const then = waitingForWrite.get(message.id);
    if (!then) return;
    waitingForWrite.delete(message.id);
    then();
  };

  /** sessions that got the release notices on this connection */
  const noticed = new Set<string>();
  const sendReleaseNotices = (sessionId: string): void => {
    if (!port || !acceptsNotices(port) || noticed.has(sessionId)) return;
    const notices = options.releaseNotices?.() ?? [];
    if (notices.length === 0) return;
    noticed.add(sessionId);
    for (const notice of notices) {
      port.sessionUpdate(noticeNotification(sessionId, notice)).catch((e) => logger.warn("notice not sent", { error: describeError(e) }));
    }
  };

  const sessions = (): SessionService => {
    if (!service) throw new Error("no ACP connection");
    return service;
  };

  const withSession = <T>(sessionId: string, use: (engine: SessionEngine) => Promise<T>): Promise<T> => {
    const engine = sessions().session(sessionId);
    return engine.isOpen ? use(engine) : engine.whenOpen().then(() => use(engine));
  };

  const shutdown = (): Promise<void> => {
    waitingForWrite.clear();
    shutdownPromise ??= (service?.shutdown() ?? Promise.resolve()).catch((e) =>
      logger.warn("shutdown failed", { error: describeError(e) }),
    );
    return shutdownPromise;
  };

  const connect = (makePort: () => P, closed: Promise<void>): void => {
    if (service) throw new Error("a zcode-acp agent app serves one connection");
    port = makePort();
    broker = options.createBroker(options.logger.child("interactions"));
    service = sessionServiceOf(options, port, broker);
    void closed.then(shutdown, shutdown);
  };

  const cancelSession = (sessionId: string): void => {
    const engine = service?.session(sessionId, { reopen: false });
    if (engine) engine.cancel();
    // a subagent's child session (adr/0027; only where the port asked for subagents)
    else if (service?.cancelSubagent(sessionId)) return;
    else logger.debug("session/cancel for a session with nothing running (released or unknown) ignored", { sessionId });
  };

  const diagnostics = (): Record<string, number> =>
    service ? { ...service.diagnostics(), clientRequests: broker?.clientRequestCount() ?? 0 } : {};

  return {
    get port() {
      return port;
    },
    connect,
    sessions,
    withSession,
    afterWrite,
    afterResponse,
    responseWritten,
    sendReleaseNotices,
    cancelSession,
    shutdown,
    diagnostics,
  };
}
