/**
 * The ACP agent: thin handlers on the SDK app API that validate ACP-level input, call the
 * session service and map errors. One app serves one connection (the CLI has exactly one).
 */
import * as acp from "@agentclientprotocol/sdk";
import type { NativeApi } from "../native/native-api.js";
import type { Logger } from "../log/logger.js";
import type { InteractionBroker } from "../session/interactions/types.js";
import { SessionService, type OpenedSession } from "../session/session-service.js";
import { describeError } from "../util/errors.js";
import { AcpClientPort } from "./client-port.js";
import { AUTH_METHOD_ID, initializeResponse } from "./initialize.js";
import { answerPrompt } from "./prompt-failure.js";
import { answer, invalidParams } from "./request-errors.js";
import { decodeCursor, listPage } from "./session-list-page.js";
import { listFilterDirectory, workspaceDirectory } from "./session-params.js";
import { parseSteeringRequest } from "./steering-request.js";
import { STEERING_METHOD } from "../session/steering.js";
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
  /** the workspace where ACP gives none (session/list without cwd, authenticate): the process's working directory */
  defaultCwd: string;
  /** told about every interaction request sent to the client (wire order, ./wire-order.ts) */
  tracker?: InteractionTracker;
}

export interface ZcodeAgent {
  readonly app: acp.AgentApp;
  /** end every session (withdrawing interactions); idempotent. Does not stop the host. */
  shutdown(): Promise<void>;
  /** session counts for leak checks (`_zcode/diagnostics`) */
  diagnostics(): Record<string, number>;
  /** session/cancel as soon as the transport reads it (./wire-order.ts); unknown sessions are ignored */
  cancelSession(sessionId: string): void;
}

/** Queue work to run once the response of the current request has been written. */
function afterResponse(opened: OpenedSession): void {
  // The SDK enqueues the response in the microtasks after the handler resolves; setImmediate
  // runs after them, so these notifications follow the response on the wire.
  setImmediate(() => opened.afterResponse());
}

export function createZcodeAgent(options: ZcodeAgentOptions): ZcodeAgent {
  const logger = options.logger.child("acp");
  let service: SessionService | undefined;
  let port: AcpClientPort | undefined;
  let broker: InteractionBroker | undefined;
  let shutdownPromise: Promise<void> | undefined;

  const sessions = (): SessionService => {
    if (!service) throw new Error("no ACP connection");
    return service;
  };

  const shutdown = (): Promise<void> => {
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
      service = new SessionService({
        native: options.native,
        client: port,
        broker,
        logger: options.logger.child("session"),
        cancelGraceMs: options.cancelGraceMs,
        mergeDeltas: options.mergeDeltas,
        defaultCwd: options.defaultCwd,
      });
      void connection.closed.then(shutdown, shutdown);
    })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      if (port) port.capabilities = params.clientCapabilities ?? {};
      logger.info("initialize", { client: params.clientInfo?.name, protocolVersion: params.protocolVersion });
      return initializeResponse();
    })
    .onRequest(acp.methods.agent.authenticate, ({ params }) =>
      answer(async () => {
        if (params.methodId !== AUTH_METHOD_ID) throw invalidParams(`Unknown authentication method "${params.methodId}".`);
        await sessions().ensureSignedIn(options.defaultCwd);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.new, ({ params }) =>
      answer(async () => {
        const opened = await sessions().newSession({ cwd: await workspaceDirectory(params.cwd), mcpServers: params.mcpServers });
        afterResponse(opened);
        return { sessionId: opened.sessionId, modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.load, ({ params }) =>
      answer(async () => {
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().resumeSession({ sessionId: params.sessionId, cwd, mcpServers: params.mcpServers, replay: true });
        afterResponse(opened);
        return { modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params }) =>
      answer(async () => {
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().resumeSession({
          sessionId: params.sessionId,
          cwd,
          mcpServers: params.mcpServers ?? undefined,
          replay: false,
        });
        afterResponse(opened);
        return { modes: opened.modes, configOptions: opened.configOptions };
      }),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) =>
      answer(async () => {
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
        await sessions().get(params.sessionId).setMode(params.modeId);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      answer(async () => {
        if (typeof params.value !== "string") {
          throw invalidParams(`Config option "${params.configId}" takes one of its listed values, not a boolean.`);
        }
        return { configOptions: await sessions().get(params.sessionId).setConfigOption(params.configId, params.value) };
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) =>
      // a failure is also explained in the session (clients that show String(error)): adr/0010
      answerPrompt({ sessionUpdate: (n) => port!.sessionUpdate(n) }, params.sessionId, logger, async () => {
        const engine = sessions().get(params.sessionId);
        const onAbort = (): void => engine.cancel();
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          return await engine.prompt(params.prompt);
        } finally {
          signal.removeEventListener("abort", onAbort);
        }
      }),
    )
    // usually a no-op: the transport already cancelled when it read the line (cancelSession)
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => cancelSession(params.sessionId));

  // `_session/steering` (adr/0022): text for the running turn, answered injected / startedNewTurn / promptRequired
  app.onRequest(
    STEERING_METHOD,
    (params: unknown) => params,
    ({ params }) =>
      answer(async () => {
        const request = parseSteeringRequest(params);
        return sessions().get(request.sessionId).steer(request.prompt, request.idleBehavior);
      }),
  );

  const diagnostics = (): Record<string, number> =>
    service ? { ...service.diagnostics(), clientRequests: broker?.clientRequestCount() ?? 0 } : {};

  function cancelSession(sessionId: string): void {
    try {
      sessions().get(sessionId).cancel();
    } catch {
      logger.debug("session/cancel for an unknown session ignored", { sessionId });
    }
  }

  return { app, shutdown, diagnostics, cancelSession };
}
