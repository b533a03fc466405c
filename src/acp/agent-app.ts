/**
 * The ACP agent: thin handlers on the SDK app API that validate ACP-level input, call the
 * session service and map errors. One app serves one connection (the CLI has exactly one).
 */
import * as acp from "@agentclientprotocol/sdk";
import type { NativeApi } from "../native/native-api.js";
import type { Logger } from "../log/logger.js";
import type { InteractionBroker } from "../session/interactions/types.js";
import { SessionService, type OpenedSession } from "../session/session-service.js";
import type { SessionEngine } from "../session/session-engine.js";
import type { ClientPort } from "../session/client-port.js";
import { describeError } from "../util/errors.js";
import { AcpClientPort } from "./client-port.js";
import { AUTH_METHOD_ID, initializeResponse, unstableClientCapabilities } from "./initialize.js";
import { answerPrompt } from "./prompt-failure.js";
import { answer, asOnboardingRequired, invalidParams } from "./request-errors.js";
import { ONBOARD_AUTH_METHOD_ID, terminalAuthOf } from "./onboarding-auth.js";
import { ConnectionSignIn } from "./logout.js";
import { acceptsNotices, noticeNotification, type ReleaseNotice } from "./release-notices.js";
import { decodeCursor, listPage } from "./session-list-page.js";
import { listFilterDirectory, workspaceDirectory } from "./session-params.js";
import { parseSteeringRequest } from "./steering-request.js";
import { STEERING_METHOD } from "../session/steering.js";
import type { InteractionTracker } from "./wire-order.js";
import type { SessionCalls } from "../native/session-calls.js";
import { registerSessionManagement } from "./session-management.js";

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

export interface ZcodeAgent {
  readonly app: acp.AgentApp;
  /** end every session (withdrawing interactions); idempotent. Does not stop the host. */
  shutdown(): Promise<void>;
  /** session counts for leak checks (`_zcode/diagnostics`) */
  diagnostics(): Record<string, number>;
  /** session/cancel as soon as the transport reads it (./wire-order.ts); unknown sessions are ignored */
  cancelSession(sessionId: string): void;
  /** the transport wrote this message to the client (with `reportsWrites`) */
  responseWritten(message: object): void;
  /**
   * the transport read an `initialize` request: its raw params, before the SDK's stable parser
   * drops the unstable client capabilities (`unstableClientCapabilities`)
   */
  initializeRead(rawParams: unknown): void;
}

/**
 * The session service of one connection (either protocol): the next turn's updates wait for the
 * previous prompt's answer to be written (v1: `afterWrite`; v2: the idle `state_update`).
 */
export function sessionServiceOf(options: ZcodeAgentOptions, client: ClientPort, broker: InteractionBroker): SessionService {
  return new SessionService({
    native: options.native,
    client,
    broker,
    logger: options.logger.child("session"),
    cancelGraceMs: options.cancelGraceMs,
    mergeDeltas: options.mergeDeltas,
    answerWrites: true,
    ...(options.subscribeConfirmMs !== undefined ? { subscribeConfirmMs: options.subscribeConfirmMs } : {}),
    defaultCwd: options.defaultCwd,
  });
}

export function createZcodeAgent(options: ZcodeAgentOptions): ZcodeAgent {
  const logger = options.logger.child("acp");
  let service: SessionService | undefined;
  /** what the SDK's stable parser dropped from the last initialize read (plan, subagents) */
  let unstableCapabilities: ReturnType<typeof unstableClientCapabilities> = {};
  let port: AcpClientPort | undefined;
  let broker: InteractionBroker | undefined;
  let shutdownPromise: Promise<void> | undefined;

  /** sessions that got the release notices on this connection: once per session (adr/0021) */
  const noticed = new Set<string>();
  const sendReleaseNotices = (sessionId: string): void => {
    if (!port || !acceptsNotices(port.capabilities) || noticed.has(sessionId)) return;
    const notices = options.releaseNotices?.() ?? [];
    if (notices.length === 0) return;
    noticed.add(sessionId);
    for (const notice of notices) {
      port.sessionUpdate(noticeNotification(sessionId, notice)).catch((e) => logger.warn("notice not sent", { error: describeError(e) }));
    }
  };

  /** the session management calls initialize advertised */
  let advertised: SessionCalls | undefined;
  /** whether initialize offered the onboarding auth method (./onboarding-auth.ts) */
  let onboardingOffered = false;
  /** `logout` (./logout.ts): logged out, what uses the ZCode account is `auth_required` until `authenticate` */
  const signIn = new ConnectionSignIn();
  /** a session opener: a build no manifest covers is `auth_required` where onboarding was offered */
  const opening = <T>(body: () => Promise<T>): Promise<T> =>
    answer(() => {
      signIn.require();
      return body();
    }).catch((error: unknown) => {
      throw onboardingOffered ? asOnboardingRequired(error) : error;
    });

  /** opening updates waiting for their response to be written, by JSON-RPC request id */
  const waitingForWrite = new Map<unknown, () => void>();
  /**
   * A session's opening updates (slash commands, …) go out once its response was written, in a
   * later turn of the event loop, so a client that learns the session id from the response has
   * handled it first (adr/0017).
   */
  const afterResponse = (requestId: acp.JsonRpcId, opened: OpenedSession, then?: () => void): void => {
    const publish = (): void =>
      void setImmediate(() => {
        opened.afterResponse();
        then?.();
      });
    if (options.reportsWrites) waitingForWrite.set(requestId, publish);
    else publish();
  };
  /** Run `then` once the response to `requestId` was written (at once, a turn of the event loop later, without write reports). */
  const afterWrite = (requestId: acp.JsonRpcId, then: () => void): void => {
    if (options.reportsWrites) waitingForWrite.set(requestId, then);
    else setImmediate(then);
  };
  const responseWritten = (message: object): void => {
    if (waitingForWrite.size === 0 || !("id" in message)) return;
    const publish = waitingForWrite.get(message.id);
    if (!publish) return;
    waitingForWrite.delete(message.id);
    publish();
  };

  const sessions = (): SessionService => {
    if (!service) throw new Error("no ACP connection");
    return service;
  };

  /**
   * The session a request is for, once it is open: a released session is reopened first, so every
   * handler treats it as an attached one. On an open session `use` runs synchronously (the
   * operation keeps its place before a later close).
   */
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

  const app = acp
    .agent({ name: "zcode-acp" })
    .onConnect((connection) => {
      if (service) throw new Error("a zcode-acp agent app serves one connection");
      port = new AcpClientPort(connection.client, options.tracker);
      broker = options.createBroker(options.logger.child("interactions"));
      service = sessionServiceOf(options, port, broker);
      void connection.closed.then(shutdown, shutdown);
    })
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      if (port) {
        port.capabilities = { ...(params.clientCapabilities ?? {}), ...unstableCapabilities };
        port.subagents = unstableCapabilities.subagents !== undefined;
      }
      onboardingOffered = terminalAuthOf(params.clientCapabilities) !== undefined;
      logger.info("initialize", { client: params.clientInfo?.name, protocolVersion: params.protocolVersion });
      advertised = (await options.sessionCalls?.()) ?? advertised;
      return initializeResponse(params.clientCapabilities, advertised);
    })
    .onRequest(acp.methods.agent.authenticate, ({ params }) =>
      answer(async () => {
        // zcode-onboard: the review ran in the client's terminal; succeed once the install can be used
        if (params.methodId !== AUTH_METHOD_ID && params.methodId !== ONBOARD_AUTH_METHOD_ID)
          throw invalidParams(`Unknown authentication method "${params.methodId}".`);
        await signIn.authenticate(() => sessions().ensureSignedIn(options.defaultCwd));
        return {};
      }),
    )
    // scoped to this connection: the ZCode desktop app stays signed in (./logout.ts, adr/0025)
    .onRequest(acp.methods.agent.logout, () => signIn.logout())
    .onRequest(acp.methods.agent.session.new, ({ params, requestId }) =>
      opening(async () => {
        const opened = await sessions().newSession({ cwd: await workspaceDirectory(params.cwd), mcpServers: params.mcpServers });
        afterResponse(requestId, opened, () => sendReleaseNotices(opened.sessionId));
        return { sessionId: opened.sessionId, modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.load, ({ params, requestId }) =>
      opening(async () => {
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().resumeSession({ sessionId: params.sessionId, cwd, mcpServers: params.mcpServers, replay: true });
        afterResponse(requestId, opened);
        return { modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params, requestId }) =>
      opening(async () => {
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().resumeSession({
          sessionId: params.sessionId,
          cwd,
          mcpServers: params.mcpServers ?? undefined,
          replay: false,
        });
        afterResponse(requestId, opened);
        return { modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) =>
      answer(async () => {
        signIn.require();
        const filter = params.cwd === undefined || params.cwd === null ? undefined : await listFilterDirectory(params.cwd);
        if (filter === null) return { sessions: [] }; // a directory that does not exist has no sessions
        if (params.cursor) decodeCursor(params.cursor, filter); // refuse a bad cursor before asking ZCode
        return listPage(await sessions().listSessions(filter), filter, params.cursor);
      }),
    )
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      answer(async () => {
        await sessions().closeSession(params.sessionId);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.setMode, ({ params }) =>
      answer(async () => {
        await withSession(params.sessionId, (engine) => engine.setMode(params.modeId));
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      answer(async () => {
        if (typeof params.value !== "string") {
          throw invalidParams(`Config option "${params.configId}" takes one of its listed values, not a boolean.`);
        }
        const value = params.value;
        return { configOptions: await withSession(params.sessionId, (engine) => engine.setConfigOption(params.configId, value)) };
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal, requestId }) =>
      // a failure is also explained in the session (clients that show String(error)): adr/0010
      answerPrompt({ sessionUpdate: (n) => port!.sessionUpdate(n) }, params.sessionId, logger, async () => {
        // an unknown session is SESSION_NOT_FOUND (nothing is written under its id), logged out or not
        if (!sessions().knows(params.sessionId)) sessions().get(params.sessionId); // throws SESSION_NOT_FOUND
        signIn.require();
        // a released session reopens first: a cancel while it does is seen by this prompt
        const engine = sessions().session(params.sessionId);
        const cancelsBefore = engine.cancelCount;
        const onAbort = (): void => engine.cancel();
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          await engine.whenOpen();
          // a cancel read after this request but before this handler ran found no turn (adr/0019)
          if (options.tracker?.cancelledOnWire(requestId)) return { stopReason: "cancelled" as const };
          // the session holds the next turn's updates until this answer is out (session-turns.ts)
          const answered = engine.prompt(params.prompt, cancelsBefore);
          answered.then(
            (result) => afterWrite(requestId, () => engine.answerWritten(result)),
            (error: unknown) => afterWrite(requestId, () => engine.answerWritten(error)),
          );
          return await answered;
        } finally {
          signal.removeEventListener("abort", onAbort);
        }
      }),
    )
    // usually a no-op: the transport already cancelled when it read the line (cancelSession)
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => cancelSession(params.sessionId));

  // session/delete, session/set_title and session/fork where the install offers them (./session-management.ts)
  registerSessionManagement(app, { sessions, advertised: () => advertised, afterResponse, requireSignIn: () => signIn.require() });

  // `_session/steering` (adr/0022): text for the running turn, answered injected / startedNewTurn / promptRequired
  app.onRequest(
    STEERING_METHOD,
    (params: unknown) => params,
    ({ params }) =>
      answer(async () => {
        signIn.require();
        const request = parseSteeringRequest(params);
        return withSession(request.sessionId, (engine) => engine.steer(request.prompt, request.idleBehavior));
      }),
  );

  const diagnostics = (): Record<string, number> =>
    service ? { ...service.diagnostics(), clientRequests: broker?.clientRequestCount() ?? 0 } : {};

  /** A released session runs nothing: its cancel (like an unknown session's) is answered at once without reopening it. */
  function cancelSession(sessionId: string): void {
    const engine = service?.session(sessionId, { reopen: false });
    if (engine) engine.cancel();
    else if (service?.cancelSubagent(sessionId)) return;
    else logger.debug("session/cancel for a session with nothing running (released or unknown) ignored", { sessionId });
  }

  const initializeRead = (rawParams: unknown): void => {
    unstableCapabilities = unstableClientCapabilities(rawParams);
  };

  return { app, shutdown, diagnostics, cancelSession, responseWritten, initializeRead };
}
