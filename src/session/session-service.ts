/**
 * All ACP sessions of one client connection: creating, loading, resuming, listing and closing
 * native sessions, the sign-in check, and host exits. One `SessionEngine` per open session,
 * registered before its first await, so a second load or resume of the same session joins the
 * first (adr/0017). Idle sessions above `MAX_ATTACHED_SESSIONS` are released (unsubscribed and
 * closed natively) and reopened at their next use, transparently: every ACP handler reaches a
 * session through `session()`, which reopens a released one; the reopen asks for the mode and
 * option values the session had and checks them. A new open of an id (load, resume, reopen)
 * waits for that id's pending native close.
 */
import type { McpServer, SessionConfigOption, SessionInfo, SessionModeState } from "@agentclientprotocol/sdk";
import type { SessionSnapshot } from "../protocol/native-types.js";
import { BridgeError, describeError } from "../util/errors.js";
import { MODE_OPTION_ID, MODEL_OPTION_ID, THOUGHT_LEVEL_OPTION_ID } from "./session-options.js";
import { SessionEngine } from "./session-engine.js";
import type { SessionDeps } from "./session-deps.js";
import type { Disposable } from "../util/disposable.js";

/**
 * How many sessions keep a host subscription at once. Each legacy subscription also keeps the
 * session resident in ZCode's agent process until `closeSession` (docs/zcode-history.md §7), and
 * the bootstrap serves at most 256 subscriptions: above this bound the least recently used idle
 * session is released (adr/0017). 32 covers the threads one person works in at a time.
 */
export const MAX_ATTACHED_SESSIONS = 32;

/**
 * How many released sessions the bridge remembers (a small record each: id, workspace, MCP
 * servers, option values). Reached only by a client that opens this many sessions in one
 * connection without closing any; then opening another is refused with a message saying what to do.
 */
export const MAX_RELEASED_SESSIONS = 10_000;

/** What the bridge keeps of a released session to reopen it at its next use. */
interface ReleasedSession {
  sessionId: string;
  workspacePath: string;
  /** ZCode persisted it (it had a prompt): reopened with resumeSession; else created again with the same id */
  prompted: boolean;
  mcpServers: McpServer[] | undefined;
  /** config option values (mode, model, thought level) the reopened session must have again */
  configValues: Record<string, string>;
}

/** the order a reopen sets option values in: a model change may reset the thought level; plan last */
const RESTORE_ORDER = [MODEL_OPTION_ID, THOUGHT_LEVEL_OPTION_ID, MODE_OPTION_ID];

function restoreOrder(values: Record<string, string>): Record<string, string> {
  const rank = (id: string): number => (RESTORE_ORDER.includes(id) ? RESTORE_ORDER.indexOf(id) : RESTORE_ORDER.length);
  return Object.fromEntries(Object.entries(values).sort(([a], [b]) => rank(a) - rank(b)));
}

export interface OpenedSession {
  sessionId: string;
  modes: SessionModeState;
  configOptions: SessionConfigOption[];
  /** call once the ACP response is out: publishes queued updates and the slash commands */
  afterResponse(): void;
}

/** session/load (`replay`) and session/resume */
interface ResumeParams {
  sessionId: string;
  cwd: string;
  mcpServers?: McpServer[] | undefined;
  replay: boolean;
}

export class SessionService {
  private readonly sessions = new Map<string, SessionEngine>();
  private readonly released = new Map<string, ReleasedSession>();
  /** session/load requests in flight, by session */
  private readonly loading = new Map<string, { cwd: string; opened: Promise<OpenedSession> }>();
  /** MCP servers each open session was opened with (kept for a release) */
  private readonly mcpServers = new Map<string, McpServer[] | undefined>();
  /** native closes on their way (close, release, a failed open), by session: a new open of the id waits for it */
  private readonly nativeCloses = new Map<string, Promise<void>>();
  /** workspace → host incarnation in which the sign-in check passed */
  private readonly signedIn = new Map<string, number>();
  /** deletions, and renames and forks of sessions the bridge does not hold open, by id: opens of the id wait for them */
  private readonly nativeOps = new Map<string, { kind: "delete" | "rename" | "fork"; done: Promise<void> }>();
  private readonly hostExits: Disposable;

  constructor(private readonly deps: SessionDeps) {
    this.hostExits = deps.native.onExit(({ error }) => {
      this.signedIn.clear();
      for (const engine of this.sessions.values()) engine.lostHost(error);
    });
  }

  /**
   * The session an ACP request is for: the one accessor of every session handler (prompt,
   * steering, set_mode, set_config_option, cancel). The engine at once, synchronously (a request
   * on an open session keeps its place before a later close), open or opening: a released session
   * starts to reopen here (`isOpen` false until then; `whenOpen` tells). With `reopen: false`
   * (cancel: nothing runs in a released session) a released session is undefined, as is an
   * unknown one; otherwise an unknown or closed session throws SESSION_NOT_FOUND.
   */
  session(sessionId: string): SessionEngine;
  session(sessionId: string, options: { reopen: false }): SessionEngine | undefined;
  session(sessionId: string, options: { reopen?: boolean } = {}): SessionEngine | undefined {
    const current = this.sessions.get(sessionId);
    if (options.reopen === false) return current && !current.isClosed ? current : undefined;
    const engine = current ?? this.reopen(sessionId);
    if (!engine || engine.isClosed) throw this.unknown(sessionId);
    engine.lifecycle.touch();
    return engine;
  }

  /** whether this connection has the session, open or released (nothing is reopened) */
  knows(sessionId: string): boolean {
    const current = this.sessions.get(sessionId);
    return (current !== undefined && !current.isClosed) || this.released.has(sessionId);
  }

  /**
   * `session/cancel` of a subagent's child session (./subagents.ts): its parent engine handles it;
   * false when no open session has that child. At most MAX_ATTACHED_SESSIONS engines are asked.
   */
  cancelSubagent(childSessionId: string): boolean {
    for (const engine of this.sessions.values()) {
      if (!engine.isClosed && engine.cancelSubagent(childSessionId)) return true;
    }
    return false;
  }

  /** The open (or opening) session's engine, never reopening: released and unknown sessions throw SESSION_NOT_FOUND. */
  get(sessionId: string): SessionEngine {
    const engine = this.session(sessionId, { reopen: false });
    if (!engine) throw this.unknown(sessionId);
    return engine;
  }

  /** `session()`, then wait until it is open. */
  async acquire(sessionId: string): Promise<SessionEngine> {
    const engine = this.session(sessionId);
    await engine.whenOpen();
    return engine;
  }

  /** `session()` (kept for the tests that name it). */
  opening(sessionId: string): SessionEngine {
    return this.session(sessionId);
  }

  /** The workspace must have a usable provider (else AUTH_REQUIRED); checked once per host incarnation. */
  async ensureSignedIn(workspacePath: string): Promise<void> {
    const { native } = this.deps;
    if (this.signedIn.get(workspacePath) === native.incarnation && native.incarnation > 0) return;
    await native.checkSignIn(workspacePath);
    this.signedIn.set(workspacePath, native.incarnation);
  }

  async newSession(params: { cwd: string; mcpServers: McpServer[] }): Promise<OpenedSession> {
    this.checkRoom();
    await this.ensureSignedIn(params.cwd);
    // deferred: a session that never gets a prompt (a Paseo probe) leaves no trace in ZCode
    const created = this.checkWorkspace(
      await this.deps.native.createSession({ workspacePath: params.cwd, mcpServers: params.mcpServers, persistence: "deferred" }),
      params.cwd,
    );
    const engine = this.register(created.session.sessionId, params.cwd, params.mcpServers, false);
    await this.opened(
      engine,
      engine.open(() => Promise.resolve(created)),
    );
    return this.answer(engine);
  }

  /** session/load (replay = true) and session/resume (replay = false); a second one of the same session joins the first. */
  async resumeSession(params: ResumeParams): Promise<OpenedSession> {
    const { sessionId, cwd } = params;
    // a load while a load of the same session (and workspace) is in flight gets that load's result (one replay)
    const loading = params.replay ? this.loading.get(sessionId) : undefined;
    if (loading && loading.cwd === cwd) return loading.opened;
    const opened = this.open(params);
    if (params.replay && !loading) {
      this.loading.set(sessionId, { cwd, opened });
      const done = (): void => void this.loading.delete(sessionId);
      void opened.then(done, done);
    }
    return opened;
  }

  private async open(params: ResumeParams): Promise<OpenedSession> {
    const { sessionId, cwd } = params;
    let engine = this.sessions.get(sessionId);
    if (engine && !engine.isClosed) {
      if (engine.workspacePath !== cwd) throw this.wrongWorkspace(sessionId, engine.workspacePath, cwd);
      engine.lifecycle.touch();
      await engine.whenOpen();
    } else if (this.released.has(sessionId)) {
      const record = this.released.get(sessionId)!;
      if (record.workspacePath !== cwd) throw this.wrongWorkspace(sessionId, record.workspacePath, cwd);
      engine = this.reopen(sessionId)!;
      await engine.whenOpen();
    } else {
      this.checkRoom();
      // registered before the first await: a load and a resume of this session in flight together share one engine
      const opening = this.register(sessionId, cwd, params.mcpServers, true);
      engine = opening;
      await this.opened(
        opening,
        opening.open(async () => {
          // an earlier engine of this id is still being closed natively: its closeSession must not follow this resume
          await this.closedNatively(sessionId);
          await this.ensureSignedIn(cwd);
          return this.checkWorkspace(
            await this.deps.native.resumeSession({
              workspacePath: cwd,
              sessionId,
              ...(params.mcpServers ? { mcpServers: params.mcpServers } : {}),
            }),
            cwd,
          );
        }),
      );
    }
    if (params.replay) await engine.replay();
    return this.answer(engine);
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
    if (this.released.delete(sessionId)) return; // closed natively when it was released (a new open waits for that close)
    const engine = this.get(sessionId);
    this.forget(sessionId, engine);
    const closing = engine.close("close");
    this.closingNatively(engine);
    await closing;
  }

  /**
   * session/delete (docs/acp.md "Session management", adr/0032): the bridge's side ends first,
   * through the close path of `closeSession` (prompts answered cancelled, interactions withdrawn,
   * the subscription ended, the native close; for a released session, the close of its release),
   * then ZCode deletes the session as its desktop does (`zcode-task.deleteTask`: it leaves ZCode's
   * lists, its conversation is kept). A second delete of the same session while one runs gets that
   * one's answer; an open of the id waits for it. A session of this connection that was never
   * prompted left nothing in ZCode (deferred persistence): closing it is the whole deletion. An id
   * ZCode does not list (unknown, or deleted already) is deleted already: nothing is resumed or sent.
   */
  deleteSession(sessionId: string): Promise<void> {
    const running = this.nativeOps.get(sessionId);
    if (running?.kind === "delete") return running.done;
    return this.nativeOp(sessionId, "delete", async () => {
      if (running) await running.done.catch(() => undefined);
      const known = this.endForDeletion(sessionId);
      await known?.closed;
      if (known && !known.prompted) return;
      const workspacePath = known?.workspacePath ?? (await this.listedIn(sessionId));
      if (workspacePath === undefined) {
        this.deps.logger.debug("session/delete of a session ZCode does not list: nothing to delete", { sessionId });
        return;
      }
      await this.ensureSignedIn(workspacePath);
      await this.deps.native.deleteSession({ workspacePath, sessionId });
    });
  }

  /**
   * session/set_title: ZCode's `renameSession`. A session open on this connection is renamed where
   * ZCode holds it (its title arrives as a `session_info_update` from ZCode's own title event); a
   * released or unknown one is resumed in ZCode for the call and closed again, while opens of it wait.
   */
  async renameSession(sessionId: string, title: string): Promise<void> {
    await this.nativeOps.get(sessionId)?.done.catch(() => undefined);
    const engine = this.session(sessionId, { reopen: false });
    if (engine) {
      await engine.whenOpen();
      if (engine.isClosed) throw this.unknown(sessionId);
      await this.deps.native.renameSession({ workspacePath: engine.workspacePath, sessionId, title, held: true });
      return;
    }
    await this.nativeOp(sessionId, "rename", async () => {
      await this.closesDone(sessionId);
      const workspacePath = this.released.get(sessionId)?.workspacePath ?? (await this.findWorkspace(sessionId));
      await this.ensureSignedIn(workspacePath);
      await this.deps.native.renameSession({ workspacePath, sessionId, title, held: false });
    });
  }

  /**
   * session/fork: ZCode forks the session at one of the agent's answers (`messageId`, else the
   * newest) into a new session of the same directory, which is then opened here as session/resume
   * opens one (no replay: the client loads it when it wants its history).
   */
  async forkSession(params: {
    sessionId: string;
    cwd: string;
    mcpServers: McpServer[] | undefined;
    messageId: string | undefined;
  }): Promise<OpenedSession> {
    const { sessionId, cwd } = params;
    await this.nativeOps.get(sessionId)?.done.catch(() => undefined);
    const engine = this.session(sessionId, { reopen: false });
    let forked: string;
    if (engine) {
      await engine.whenOpen();
      if (engine.isClosed) throw this.unknown(sessionId);
      if (engine.workspacePath !== cwd) throw this.forkElsewhere(sessionId, engine.workspacePath, cwd);
      forked = await this.deps.native.forkSession({ workspacePath: cwd, sessionId, messageId: params.messageId, held: true });
    } else {
      const record = this.released.get(sessionId);
      if (record && record.workspacePath !== cwd) throw this.forkElsewhere(sessionId, record.workspacePath, cwd);
      let result = "";
      await this.nativeOp(sessionId, "fork", async () => {
        await this.closesDone(sessionId);
        await this.ensureSignedIn(cwd);
        result = await this.deps.native.forkSession({ workspacePath: cwd, sessionId, messageId: params.messageId, held: false });
      });
      forked = result;
    }
    this.deps.logger.debug("session forked", { sessionId, forked });
    return this.resumeSession({ sessionId: forked, cwd, mcpServers: params.mcpServers, replay: false });
  }

  private forkElsewhere(sessionId: string, actual: string, cwd: string): BridgeError {
    return new BridgeError(
      "INVALID_PARAMS",
      `Session ${sessionId} belongs to ${actual}; ZCode forks a session into its own directory, so fork it with that cwd, not ${cwd}.`,
      { details: { sessionId } },
    );
  }

  /** A native operation on a session the bridge does not hold open; opens of the id wait for it. */
  private nativeOp(sessionId: string, kind: "delete" | "rename" | "fork", body: () => Promise<void>): Promise<void> {
    const done = body();
    const entry = { kind, done };
    this.nativeOps.set(sessionId, entry);
    const settle = (): void => {
      if (this.nativeOps.get(sessionId) === entry) this.nativeOps.delete(sessionId);
    };
    done.then(settle, settle);
    return done;
  }

  /**
   * End the bridge's side of a session about to be deleted (the close path of `closeSession`);
   * what it knew of it, or undefined for a session this connection never had.
   */
  private endForDeletion(sessionId: string): { workspacePath: string; prompted: boolean; closed: Promise<void> } | undefined {
    const record = this.released.get(sessionId);
    if (record) {
      this.released.delete(sessionId);
      // its release closed it natively: that close is done before ZCode is asked to delete it
      return { workspacePath: record.workspacePath, prompted: record.prompted, closed: this.closesDone(sessionId) };
    }
    const engine = this.sessions.get(sessionId);
    if (!engine) return undefined;
    this.forget(sessionId, engine);
    void engine.close("close").catch((e) => this.deps.logger.warn("closing a session to delete failed", { error: describeError(e) }));
    this.closingNatively(engine);
    // the native close (after an aborted operation) is done before ZCode is asked to delete it
    return { workspacePath: engine.workspacePath, prompted: engine.prompted, closed: engine.whenClosed() };
  }

  /**
   * The workspace of a session this connection does not have, looked up among the default
   * directory's sessions (deleted ones are not listed); undefined when it is not there.
   */
  private async listedIn(sessionId: string): Promise<string | undefined> {
    const workspacePath = this.deps.defaultCwd;
    const found = (await this.deps.native.listSessions(workspacePath)).find((item) => item.sessionId === sessionId);
    return found ? (found.workspacePath ?? workspacePath) : undefined;
  }

  /** `listedIn`, or SESSION_NOT_FOUND saying where it looked. */
  private async findWorkspace(sessionId: string): Promise<string> {
    const workspacePath = await this.listedIn(sessionId);
    if (workspacePath !== undefined) return workspacePath;
    throw new BridgeError(
      "SESSION_NOT_FOUND",
      `ZCode has no session ${sessionId} among the sessions of ${this.deps.defaultCwd}. If it belongs to another directory, ` +
        "load it first (session/load with its cwd), then retry.",
      { details: { sessionId } },
    );
  }

  /** Counts for leak checks (`_zcode/diagnostics`): sessions, running turns, pending interactions, queued updates, waiters. */
  diagnostics(): Record<string, number> {
    const totals = {
      sessions: this.sessions.size,
      releasedSessions: this.released.size,
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
    this.released.clear();
    this.nativeCloses.clear();
    await Promise.all(
      engines.map((engine) =>
        engine.close("disconnect").catch((e) => this.deps.logger.warn("session shutdown failed", { error: describeError(e) })),
      ),
    );
  }

  /** A new engine for the session, registered at once (before anything is awaited). */
  private register(
    sessionId: string,
    workspacePath: string,
    mcpServers: McpServer[] | undefined,
    prompted: boolean,
    reopened = false,
  ): SessionEngine {
    const engine = new SessionEngine({ sessionId, workspacePath }, this.deps, { prompted, reopened });
    this.sessions.set(sessionId, engine);
    this.mcpServers.set(sessionId, mcpServers);
    return engine;
  }

  /** Wait for an engine's open; a failed open unregisters it (and closes what was opened natively). */
  private async opened(engine: SessionEngine, opening: Promise<void>): Promise<void> {
    try {
      await opening;
    } catch (error) {
      if (this.sessions.get(engine.sessionId) === engine) this.forget(engine.sessionId, engine);
      const closing = engine.close("close");
      this.closingNatively(engine);
      await closing;
      throw error;
    }
    this.releaseIdle(engine);
  }

  /**
   * Reopen a released session: resumed if ZCode kept it (asking for its mode: a cold resume may
   * lose plan), else created again with the same id; either way its mode and option values are set
   * again where they differ and checked (`SessionEngine.open`). A failed reopen closes what it
   * opened and keeps the record: the next use tries again.
   */
  private reopen(sessionId: string): SessionEngine | undefined {
    const record = this.released.get(sessionId);
    if (!record) return undefined;
    this.released.delete(sessionId);
    const engine = this.register(sessionId, record.workspacePath, record.mcpServers, record.prompted, true);
    const where = { workspacePath: record.workspacePath, sessionId };
    const expectedMode = record.configValues[MODE_OPTION_ID];
    const opening = engine.open(async () => {
      await this.closedNatively(sessionId);
      await this.ensureSignedIn(record.workspacePath);
      const mcp = record.mcpServers ? { mcpServers: record.mcpServers } : {};
      if (record.prompted) {
        const resumed = await this.deps.native.resumeSession({ ...where, ...mcp, ...(expectedMode ? { expectedMode } : {}) });
        return this.checkWorkspace(resumed, record.workspacePath);
      }
      // a deferred session released before its first prompt left no trace in ZCode: the same id again
      return this.checkWorkspace(
        await this.deps.native.createSession({ ...where, mcpServers: record.mcpServers ?? [], persistence: "deferred" }),
        record.workspacePath,
      );
    }, restoreOrder(record.configValues));
    this.deps.logger.debug("reopening a released session", { sessionId, prompted: record.prompted });
    // registered first, so this runs before the requests that wait for the open see its failure
    opening.then(
      () => this.releaseIdle(engine),
      (error: unknown) => {
        this.deps.logger.warn("reopening a released session failed", { sessionId, error: describeError(error) });
        if (this.sessions.get(sessionId) !== engine) return; // closed (or shut down) meanwhile
        this.forget(sessionId, engine);
        void engine.close("close");
        this.closingNatively(engine);
        // what it learnt while open (a first prompt) stays true
        this.released.set(sessionId, { ...record, prompted: record.prompted || engine.prompted });
      },
    );
    return engine;
  }

  /**
   * Above `MAX_ATTACHED_SESSIONS`, release the least recently used idle sessions (never `keep`):
   * unsubscribe and close natively, keeping a small record to reopen them at their next use.
   */
  private releaseIdle(keep: SessionEngine): void {
    if (this.sessions.size <= MAX_ATTACHED_SESSIONS) return;
    const candidates = [...this.sessions.values()]
      .filter((engine) => engine !== keep && engine.idle)
      .sort((a, b) => a.lifecycle.lastUsed - b.lifecycle.lastUsed);
    for (const engine of candidates) {
      if (this.sessions.size <= MAX_ATTACHED_SESSIONS) break;
      const record: ReleasedSession = {
        sessionId: engine.sessionId,
        workspacePath: engine.workspacePath,
        prompted: engine.prompted,
        mcpServers: this.mcpServers.get(engine.sessionId),
        configValues: engine.configValues(),
      };
      this.forget(engine.sessionId, engine);
      void engine.close("release");
      this.closingNatively(engine);
      this.released.set(engine.sessionId, record);
      this.deps.logger.debug("idle session released", { sessionId: engine.sessionId, prompted: engine.prompted });
    }
  }

  /** Note the native close of a closed engine (call after `close`): a new open of its id waits for it. */
  private closingNatively(engine: SessionEngine): void {
    const { sessionId } = engine;
    const closed = engine.whenClosed();
    this.nativeCloses.set(sessionId, closed);
    void closed.then(() => {
      if (this.nativeCloses.get(sessionId) === closed) this.nativeCloses.delete(sessionId);
    });
  }

  /** Resolves once no native close of this id is on its way. */
  private async closedNatively(sessionId: string): Promise<void> {
    await this.closesDone(sessionId);
    const op = this.nativeOps.get(sessionId);
    if (op) await op.done.catch(() => undefined);
  }

  /** Resolves once no native close of this id is on its way (deletions and renames aside). */
  private async closesDone(sessionId: string): Promise<void> {
    for (let closing = this.nativeCloses.get(sessionId); closing; closing = this.nativeCloses.get(sessionId)) await closing;
  }

  private forget(sessionId: string, engine: SessionEngine): void {
    if (this.sessions.get(sessionId) !== engine) return;
    this.sessions.delete(sessionId);
    this.mcpServers.delete(sessionId);
  }

  /** Refuse to open one more session once the released records reached their bound. */
  private checkRoom(): void {
    if (this.released.size < MAX_RELEASED_SESSIONS) return;
    throw new BridgeError(
      "SESSION_BUSY",
      `This connection already has ${this.sessions.size + this.released.size} open sessions, the most zcode-acp keeps. ` +
        "Close sessions you no longer use (session/close), or restart the agent to start afresh; closed sessions stay in ZCode and can be loaded again.",
    );
  }

  private answer(engine: SessionEngine): OpenedSession {
    // once per opening: a load that joined another load shares its answer and announces nothing after its response
    let announced = false;
    return {
      sessionId: engine.sessionId,
      modes: engine.modes(),
      configOptions: engine.configOptions(),
      afterResponse: () => {
        if (announced) return;
        announced = true;
        engine.announceCommands();
      },
    };
  }

  private checkWorkspace(snapshot: SessionSnapshot, cwd: string): SessionSnapshot {
    const actual = snapshot.session.workspace.workspacePath;
    if (actual !== cwd) throw this.wrongWorkspace(snapshot.session.sessionId, actual, cwd);
    return snapshot;
  }

  private unknown(sessionId: string): BridgeError {
    return new BridgeError("SESSION_NOT_FOUND", `Unknown session ${sessionId}.`, { details: { sessionId } });
  }

  private wrongWorkspace(sessionId: string, actual: string, cwd: string): BridgeError {
    return new BridgeError("SESSION_NOT_FOUND", `Session ${sessionId} belongs to ${actual}, not ${cwd}.`, { details: { sessionId } });
  }
}
