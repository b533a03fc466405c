/**
 * All ACP sessions of one client connection: creating, loading, resuming, listing and closing
 * native sessions, the sign-in check, and host exits. One `SessionEngine` per open session.
 */
import type { McpServer, SessionConfigOption, SessionInfo, SessionModeState } from "@agentclientprotocol/sdk";
import type { HostClient } from "../host/types.js";
import type { Logger } from "../log/logger.js";
import type { SessionListEntry, SessionSnapshot } from "../protocol/native-types.js";
import { parseSnapshot } from "../protocol/event-validation.js";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import type { ClientPort } from "./client-port.js";
import type { InteractionBroker } from "./interactions/types.js";
import { SessionEngine } from "./session-engine.js";
import { SIGN_IN_MESSAGE } from "./sign-in.js";

export interface SessionServiceDeps {
  host: HostClient;
  client: ClientPort;
  broker: InteractionBroker;
  logger: Logger;
  cancelGraceMs: number;
}

export interface OpenedSession {
  sessionId: string;
  modes: SessionModeState;
  configOptions: SessionConfigOption[];
  /** call right after the ACP response is sent: publishes queued updates and the slash commands */
  afterResponse(): void;
}

export { SIGN_IN_MESSAGE };

interface InitializeResult {
  available?: boolean;
  reason?: string;
  reasonCode?: string;
}

/** the host's error code for a missing session (zcode-host.md, "Errors seen": -32004 session unavailable) */
const NATIVE_SESSION_NOT_FOUND = -32004;

/** A native "session not found" failure (by its code, else its words) as SESSION_NOT_FOUND; anything else unchanged. */
function notFound(error: unknown, sessionId: string): unknown {
  if (!isBridgeError(error, "HOST_CALL_FAILED")) return error;
  const code = error.details?.code ?? error.details?.remoteCode;
  if (code === NATIVE_SESSION_NOT_FOUND || code === String(NATIVE_SESSION_NOT_FOUND) || /not found|unknown session|no such session|session unavailable/i.test(error.message)) {
    return new BridgeError("SESSION_NOT_FOUND", `ZCode has no session ${sessionId} in this workspace.`, { cause: error, details: { sessionId } });
  }
  return error;
}

export class SessionService {
  private readonly sessions = new Map<string, SessionEngine>();
  /** workspace → host incarnation in which the sign-in check passed */
  private readonly signedIn = new Map<string, number>();
  private readonly stopListening: () => void;

  constructor(private readonly deps: SessionServiceDeps) {
    this.stopListening = deps.host.onExit(({ error }) => {
      this.signedIn.clear();
      for (const engine of this.sessions.values()) engine.lostHost(error);
    });
  }

  get(sessionId: string): SessionEngine {
    const engine = this.sessions.get(sessionId);
    if (!engine || engine.isClosed) throw new BridgeError("SESSION_NOT_FOUND", `Unknown session ${sessionId}.`, { details: { sessionId } });
    return engine;
  }

  /** `zcode-agent.initialize` and the provider list must show a usable provider (else AUTH_REQUIRED). */
  async ensureSignedIn(workspacePath: string): Promise<void> {
    const { host } = this.deps;
    if (this.signedIn.get(workspacePath) === host.incarnation && host.incarnation > 0) return;
    const init = await host.call<InitializeResult>("agent", "initialize", { workspacePath });
    if (!init || init.available !== true) {
      if (init?.reasonCode === "provider_not_ready") throw new BridgeError("AUTH_REQUIRED", SIGN_IN_MESSAGE, { details: { reasonCode: init.reasonCode } });
      const reason = init?.reason ? `: ${init.reason}` : "";
      throw new BridgeError("HOST_CALL_FAILED", `ZCode is not available for ${workspacePath}${reason}.`, {
        details: { reasonCode: init?.reasonCode },
      });
    }
    const state = await host.call<{ modelCatalog?: { providers?: unknown[] } }>("agent", "readWorkspaceState", { workspacePath });
    const providers = state?.modelCatalog?.providers;
    if (Array.isArray(providers) && providers.length === 0) {
      throw new BridgeError("AUTH_REQUIRED", SIGN_IN_MESSAGE, { details: { providers: 0 } });
    }
    this.signedIn.set(workspacePath, host.incarnation);
  }

  async newSession(params: { cwd: string; mcpServers: McpServer[] }): Promise<OpenedSession> {
    await this.ensureSignedIn(params.cwd);
    const raw = await this.deps.host.call("agent", "createSession", {
      workspacePath: params.cwd,
      mcpServers: params.mcpServers,
      persistence: "immediate",
    });
    const snapshot = this.checkWorkspace(parseSnapshot(raw, "createSession"), params.cwd);
    const engine = await this.open(snapshot);
    return this.opened(engine);
  }

  /** session/load (replay = true) and session/resume (replay = false). */
  async resumeSession(params: { sessionId: string; cwd: string; mcpServers?: McpServer[] | undefined; replay: boolean }): Promise<OpenedSession> {
    await this.ensureSignedIn(params.cwd);
    const existing = this.sessions.get(params.sessionId);
    if (existing && !existing.isClosed) {
      if (existing.workspacePath !== params.cwd) throw this.wrongWorkspace(params.sessionId, existing.workspacePath, params.cwd);
      if (params.replay) await existing.replay(await this.read(params.sessionId, params.cwd));
      return this.opened(existing);
    }
    const resumeParams: Record<string, unknown> = { workspacePath: params.cwd, sessionId: params.sessionId };
    if (params.mcpServers) resumeParams.mcpServers = params.mcpServers;
    const raw = await this.deps.host.call("agent", "resumeSession", resumeParams).catch((error: unknown) => {
      throw notFound(error, params.sessionId);
    });
    const resumed = this.checkWorkspace(parseSnapshot(raw, "resumeSession"), params.cwd);
    const engine = await this.open(resumed);
    if (params.replay) await engine.replay(await this.read(params.sessionId, params.cwd));
    return this.opened(engine);
  }

  async listSessions(cwd: string | undefined): Promise<SessionInfo[]> {
    const workspacePath = cwd ?? process.cwd();
    const raw = await this.deps.host.call<unknown>("agent", "listSessions", { workspacePath, includeArchived: false });
    if (!Array.isArray(raw)) throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode returned a session list that is not an array.");
    const sessions: SessionInfo[] = [];
    for (const item of raw as SessionListEntry[]) {
      if (typeof item?.sessionId !== "string") throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode returned a session without an id.");
      const path = item.workspace?.workspacePath ?? workspacePath;
      if (cwd !== undefined && path !== cwd) continue;
      const info: SessionInfo = { sessionId: item.sessionId, cwd: path };
      if (typeof item.title === "string" && item.title !== "") info.title = item.title;
      if (typeof item.updatedAt === "number" && Number.isFinite(item.updatedAt)) info.updatedAt = new Date(item.updatedAt).toISOString();
      sessions.push(info);
    }
    return sessions;
  }

  async closeSession(sessionId: string): Promise<void> {
    const engine = this.get(sessionId);
    this.sessions.delete(sessionId);
    await engine.close("close");
  }

  /** Counts for leak checks (`_zcode/diagnostics`): sessions, running turns, pending interactions, queued updates, waiters. */
  diagnostics(): Record<string, number> {
    const totals = { sessions: this.sessions.size, turns: 0, subscriptions: 0, queuedUpdates: 0, activityWaiters: 0, pendingInteractions: this.deps.broker.pendingCount() };
    for (const engine of this.sessions.values()) {
      const d = engine.diagnostics();
      totals.turns += d.turn ? 1 : 0;
      totals.subscriptions += d.subscribed ? 1 : 0;
      totals.queuedUpdates += d.queuedUpdates;
      totals.activityWaiters += d.activityWaiters;
    }
    return totals;
  }

  /** The client went away: end every session without touching native state. */
  async shutdown(): Promise<void> {
    this.stopListening();
    const engines = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(engines.map((engine) => engine.close("disconnect").catch((e) => this.deps.logger.warn("session shutdown failed", { error: describeError(e) }))));
  }

  private async open(snapshot: SessionSnapshot): Promise<SessionEngine> {
    const engine = new SessionEngine(snapshot, this.deps);
    await engine.attach();
    this.sessions.set(engine.sessionId, engine);
    return engine;
  }

  private async read(sessionId: string, workspacePath: string): Promise<SessionSnapshot> {
    const raw = await this.deps.host.call("agent", "readSession", { workspacePath, sessionId, deliveryKind: "desktop-continuous" });
    return this.checkWorkspace(parseSnapshot(raw, "readSession"), workspacePath);
  }

  private opened(engine: SessionEngine): OpenedSession {
    return {
      sessionId: engine.sessionId,
      modes: engine.modes(),
      configOptions: engine.configOptions(),
      afterResponse: () => engine.announceCommands(),
    };
  }

  private checkWorkspace(snapshot: SessionSnapshot, cwd: string): SessionSnapshot {
    const actual = snapshot.session.workspace.workspacePath;
    if (actual !== cwd) throw this.wrongWorkspace(snapshot.session.sessionId, actual, cwd);
    return snapshot;
  }

  private wrongWorkspace(sessionId: string, actual: string, cwd: string): BridgeError {
    return new BridgeError("SESSION_NOT_FOUND", `Session ${sessionId} belongs to ${actual}, not ${cwd}.`, { details: { sessionId } });
  }
}
