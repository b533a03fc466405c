/**
 * The ACP agent: thin handlers on the SDK app API that validate ACP-level input, call the
 * session service and map errors. One app serves one connection (the CLI has exactly one).
 */
import { requestKey } from "./wire-order.js";
import * as acp from "@agentclientprotocol/sdk";
import { AcpClientPort } from "./client-port.js";
import { AUTH_METHOD_ID, initializeResponse, unstableClientCapabilities } from "./initialize.js";
import { answerPrompt } from "./prompt-failure.js";
import { answer, asOnboardingRequired, invalidParams } from "./request-errors.js";
import { ONBOARD_AUTH_METHOD_ID, terminalAuthOf } from "./onboarding-auth.js";
import { ConnectionSignIn } from "./logout.js";
import { acceptsNotices } from "./release-notices.js";
import { decodeCursor, listPage } from "./session-list-page.js";
import { listFilterDirectory, workspaceDirectory } from "./session-params.js";
import { parseSteeringRequest } from "./steering-request.js";
import { STEERING_METHOD } from "../session/steering.js";
import type { SessionCalls } from "../native/session-calls.js";
import { registerSessionManagement } from "./session-management.js";
import { parseSetModel, SET_MODEL_METHOD, withModels } from "./session-models.js";
import { MODEL_OPTION_ID } from "../session/session-options.js";
import { createAgentConnection, type ZcodeAgentOptions } from "./agent-connection.js";
import type { PromptControl } from "../session/session-turns.js";

export type { ZcodeAgentOptions };

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
  /** `$/cancel_request` of a running session/prompt, as soon as the transport reads it: that prompt only (adr/0036) */
  cancelPrompt(requestId: unknown): void;
  /** is this session/prompt request's turn the one ZCode runs now? */
  promptRuns(requestId: unknown): boolean;
  /**
   * the transport read an `initialize` request: its raw params, before the SDK's stable parser
   * drops the unstable client capabilities (`unstableClientCapabilities`)
   */
  initializeRead(rawParams: unknown): void;
}

export function createZcodeAgent(options: ZcodeAgentOptions): ZcodeAgent {
  const logger = options.logger.child("acp");
  /** the connection's port, service, writes, cancel and shutdown (./agent-connection.ts); notices only where the client advertised them */
  const connection = createAgentConnection<AcpClientPort>(options, logger, (port) => acceptsNotices(port.capabilities));
  const { sessions, withSession, afterWrite, afterResponse, sendReleaseNotices, cancelSession, shutdown } = connection;
  /** what the SDK's stable parser dropped from the last initialize read (plan, subagents) */
  let unstableCapabilities: ReturnType<typeof unstableClientCapabilities> = {};
  /** the running session/prompt requests' own controls, by request id (their `$/cancel_request`) */
  const prompts = new Map<string, PromptControl>();

  /** the session management calls initialize advertised */
  let advertised: SessionCalls | undefined;
  /** whether initialize offered the onboarding auth method (./onboarding-auth.ts) */
  let onboardingOffered = false;
  /** `logout` (./logout.ts): logged out, what uses the ZCode account is `auth_required` until `authenticate` */
  const signIn = new ConnectionSignIn();
  /**
   * before a request on a session this connection does not have: the install must be usable and
   * signed in (else `auth_required`, which says why), as for an opener; then the session is looked up
   */
  const usableInstall = async (): Promise<void> => {
    signIn.require();
    await sessions().ensureSignedIn(options.defaultCwd);
  };
  /** a session opener: no usable ZCode is `auth_required`; a build no manifest covers also names the onboarding method where it was offered */
  const opening = <T>(body: () => Promise<T>): Promise<T> =>
    answer(() => {
      signIn.require();
      return body();
    }).catch((error: unknown) => {
      throw onboardingOffered ? asOnboardingRequired(error) : error;
    });

  const app = acp
    .agent({ name: "zcode-acp" })
    .onConnect((opened) => connection.connect(() => new AcpClientPort(opened.client, options.tracker), opened.closed))
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      const port = connection.port;
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
        return withModels({ sessionId: opened.sessionId, modes: opened.modes, configOptions: opened.configOptions });
      }),
    )
    .onRequest(acp.methods.agent.session.load, ({ params, requestId }) =>
      opening(async () => {
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().resumeSession({ sessionId: params.sessionId, cwd, mcpServers: params.mcpServers, replay: true });
        afterResponse(requestId, opened);
        return withModels({ modes: opened.modes, configOptions: opened.configOptions });
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
        return withModels({ modes: opened.modes, configOptions: opened.configOptions });
      }),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) =>
      opening(async () => {
        const filter = params.cwd === undefined || params.cwd === null ? undefined : await listFilterDirectory(params.cwd);
        if (filter === null) return { sessions: [] }; // a directory that does not exist has no sessions
        if (params.cursor) decodeCursor(params.cursor, filter); // refuse a bad cursor before asking ZCode
        return listPage(await sessions().listSessions(filter), filter, params.cursor);
      }),
    )
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      answer(async () => {
        // closing what this connection does not have (never opened, already closed) leaves it closed: done
        if (!sessions().knows(params.sessionId)) return {};
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
      answerPrompt({ sessionUpdate: (n) => connection.port!.sessionUpdate(n) }, params.sessionId, logger, async () => {
        // an unknown session is SESSION_NOT_FOUND (nothing is written under its id), logged out or not
        if (!sessions().knows(params.sessionId)) sessions().get(params.sessionId); // throws SESSION_NOT_FOUND
        signIn.require();
        // a released session reopens first: a cancel while it does is seen by this prompt
        const engine = sessions().session(params.sessionId);
        const cancelsBefore = engine.cancelCount;
        const key = requestKey(requestId);
        // `$/cancel_request` of this request cancels this prompt only (adr/0036), not the session
        let control: PromptControl | undefined;
        let aborted = false;
        const onAbort = (): void => {
          aborted = true;
          control?.cancel();
        };
        signal.addEventListener("abort", onAbort, { once: true });
        try {
          await engine.whenOpen();
          // a cancel read after this request but before this handler ran found no turn (adr/0019)
          if (options.tracker?.cancelledOnWire(requestId) || aborted) return { stopReason: "cancelled" as const };
          // the session holds the next turn's updates until this answer is out (session-turns.ts, adr/0036)
          const answered = engine.prompt(params.prompt, cancelsBefore, (c) => {
            control = c;
            prompts.set(key, c);
          });
          answered.then(
            (result) => afterWrite(requestId, () => engine.answerWritten(result)),
            (error: unknown) => afterWrite(requestId, () => engine.answerWritten(error)),
          );
          return await answered;
        } finally {
          prompts.delete(key);
          signal.removeEventListener("abort", onAbort);
        }
      }),
    )
    // usually a no-op: the transport already cancelled when it read the line (cancelSession)
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => cancelSession(params.sessionId));

  // session/delete, session/set_title and session/fork where the install offers them (./session-management.ts)
  registerSessionManagement(app, {
    sessions,
    advertised: () => advertised,
    afterResponse,
    requireSignIn: () => signIn.require(),
    usableInstall,
  });

  // session/set_model (./session-models.ts): the model config option under ACP's legacy name
  app.onRequest(
    SET_MODEL_METHOD,
    (params: unknown) => params,
    ({ params }) =>
      answer(async () => {
        const request = parseSetModel(params);
        if (!sessions().knows(request.sessionId)) await usableInstall();
        await withSession(request.sessionId, (engine) => engine.setConfigOption(MODEL_OPTION_ID, request.modelId));
        return {};
      }),
  );

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

  const initializeRead = (rawParams: unknown): void => {
    unstableCapabilities = unstableClientCapabilities(rawParams);
  };

  const cancelPrompt = (requestId: unknown): void => prompts.get(requestKey(requestId))?.cancel();
  const promptRuns = (requestId: unknown): boolean => prompts.get(requestKey(requestId))?.runs() === true;

  return {
    app,
    shutdown,
    diagnostics: connection.diagnostics,
    cancelSession,
    responseWritten: connection.responseWritten,
    initializeRead,
    cancelPrompt,
    promptRuns,
  };
}
