/**
 * The experimental ACP v2 agent (adr/0028): handlers on the SDK's v2 app API
 * (`@agentclientprotocol/sdk/experimental/v2`, SDK 2.4.0's v2 schema) over the same session
 * service as v1 (src/session/). Only the protocol differs, and only here and in ./translate.ts:
 *
 *  - `session/prompt` answers at once with a receipt `{messageId}`; the turn runs on, its updates
 *    go out as v2 upserts, and its end is a `state_update` idle carrying the stop reason (a failed
 *    turn: stop reason `error` with the JSON-RPC error). `running` is reported when a turn starts.
 *  - no client fs, terminal or modes (the mode is a config option); permissions in v2's shape.
 *
 * Served: initialize, auth/login, session/new, session/resume (replayed from the start or not
 * at all; the current state snapshot goes out after the replay and before the response),
 * session/list, session/close, session/set_config_option, session/prompt, session/cancel;
 * session/delete where the install offers it (advertised as on v1, ../session-management.ts) and
 * auth/logout (scoped to this connection, as on v1: ../logout.ts). Refused with a typed error
 * (-32601, saying to use ACP v1): tool_call/cancel, terminal/cancel. The one-connection rules of v1
 * hold here too: both agents keep their per-connection state in ../agent-connection.ts.
 */
import { requestKey } from "../wire-order.js";
import { randomUUID } from "node:crypto";
import type * as v1 from "@agentclientprotocol/sdk";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { describeError } from "../../util/errors.js";
import { PACKAGE_VERSION } from "../../version.js";
import { createAgentConnection, type ZcodeAgentOptions } from "../agent-connection.js";
import { ConnectionSignIn } from "../logout.js";
import { notOffered } from "../session-management.js";
import type { SessionCalls } from "../../native/session-calls.js";
import type { PromptControl } from "../../session/session-turns.js";
import { AUTH_METHOD_ID } from "../initialize.js";
import { answer, invalidParams, toRequestError } from "../request-errors.js";
import { listPage, decodeCursor } from "../session-list-page.js";
import { listFilterDirectory, workspaceDirectory } from "../session-params.js";
import { V2ClientPort } from "./client-port-v2.js";
import { configOptionsV2, mcpServersV1 } from "./translate.js";

export const PROTOCOL_VERSION_V2 = 2;

/** the v2 methods zcode-acp does not serve yet: answered -32601 with what to do */
type RefusedMethod = "tool_call/cancel" | "terminal/cancel";
const METHOD_NOT_FOUND = acp.RequestError.methodNotFound("").code;

export interface ZcodeAgentV2 {
  readonly app: acp.AgentApp;
  /** end every session (withdrawing interactions); idempotent. Does not stop the host. */
  shutdown(): Promise<void>;
  /**
   * Serve one connection through the SDK's AgentProtocolRouter (v2 only: the transport sends
   * only a client whose first line is a v2 initialize here). `close` closes the routed connection.
   */
  connect(stream: acp.Stream): { readonly closed: Promise<void>; close(): void };
  cancelSession(sessionId: string): void;
  responseWritten(message: object): void;
  diagnostics(): Record<string, number>;
  /**
   * `$/cancel_request` of a session/prompt whose receipt is not written yet, as soon as the
   * transport reads it: that prompt only (adr/0036), as on v1. (After its receipt the request is
   * answered and there is nothing left to cancel.)
   */
  cancelPrompt(requestId: unknown): void;
  /** is this session/prompt request's turn the one ZCode runs now? */
  promptRuns(requestId: unknown): boolean;
}

export function initializeResponseV2(advertised?: SessionCalls): acp.InitializeResponse {
  return {
    protocolVersion: PROTOCOL_VERSION_V2,
    info: { name: "zcode-acp", title: "ZCode", version: PACKAGE_VERSION },
    capabilities: {
      session: {
        prompt: { image: {}, audio: {}, embeddedContext: {} },
        mcp: { stdio: {}, http: {} },
        ...(advertised?.delete === true ? { delete: {} } : {}),
      },
    },
    authMethods: [
      {
        type: "agent",
        methodId: AUTH_METHOD_ID,
        name: "Sign in with the ZCode app",
        description: "zcode-acp uses the ZCode desktop app's own sign-in. Sign in inside the ZCode app, then retry.",
      },
    ],
  };
}

/** A failure as the `error` of an idle `state_update` (a JSON-RPC error object). */
function stopError(error: unknown): acp.Error {
  const e = toRequestError(error);
  return { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) };
}

export function createZcodeAgentV2(options: ZcodeAgentOptions): ZcodeAgentV2 {
  const logger = options.logger.child("acp-v2");
  /** the connection's port, service, writes, cancel and shutdown (../agent-connection.ts); `notice` is a baseline v2 update, no capability gates it */
  const state = createAgentConnection<V2ClientPort>(options, logger, () => true);
  const { sessions, withSession, afterWrite, afterResponse, sendReleaseNotices, cancelSession, shutdown } = state;
  let connection: acp.AgentConnection | undefined;
  /** `auth/logout` (../logout.ts, adr/0025): scoped to this connection; the ZCode app stays signed in */
  const signIn = new ConnectionSignIn();
  /** what initialize advertised of session management (session/delete), from the install (adr/0026) */
  let advertised: SessionCalls | undefined;

  /** prompts of each session whose turn has not ended: idle is reported when the last one ends */
  const running = new Map<string, number>();
  /** the session/prompt requests whose receipt is not written yet: their own controls, by request id */
  const prompts = new Map<string, PromptControl>();
  const sendState = (sessionId: string, update: acp.StateUpdate): Promise<void> =>
    state
      .port!.send(sessionId, { sessionUpdate: "state_update", ...update })
      .catch((e) => logger.warn("state update not sent", { sessionId, error: describeError(e) }));

  const app = acp
    .agent({ name: "zcode-acp" })
    .onConnect((opened) => {
      // the next turn's updates wait for the previous turn's idle state_update (session-turns.ts)
      state.connect(() => new V2ClientPort(opened.client, options.tracker), opened.closed);
      connection = opened;
    })
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      logger.info("initialize (ACP v2)", { client: params.info.name, protocolVersion: params.protocolVersion });
      advertised = (await options.sessionCalls?.()) ?? advertised;
      return initializeResponseV2(advertised);
    })
    .onRequest(acp.methods.agent.auth.login, ({ params }) =>
      answer(async () => {
        if (params.methodId !== AUTH_METHOD_ID) throw invalidParams(`Unknown authentication method "${params.methodId}".`);
        await signIn.authenticate(() => sessions().ensureSignedIn(options.defaultCwd));
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.new, ({ params, requestId }) =>
      answer(async () => {
        signIn.require();
        const cwd = await workspaceDirectory(params.cwd);
        const opened = await sessions().newSession({ cwd, mcpServers: mcpServersV1(params.mcpServers) });
        afterResponse(requestId, opened, () => sendReleaseNotices(opened.sessionId));
        return { sessionId: opened.sessionId, configOptions: configOptionsV2(opened.configOptions) };
      }),
    )
    .onRequest(acp.methods.agent.session.resume, ({ params, requestId }) =>
      answer(async () => {
        signIn.require();
        const from = params.replayFrom as { type: string } | null | undefined;
        if (from !== undefined && from !== null && from.type !== "start") {
          throw invalidParams(`replayFrom "${from.type}" is not supported; send {"type":"start"} to replay the history, or leave it out.`);
        }
        const cwd = await workspaceDirectory(params.cwd);
        const sessionId = params.sessionId;
        const opened = await sessions().resumeSession({
          sessionId,
          cwd,
          mcpServers: params.mcpServers === undefined ? undefined : mcpServersV1(params.mcpServers),
          replay: from?.type === "start",
        });
        // the current state, after the replay and before the response (v2 resume)
        await sendState(sessionId, (running.get(sessionId) ?? 0) > 0 ? { state: "running" } : { state: "idle" });
        afterResponse(requestId, opened);
        return { configOptions: configOptionsV2(opened.configOptions) };
      }),
    )
    .onRequest(acp.methods.agent.session.list, ({ params }) =>
      answer(async () => {
        signIn.require();
        const filter = params.cwd === undefined || params.cwd === null ? undefined : await listFilterDirectory(params.cwd);
        if (filter === null) return { sessions: [] };
        if (params.cursor) decodeCursor(params.cursor, filter);
        const page = listPage(await sessions().listSessions(filter), filter, params.cursor);
        return {
          sessions: page.sessions.map((s) => ({
            sessionId: s.sessionId,
            cwd: s.cwd,
            ...(s.title !== undefined && s.title !== null ? { title: s.title } : {}),
            ...(s.updatedAt !== undefined && s.updatedAt !== null ? { updatedAt: s.updatedAt } : {}),
          })),
          ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
        };
      }),
    )
    .onRequest(acp.methods.agent.session.close, ({ params }) =>
      answer(async () => {
        await sessions().closeSession(params.sessionId);
        running.delete(params.sessionId);
        state.port?.forget(params.sessionId);
        return {};
      }),
    )
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) =>
      answer(async () => {
        const request = params as { type: string; value: unknown; configId: string; sessionId: string };
        if (request.type !== "id" || typeof request.value !== "string") {
          throw invalidParams(`Config option "${request.configId}" takes one of its listed value ids (type "id").`);
        }
        const value = request.value;
        const configOptions = await withSession(request.sessionId, (engine) => engine.setConfigOption(request.configId, value));
        return { configOptions: configOptionsV2(configOptions) };
      }),
    )
    .onRequest(acp.methods.agent.session.prompt, ({ params, requestId }) =>
      answer(async () => {
        signIn.require();
        const sessionId = params.sessionId;
        const engine = sessions().session(sessionId);
        const cancelsBefore = engine.cancelCount;
        await engine.whenOpen();
        const messageId = randomUUID();
        const written = new Promise<void>((resolve) => afterWrite(requestId, resolve));
        // a cancel read after this request but before this handler ran found no turn (adr/0019)
        if (options.tracker?.cancelledOnWire(requestId)) {
          // v2 states are aggregate: idle only when no other prompt of the session runs (its own end reports it)
          void written.then(() =>
            (running.get(sessionId) ?? 0) > 0 ? undefined : sendState(sessionId, { state: "idle", stopReason: "cancelled" }),
          );
          return { messageId };
        }
        state.port!.beginTurn(sessionId);
        running.set(sessionId, (running.get(sessionId) ?? 0) + 1);
        void sendState(sessionId, { state: "running" });
        const key = requestKey(requestId);
        const answered = engine.prompt(params.prompt as v1.ContentBlock[], cancelsBefore, (control) => prompts.set(key, control));
        // once the receipt is out, the request is answered: a later $/cancel_request of it is not read as this prompt's
        const forget = (): void => void prompts.delete(key);
        void written.then(forget);
        answered.then(forget, forget);
        const end = async (result: unknown, idle: acp.StateUpdate): Promise<void> => {
          await written;
          if (!running.has(sessionId)) {
            // the session was closed meanwhile: no state of a closed session is reported
            engine.answerWritten(result);
            return;
          }
          const left = running.get(sessionId)! - 1;
          if (left > 0) running.set(sessionId, left);
          else running.delete(sessionId);
          // a queued prompt still runs: the session stays running (v2 states are aggregate)
          if (left <= 0) await sendState(sessionId, idle);
          engine.answerWritten(result);
        };
        answered.then(
          (result) => void end(result, { state: "idle", stopReason: result.stopReason } as acp.StateUpdate),
          (error: unknown) => {
            logger.warn("turn failed", { sessionId, error: describeError(error) });
            void end(error, { state: "idle", stopReason: "error", error: stopError(error) });
          },
        );
        return { messageId };
      }),
    )
    // usually a no-op: the transport already cancelled when it read the line (cancelSession)
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => cancelSession(params.sessionId));

  const refuse = (method: RefusedMethod) => (): never => {
    throw new acp.RequestError(
      METHOD_NOT_FOUND,
      `${method} is not supported by zcode-acp over ACP v2 yet; connect with ACP protocol version 1 to use it.`,
      { code: "METHOD_NOT_SUPPORTED_V2", method },
    );
  };
  app
    .onRequest(acp.methods.agent.session.delete, ({ params }) => {
      if (advertised?.delete !== true) throw notOffered(acp.methods.agent.session.delete);
      return answer(async () => {
        signIn.require();
        await sessions().deleteSession(params.sessionId);
        return {};
      });
    })
    .onRequest(acp.methods.agent.auth.logout, () => signIn.logout())
    .onRequest("tool_call/cancel", refuse("tool_call/cancel"))
    .onRequest("terminal/cancel", refuse("terminal/cancel"));

  const connect = (stream: acp.Stream): { readonly closed: Promise<void>; close(): void } => {
    const routed = acp.agentProtocolRouter().withV2(app).connect(stream);
    return { closed: routed.closed, close: () => connection?.close() };
  };

  const cancelPrompt = (requestId: unknown): void => prompts.get(requestKey(requestId))?.cancel();
  const promptRuns = (requestId: unknown): boolean => prompts.get(requestKey(requestId))?.runs() === true;

  return {
    app,
    shutdown,
    connect,
    cancelSession,
    responseWritten: state.responseWritten,
    diagnostics: state.diagnostics,
    cancelPrompt,
    promptRuns,
  };
}
