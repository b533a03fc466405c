/**
 * Session management (docs/acp.md "Session management"): `session/delete` (stable),
 * `session/set_title` and `session/fork` (unstable in SDK 2.4.0: registered as extension methods,
 * their params checked here as their schemas say). Each is answered only where initialize advertised it, which
 * is where the install's host offers it (src/native/session-calls.ts); elsewhere the client gets
 * method-not-found, as for a method the agent does not have.
 */
import * as acp from "@agentclientprotocol/sdk";
import type { SessionCalls } from "../native/session-calls.js";
import type { OpenedSession, SessionService } from "../session/session-service.js";
import { answer, invalidParams } from "./request-errors.js";
import { workspaceDirectory } from "./session-params.js";
import { withModels } from "./session-models.js";

export const SET_TITLE_METHOD = "session/set_title";
export const FORK_METHOD = "session/fork";
/** the longest title kept (characters); a longer one is cut, as the schema lets the agent normalise it */
export const MAX_TITLE_CHARS = 200;

export interface SessionManagementDeps {
  sessions: () => SessionService;
  /** what initialize advertised (nothing before initialize) */
  advertised: () => SessionCalls | undefined;
  /** throws AUTH_REQUIRED while the connection is logged out (./logout.ts): all three use the ZCode account */
  requireSignIn: () => void;
  /** throws `auth_required` (saying why) unless the install is usable and signed in; may start the host */
  usableInstall: () => Promise<void>;
  /** a session opened by a request: its opening updates go out once the response was written */
  afterResponse: (requestId: acp.JsonRpcId, opened: OpenedSession) => void;
}

export interface ForkRequest {
  sessionId: string;
  cwd: string;
  mcpServers: acp.McpServer[] | undefined;
  /** the agent answer to fork at (JetBrains AIR: `_meta.jetbrains.air.fork.messageId`); absent: the newest */
  messageId: string | undefined;
}

/** session/fork params (unstable schema: `sessionId`, `cwd`, `mcpServers?`, `_meta?`), checked as the SDK would. */
export async function parseFork(params: unknown): Promise<ForkRequest> {
  if (!isRecord(params)) throw invalidParams(`${FORK_METHOD} takes an object with sessionId and cwd.`);
  const { sessionId, mcpServers } = params;
  if (typeof sessionId !== "string" || sessionId === "") throw invalidParams(`${FORK_METHOD} needs a sessionId.`);
  const cwd = await workspaceDirectory(params.cwd);
  if (mcpServers !== undefined && mcpServers !== null && (!Array.isArray(mcpServers) || !mcpServers.every(isRecord))) {
    throw invalidParams(`${FORK_METHOD}: mcpServers must be a list of MCP server descriptions.`);
  }
  const meta = isRecord(params._meta) ? params._meta : undefined;
  const air = meta && isRecord(meta.jetbrains) && isRecord(meta.jetbrains.air) ? meta.jetbrains.air : undefined;
  const fork = air && isRecord(air.fork) ? air.fork : undefined;
  const messageId = fork?.messageId;
  if (messageId !== undefined && (typeof messageId !== "string" || messageId === "")) {
    throw invalidParams(`${FORK_METHOD}: _meta.jetbrains.air.fork.messageId must be a message id.`);
  }
  return {
    sessionId,
    cwd,
    mcpServers: Array.isArray(mcpServers) ? (mcpServers as acp.McpServer[]) : undefined,
    messageId,
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function notOffered(method: string): acp.RequestError {
  const error = acp.RequestError.methodNotFound(method);
  return new acp.RequestError(
    error.code,
    `${method} is not available: this ZCode release does not offer it (initialize did not advertise it). Use a newer ZCode release.`,
    { code: "METHOD_NOT_FOUND", method },
  );
}

/** `{sessionId, title}` of session/set_title; the title trimmed, line breaks made spaces, cut to MAX_TITLE_CHARS. */
export function parseSetTitle(params: unknown): { sessionId: string; title: string } {
  if (!isRecord(params)) throw invalidParams(`${SET_TITLE_METHOD} takes an object with sessionId and title.`);
  const { sessionId, title } = params;
  if (typeof sessionId !== "string" || sessionId === "") throw invalidParams(`${SET_TITLE_METHOD} needs a sessionId.`);
  if (typeof title !== "string") throw invalidParams(`${SET_TITLE_METHOD} needs a title (a string).`);
  const normalised = Array.from(title.replace(/[\r\n\t]+/g, " ").trim())
    .slice(0, MAX_TITLE_CHARS)
    .join("")
    .trim();
  if (normalised === "") throw invalidParams("The title is empty; give the session a title with some text.");
  return { sessionId, title: normalised };
}

export function registerSessionManagement(app: acp.AgentApp, deps: SessionManagementDeps): void {
  app.onRequest(acp.methods.agent.session.delete, ({ params }) => {
    if (deps.advertised()?.delete !== true) throw notOffered(acp.methods.agent.session.delete);
    return answer(async () => {
      deps.requireSignIn();
      await deps.sessions().deleteSession(params.sessionId);
      return {};
    });
  });
  app.onRequest(
    SET_TITLE_METHOD,
    (params: unknown) => params,
    ({ params }) => {
      if (deps.advertised()?.setTitle !== true) throw notOffered(SET_TITLE_METHOD);
      return answer(async () => {
        deps.requireSignIn();
        const request = parseSetTitle(params);
        await deps.sessions().renameSession(request.sessionId, request.title);
        return { title: request.title };
      });
    },
  );
  app.onRequest(
    FORK_METHOD,
    (params: unknown) => params,
    ({ params, requestId }) => {
      // without a usable ZCode nothing was advertised: say that first (auth_required), not "not offered"
      if (deps.advertised()?.fork !== true)
        return answer(async () => {
          await deps.usableInstall();
          throw notOffered(FORK_METHOD);
        });
      return answer(async () => {
        deps.requireSignIn();
        const request = await parseFork(params);
        const opened = await deps.sessions().forkSession(request);
        deps.afterResponse(requestId, opened);
        return withModels({ sessionId: opened.sessionId, modes: opened.modes, configOptions: opened.configOptions });
      });
    },
  );
}
