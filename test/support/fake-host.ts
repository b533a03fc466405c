/**
 * The one in-memory `HostClient` of the unit tests. By default it plays a host with a session
 * store (the session engine's and the ACP handlers' tests): it keeps sessions as snapshots,
 * delivers events to subscribers synchronously, and lets a test script what happens on
 * `sendPrompt` and `stopGeneration`. With `{ calls: "null", incarnation: 1 }` it is the already
 * running host of the interaction broker's tests, which answers every call with null and only
 * records what was sent. Either way it records every call and semantic operation.
 */
import type {
  HostClient,
  HostEventSink,
  HostSubscription,
  SemanticOperation,
  ServiceName,
  SessionEventTarget,
} from "../../src/host/types.js";
import { BridgeError } from "../../src/util/errors.js";

export interface RecordedCall {
  service: ServiceName;
  method: string;
  params: Record<string, unknown>;
}

export interface RecordedOperation {
  operation: SemanticOperation;
  sessionId: string;
  params: Record<string, unknown>;
}

/** one entry of the journal of calls and operations in the order they were made */
export interface HostRecord {
  kind: "operate" | "call";
  /** `service.method` of a call, the operation's name of an operate */
  name: string;
  sessionId?: string;
  params: Record<string, unknown>;
  incarnation: number;
}

export interface FakeHostOptions {
  /**
   * How native calls are answered: "sessions" (default) from the built-in session store
   * (createSession, sendPrompt, setMode, …; an unknown method fails "Method not found"), or
   * "null": every call answers null.
   */
  calls?: "sessions" | "null";
  /** the incarnation before the first call: 0 (default) = not started, the first call or subscription starts 1 */
  incarnation?: number;
}

type ExitListener = (info: { incarnation: number; error: BridgeError }) => void;

export type Snapshot = Record<string, any>;

export function makeSnapshot(sessionId: string, workspacePath: string, overrides: Snapshot = {}): Snapshot {
  return {
    session: { sessionId, workspace: { workspacePath }, title: "", status: "idle", mode: "build", updatedAt: 1_760_000_000_000 },
    settings: {
      model: {
        current: { providerId: "builtin:zai-coding-plan", modelId: "GLM-5.2" },
        available: [
          { ref: { providerId: "builtin:zai-coding-plan", modelId: "GLM-5.2" }, label: "GLM-5.2", providerLabel: "Z.ai - Coding Plan" },
          {
            ref: { providerId: "builtin:zai-coding-plan", modelId: "GLM-5-Turbo" },
            label: "GLM-5-Turbo",
            providerLabel: "Z.ai - Coding Plan",
          },
        ],
      },
      thoughtLevel: {
        enabled: true,
        current: "high",
        available: [
          { value: "low", label: "Low" },
          { value: "high", label: "High" },
        ],
      },
      mode: { current: "build" },
    },
    runtime: { eventSeq: 0, contextUsage: { used: 1000, size: 200000, cost: { amount: 0.01, currency: "USD" } } },
    messages: [],
    todos: [],
    slashCommands: [
      { name: "compact", description: "Compact the conversation" },
      { name: "plan", description: "Plan", inputHint: "[task]" },
    ],
    ...overrides,
  };
}

export class FakeSession {
  seq: number;
  readonly sinks = new Set<HostEventSink>();
  private turnCounter = 0;
  currentTurnId: string | undefined;

  constructor(public snapshot: Snapshot) {
    this.seq = snapshot.runtime?.eventSeq ?? 0;
  }

  get id(): string {
    return this.snapshot.session.sessionId;
  }

  /** Deliver a raw top-level event to every subscriber. */
  raw(event: unknown): void {
    for (const sink of [...this.sinks]) void sink.onEvent(structuredClone(event));
  }

  /** Fire a session.event; seq increases by `gap` (default 1, gaps are legal). */
  event(type: string, payload: Record<string, unknown>, options: { turnId?: string | null; seq?: number; gap?: number } = {}): void {
    // an explicit seq (a regression or duplicate under test) is one bad event: like the real host,
    // the session's counter itself never goes back
    const seq = options.seq ?? this.seq + (options.gap ?? 1);
    this.seq = Math.max(this.seq, seq);
    const turnId = options.turnId === null ? undefined : (options.turnId ?? this.currentTurnId);
    const event: Record<string, unknown> = {
      eventId: `e${seq}`,
      sessionId: this.id,
      seq,
      timestamp: 1_760_000_000_000 + seq,
      deliveryKind: "desktop-continuous",
      type,
      payload,
    };
    if (turnId) event.turnId = turnId;
    this.raw({ type: "session.event", event });
  }

  startTurn(payload: Record<string, unknown> = {}): string {
    this.currentTurnId = `turn-${this.id}-${++this.turnCounter}`;
    this.snapshot.session.status = "running";
    this.event("turn.started", { turnNumber: this.turnCounter, input: "", ...payload });
    return this.currentTurnId;
  }

  text(delta: string, messageId = "m1"): void {
    this.event("model.streaming", { kind: "text_delta", assistantMessageId: messageId, delta });
  }

  complete(resultType = "success", extra: Record<string, unknown> = {}): void {
    this.snapshot.session.status = "idle";
    this.event("turn.completed", { resultType, ...extra });
    this.currentTurnId = undefined;
  }

  sendSnapshot(): void {
    this.raw({ type: "snapshot", snapshot: this.snapshot });
  }
}

export interface FakeHostScript {
  /** runs after sendPrompt was acknowledged (on a microtask) */
  onPrompt?(session: FakeSession, params: Record<string, unknown>): void | Promise<void>;
  /** runs on cancelGeneration; default: complete the running turn as cancelled */
  onStop?(session: FakeSession): void;
}

export class FakeHost implements HostClient {
  incarnation: number;
  readonly calls: RecordedCall[] = [];
  readonly operations: RecordedOperation[] = [];
  /** calls and operations together, in order, with the incarnation each was made in */
  readonly records: HostRecord[] = [];
  readonly sessions = new Map<string, FakeSession>();
  /** override or add native methods: "agent.initialize" → handler */
  readonly handlers = new Map<string, (params: Record<string, unknown>) => unknown>();
  script: FakeHostScript = {};
  /** what `operate` resolves to (or a rejection: make it fail); default undefined, or true with `calls: "null"` */
  operateResult: (operation: SemanticOperation) => Promise<unknown>;
  readonly exitListeners = new Set<ExitListener>();
  private readonly answers: "sessions" | "null";
  private nextSessionId = 1;
  private nextSubscriptionId = 1;
  /** histories held for paging (the bootstrap's `history-pages`): historyId → messages not yet handed over */
  readonly heldHistories = new Map<string, unknown[]>();
  /** messages per history piece */
  historyPieceSize = 2;
  private nextHistoryId = 1;
  closed = false;

  constructor(options: FakeHostOptions = {}) {
    this.answers = options.calls ?? "sessions";
    this.incarnation = options.incarnation ?? 0;
    const result = this.answers === "null" ? true : undefined;
    this.operateResult = () => Promise.resolve(result);
  }

  callsOf(method: string): RecordedCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  session(id: string): FakeSession {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`fake host: no session ${id}`);
    return session;
  }

  addSession(snapshot: Snapshot): FakeSession {
    const session = new FakeSession(snapshot);
    this.sessions.set(session.id, session);
    return session;
  }

  async call<T = unknown>(service: ServiceName, method: string, params: Record<string, unknown>): Promise<T> {
    if (this.incarnation === 0) this.incarnation = 1;
    this.calls.push({ service, method, params: structuredClone(params) });
    this.records.push({ kind: "call", name: `${service}.${method}`, params, incarnation: this.incarnation });
    const custom = this.handlers.get(`${service}.${method}`);
    if (custom) return (await custom(params)) as T;
    if (this.answers === "null") return null as T;
    return (await this.builtin(method, params)) as T;
  }

  async history(historyId: string, op: "next" | "close"): Promise<unknown> {
    this.records.push({ kind: "call", name: `history.${op}`, params: { historyId }, incarnation: this.incarnation });
    const held = this.heldHistories.get(historyId);
    if (!held) throw new BridgeError("HOST_CALL_FAILED", `the history ${historyId} is no longer held`);
    if (op === "close") {
      this.heldHistories.delete(historyId);
      return null;
    }
    const messages = held.splice(0, this.historyPieceSize);
    if (held.length === 0) this.heldHistories.delete(historyId);
    return { messages, done: held.length === 0 };
  }

  /** the release line the fake host plays */
  lineId = "zcode-task-v1";

  async protocolId(): Promise<string> {
    return this.lineId;
  }

  /** methods beyond the line's legacy ones the fake install allows (none: the unit tests play a line without V4 input) */
  readonly allowed = new Set<string>();

  async allows(service: ServiceName, method: string): Promise<boolean> {
    return this.allowed.has(`${service}.${method}`);
  }

  async operate<T = unknown>(operation: SemanticOperation, sessionId: string, params: Record<string, unknown>): Promise<T> {
    this.operations.push({ operation, sessionId, params: structuredClone(params) });
    this.records.push({ kind: "operate", name: operation, sessionId, params, incarnation: this.incarnation });
    if (this.answers === "sessions" && operation === "cancelGeneration") {
      const session = this.session(sessionId);
      queueMicrotask(() => (this.script.onStop ? this.script.onStop(session) : session.currentTurnId && session.complete("cancelled")));
    }
    return (await this.operateResult(operation)) as T;
  }

  async subscribe(target: SessionEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    if (this.incarnation === 0) this.incarnation = 1;
    const session = this.session(target.sessionId);
    session.sinks.add(sink);
    const incarnation = this.incarnation;
    if (target.includeSnapshot) queueMicrotask(() => void sink.onEvent(structuredClone({ type: "snapshot", snapshot: session.snapshot })));
    return { id: `sub-${this.nextSubscriptionId++}`, incarnation, dispose: async () => void session.sinks.delete(sink) };
  }

  onExit(listener: ExitListener): { dispose(): void } {
    this.exitListeners.add(listener);
    return { dispose: () => void this.exitListeners.delete(listener) };
  }

  /** The host process exits: exit listeners fire; the incarnation stays until the test restarts it. */
  exit(message = "host exited"): void {
    const info = { incarnation: this.incarnation, error: new BridgeError("HOST_EXITED", message) };
    for (const listener of [...this.exitListeners]) listener(info);
  }

  /** Simulate a host crash: every subscription ends, exit listeners fire, the next call restarts. */
  crash(message = "The ZCode host exited unexpectedly"): void {
    const error = new BridgeError("HOST_EXITED", message);
    const incarnation = this.incarnation;
    for (const session of this.sessions.values()) {
      for (const sink of session.sinks) sink.onEnd(error);
      session.sinks.clear();
      session.currentTurnId = undefined;
      session.snapshot.session.status = "idle";
    }
    for (const listener of [...this.exitListeners]) listener({ incarnation, error });
    this.incarnation++;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** what the broker answered to permission requests (respondPermission params) */
  permissionAnswers(): Array<Record<string, unknown>> {
    return this.records.filter((r) => r.name === "respondPermission").map((r) => r.params);
  }

  /** what the broker answered to structured-input requests (respondStructuredInput params) */
  elicitationAnswers(): Array<Record<string, unknown>> {
    return this.records.filter((r) => r.name === "respondStructuredInput").map((r) => r.params);
  }

  private builtin(method: string, params: Record<string, unknown>): unknown {
    const sessionId = params.sessionId as string;
    switch (method) {
      case "initialize":
        return { available: true, workspaceKey: params.workspacePath };
      case "readWorkspaceState":
        return {
          workspace: { workspacePath: params.workspacePath },
          modelCatalog: { providers: [{ providerId: "builtin:zai-coding-plan" }] },
        };
      case "createSession": {
        const id = typeof params.sessionId === "string" ? params.sessionId : `ses_${this.nextSessionId++}`;
        return structuredClone(this.addSession(makeSnapshot(id, params.workspacePath as string)).snapshot);
      }
      case "resumeSession":
      case "readSession": {
        const session = this.sessions.get(sessionId);
        if (!session) throw new Error(`Session not found: ${sessionId}`);
        return structuredClone(session.snapshot);
      }
      case "readSessionMessages": {
        const session = this.sessions.get(sessionId);
        if (!session) throw new Error(`Session not found: ${sessionId}`);
        const historyId = `h${this.nextHistoryId++}`;
        const messages = structuredClone(session.snapshot.messages ?? []) as unknown[];
        this.heldHistories.set(historyId, messages);
        return { historyId, total: messages.length };
      }
      case "listSessions":
        return [...this.sessions.values()].map((s) => ({
          sessionId: s.id,
          workspace: { workspacePath: s.snapshot.session.workspace.workspacePath },
          title: s.snapshot.session.title,
          updatedAt: s.snapshot.session.updatedAt,
        }));
      case "sendPrompt": {
        const session = this.session(sessionId);
        if (session.snapshot.session.status === "running") throw new Error("prompt is running");
        queueMicrotask(() => void this.script.onPrompt?.(session, params));
        return { sessionId, accepted: true };
      }
      case "setMode": {
        const session = this.session(sessionId);
        session.snapshot.settings.mode.current = params.mode;
        session.snapshot.session.mode = params.mode;
        // the 3.11.2 quirk: only the current model is listed after setMode
        const copy = structuredClone(session.snapshot);
        copy.settings.model.available = copy.settings.model.available.filter(
          (m: any) => m.ref.modelId === copy.settings.model.current.modelId,
        );
        return copy;
      }
      case "setModel": {
        const session = this.session(sessionId);
        session.snapshot.settings.model.current = params.model;
        return structuredClone(session.snapshot);
      }
      case "setThoughtLevel": {
        const session = this.session(sessionId);
        session.snapshot.settings.thoughtLevel.current = params.thoughtLevel;
        return structuredClone(session.snapshot);
      }
      case "getTaskTokenUsage":
        return {
          sessionId,
          totalTokens: 1500,
          inputTokens: 1000,
          outputTokens: 400,
          reasoningTokens: 100,
          cacheCreationTokens: 0,
          cacheReadTokens: 50,
        };
      case "closeSession":
        return true;
      default:
        throw new Error(`Method not found: ${method}`);
    }
  }
}
