/**
 * All ACP sessions of one client connection: creating, loading, resuming, listing and closing
 * native sessions, the sign-in check, and host exits. One `SessionEngine` per open session.
 */
import type { McpServer, SessionConfigOption, SessionInfo, SessionModeState } from "@agentclientprotocol/sdk";
import type { SessionSnapshot } from "../protocol/native-types.js";
import { BridgeError, describeError } from "../util/errors.js";
import { SessionEngine } from "./session-engine.js";
import type { SessionDeps } from "./session-deps.js";
import type { Disposable } from "../util/disposable.js";

export interface OpenedSession {
  sessionId: string;
  modes: SessionModeState;
  configOptions: SessionConfigOption[];
  /** call right after the ACP response is sent: publishes queued updates and the slash commands */
  afterResponse(): void;
}

export class SessionService {
  private readonly sessions = new Map<string, SessionEngine>();
  /** workspace → host incarnation in which the sign-in check passed */
  private readonly signedIn = new Map<string, number>();
  private readonly hostExits: Disposable;

  constructor(private readonly deps: SessionDeps) {
    this.hostExits = deps.native.onExit(({ error }) => {
      this.signedIn.clear();
      for (const engine of this.sessions.values()) engine.lostHost(error);
    });
  }

  get(sessionId: string): SessionEngine {
    const engine = this.sessions.get(sessionId);
    if (!engine || engine.isClosed) throw new BridgeError("SESSION_NOT_FOUND", `Unknown session ${sessionId}.`, { details: { sessionId } });
    return engine;
  }

  /** The workspace must have a usable provider (else AUTH_REQUIRED); checked once per host incarnation. */
  async ensureSignedIn(workspacePath: string): Promise<void> {
    const { native } = this.deps;
    if (this.signedIn.get(workspacePath) === native.incarnation && native.incarnation > 0) return;
    await native.checkSignIn(workspacePath);
    this.signedIn.set(workspacePath, native.incarnation);
  }

  async newSession(params: { cwd: string; mcpServers: McpServer[] }): Promise<OpenedSession> {
    await this.ensureSignedIn(params.cwd);
    // deferred: a session that never gets a prompt (a Paseo probe) leaves no trace in ZCode
    const created = await this.deps.native.createSession({
      workspacePath: params.cwd,
      mcpServers: params.mcpServers,
      persistence: "deferred",
    });
    const snapshot = this.checkWorkspace(created, params.cwd);
    const engine = await this.open(snapshot);
    return this.opened(engine);
  }

  /** session/load (replay = true) and session/resume (replay = false). */
  async resumeSession(params: {
    sessionId: string;
    cwd: string;
    mcpServers?: McpServer[] | undefined;
    replay: boolean;
  }): Promise<OpenedSession> {
    await this.ensureSignedIn(params.cwd);
    const existing = this.sessions.get(params.sessionId);
    if (existing && !existing.isClosed) {
      if (existing.workspacePath !== params.cwd) throw this.wrongWorkspace(params.sessionId, existing.workspacePath, params.cwd);
      if (params.replay) await existing.replay();
      return this.opened(existing);
    }
    const resumed = this.checkWorkspace(
      await this.deps.native.resumeSession({
        workspacePath: params.cwd,
        sessionId: params.sessionId,
        ...(params.mcpServers ? { mcpServers: params.mcpServers } : {}),
      }),
      params.cwd,
    );
    const engine = await this.open(resumed);
    if (params.replay) await engine.replay();
    return this.opened(engine);
  }

  async listSessions(cwd: string | undefined): Promise<SessionInfo[]> {
    const workspacePath = cwd ?? this.deps.defaultCwd;
    const sessions: SessionInfo[] = [];
    for (const item of await this.deps.native.listSessions(workspacePath)) {
      const path = item.workspacePath ?? workspacePath;
      if (cwd !== undefined && path !== cwd) continue;
      const info: SessionInfo = { sessionId: item.sessionId, cwd: path };
      if (item.title !== undefined) info.title = item.title;
      if (item.updatedAt !== undefined) info.updatedAt = new Date(item.updatedAt).toISOString();
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
    const totals = {
      sessions: this.sessions.size,
      turns: 0,
      subscriptions: 0,
      queuedUpdates: 0,
      activityWaiters: 0,
      pendingInteractions: this.deps.broker.pendingCount(),
    };
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
    this.hostExits.dispose();
    const engines = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(
      engines.map((engine) =>
        engine.close("disconnect").catch((e) => this.deps.logger.warn("session shutdown failed", { error: describeError(e) })),
      ),
    );
  }

  private async open(snapshot: SessionSnapshot): Promise<SessionEngine> {
    const engine = new SessionEngine(snapshot, this.deps);
    await engine.attach();
    this.sessions.set(engine.sessionId, engine);
    return engine;
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
