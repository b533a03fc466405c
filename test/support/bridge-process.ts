/**
 * End-to-end helper for the interaction tests: starts the BUILT CLI (./cli-process.ts) against
 * a simulated install, speaks ACP to it with the SDK client, records and validates every raw
 * line (./acp-transcript.ts), and lets a test script how the client answers permission requests
 * and form elicitations (held until the test answers, by default).
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import type {
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
} from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, expect } from "vitest";
import { createSimulatedInstall, type CallLogEntry, type SimInstall } from "../../fixtures/sim-install.js";
import { Transcript } from "./acp-transcript.js";
import { CliProcess, lineSplitter } from "./cli-process.js";
import { until } from "./until.js";

export const FORM_CLIENT: ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
  elicitation: { form: {} },
};
/** what Paseo advertises today: no elicitation at all */
export const NO_ELICITATION_CLIENT: ClientCapabilities = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };

export type PermissionAnswer = (params: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;
export type ElicitationAnswer = (params: CreateElicitationRequest, signal: AbortSignal) => Promise<CreateElicitationResponse>;

/** never answers on its own; answers `cancelled` (ACP rule) when the agent cancels the request */
export const holdPermission: PermissionAnswer = (_params, signal) =>
  new Promise((resolvePromise) => {
    const done = (): void => resolvePromise({ outcome: { outcome: "cancelled" } });
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });

export const choose =
  (optionId: string): PermissionAnswer =>
  async () => ({ outcome: { outcome: "selected", optionId } });

export const holdElicitation: ElicitationAnswer = (_params, signal) =>
  new Promise((resolvePromise) => {
    const done = (): void => resolvePromise({ action: "cancel" });
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });

export class BridgeProcess {
  readonly transcript = new Transcript();
  readonly updates: SessionNotification[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly elicitationRequests: CreateElicitationRequest[] = [];
  /** how the client answers; tests replace these between prompts */
  onPermission: PermissionAnswer = holdPermission;
  onElicitation: ElicitationAnswer = holdElicitation;
  /** client requests of the agent not answered yet, by session: answering one `cancelled` (interrupt) */
  private readonly open = new Set<{ sessionId: string; cancel: () => void }>();
  private connection!: acp.ClientConnection;
  private readonly listeners = new Set<() => void>();

  private constructor(
    readonly sim: SimInstall,
    private readonly cli: CliProcess,
    readonly workspace: string,
  ) {}

  /** the CLI in a fresh workspace directory, logging at debug, initialized with `capabilities` */
  static async start(sim: SimInstall, capabilities: ClientCapabilities, env: Record<string, string> = {}): Promise<BridgeProcess> {
    const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-ws-"));
    const cli = CliProcess.start({ cwd: workspace, env: { ...sim.env, ZCODE_ACP_LOG_LEVEL: "debug", ...env } });
    const bridge = new BridgeProcess(sim, cli, workspace);
    bridge.connect();
    await bridge.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: capabilities });
    return bridge;
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  private connect(): void {
    const fromAgent = new PassThrough();
    const toAgent = new PassThrough();
    this.child.stdout.on(
      "data",
      lineSplitter((line) => this.record("agent", line)),
    );
    this.child.stdout.pipe(fromAgent);
    toAgent.on(
      "data",
      lineSplitter((line) => this.record("client", line)),
    );
    toAgent.pipe(this.child.stdin);
    const stream = acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>);
    this.connection = acp
      .client({ name: "interactions-e2e" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissionRequests.push(params);
        this.changed();
        return this.answerable(params.sessionId, this.onPermission(params, signal), { outcome: { outcome: "cancelled" } });
      })
      .onRequest(acp.methods.client.elicitation.create, ({ params, signal }) => {
        this.elicitationRequests.push(params);
        this.changed();
        const sessionId = "sessionId" in params && typeof params.sessionId === "string" ? params.sessionId : "";
        return this.answerable(sessionId, this.onElicitation(params, signal), { action: "cancel" });
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        this.changed();
      })
      .connect(stream);
  }

  /** the scripted answer, or `cancelled` if the test interrupts the session first */
  private answerable<T>(sessionId: string, answer: Promise<T>, cancelled: T): Promise<T> {
    return new Promise<T>((resolveAnswer, reject) => {
      const entry = { sessionId, cancel: () => resolveAnswer(cancelled) };
      this.open.add(entry);
      answer.then(resolveAnswer, reject).finally(() => this.open.delete(entry));
    });
  }

  private record(from: "agent" | "client", line: string): void {
    this.transcript.record(from, line);
    this.changed();
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** resolves when `predicate` holds (checked on every ACP line / update), or rejects after `timeoutMs` */
  waitFor(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolveWait, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}\n--- stderr tail ---\n${this.stderr.slice(-3000)}`));
      }, timeoutMs);
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolveWait();
      };
      this.listeners.add(check);
    });
  }

  async newSession(): Promise<string> {
    const response = await this.agent.request(acp.methods.agent.session.new, { cwd: this.workspace, mcpServers: [] });
    return response.sessionId;
  }

  prompt(sessionId: string, text: string): Promise<PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  /** the prompt's outcome as a value: its response, or the JSON-RPC error */
  async promptOutcome(sessionId: string, text: string): Promise<{ response?: PromptResponse; error?: acp.RequestError }> {
    try {
      return { response: await this.prompt(sessionId, text) };
    } catch (error) {
      if (error instanceof acp.RequestError) return { error };
      throw error;
    }
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  /**
   * What Paseo's interrupt does: answer every open request of the session `cancelled` (ACP
   * requires the client to), then send `session/cancel` at once. The cancel can reach the agent
   * before those answers.
   */
  interrupt(sessionId: string): Promise<void> {
    for (const entry of [...this.open]) {
      if (entry.sessionId !== sessionId) continue;
      this.open.delete(entry);
      entry.cancel();
    }
    return this.cancel(sessionId);
  }

  /** `_zcode/diagnostics` counts (the bridge must run with ZCODE_ACP_DIAGNOSTICS=1) */
  async diagnostics(): Promise<Record<string, number>> {
    const result = (await this.agent.request("_zcode/diagnostics" as never, {} as never)) as { sessions: Record<string, number> };
    return result.sessions;
  }

  sessionUpdates(sessionId: string): SessionNotification["update"][] {
    return this.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** the agent → client methods in wire order (requests and notifications, with update kinds) */
  agentMethods(): string[] {
    return this.transcript
      .agentMessages()
      .filter((m) => typeof m.method === "string")
      .map((m) => (m.method === "session/update" ? `session/update:${m.params?.update?.sessionUpdate}` : m.method));
  }

  async stop(): Promise<void> {
    await this.cli.close(8_000, "resolve");
    this.connection.close();
    await rm(this.workspace, { recursive: true, force: true });
  }
}

// ---- the simulator's call log ----

export function nativeCalls(log: CallLogEntry[], method: string): Array<Record<string, unknown>> {
  return log.filter((e) => e.kind === "call" && e.method === method).map((e) => firstParam(e.params));
}

function firstParam(params: unknown): Record<string, unknown> {
  const value = Array.isArray(params) ? params[0] : params;
  return (value ?? {}) as Record<string, unknown>;
}

/** poll the call log (a file written by another process) until `predicate` holds */
export async function waitForLog(
  sim: SimInstall,
  predicate: (log: CallLogEntry[]) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<CallLogEntry[]> {
  return until(
    async () => {
      const log = await sim.readCallLog();
      return predicate(log) && log;
    },
    { timeoutMs, intervalMs: 25, what: `${what} in the simulator's call log` },
  );
}

/** native calls of one session (`taskId` on zcode-task, `sessionId` on zcode-agent) */
export function callsFor(log: CallLogEntry[], method: string, sessionId: string): Array<Record<string, unknown>> {
  return nativeCalls(log, method).filter((p) => p.taskId === sessionId || p.sessionId === sessionId);
}

/**
 * The stops one session's turns got from the bridge: `zcode-task.stopGeneration` calls on a line
 * without V4 input, V4 `stop` command envelopes where the install has it (adr/0022).
 */
export function stopsFor(log: CallLogEntry[], sessionId: string): Array<Record<string, unknown>> {
  const v4 = nativeCalls(log, "sendConversationCommandV4")
    .map((p) => p.envelope as Record<string, unknown> | undefined)
    .filter((e): e is Record<string, unknown> => e?.type === "stop" && e.sessionId === sessionId);
  return [...callsFor(log, "stopGeneration", sessionId), ...v4];
}

/** `fire` entries of a top-level event type for one session */
export function firesFor(log: CallLogEntry[], type: string, sessionId: string): CallLogEntry[] {
  return log.filter((e) => e.kind === "fire" && e.type === type && e.sessionId === sessionId);
}

/**
 * One simulated install and one bridge for a describe block: started before its tests, and after
 * them checked (every line valid, no agent request left unanswered), stopped and cleaned up.
 * `use` receives them once they exist.
 */
export function useBridge(
  capabilities: ClientCapabilities,
  use: (sim: SimInstall, bridge: BridgeProcess) => void,
  env: Record<string, string> = {},
): void {
  let sim: SimInstall | undefined;
  let bridge: BridgeProcess | undefined;
  beforeAll(async () => {
    sim = await createSimulatedInstall();
    bridge = await BridgeProcess.start(sim, capabilities, env);
    use(sim, bridge);
  });
  afterAll(async () => {
    expect(bridge?.transcript.problems).toEqual([]);
    expect(bridge?.transcript.unanswered("agent")).toEqual([]);
    // an install whose manifest allows V4 input never gets a legacy sendPrompt (adr/0022)
    if (sim?.manifest.protocol.allowlist.agent.includes("sendConversationCommandV4")) {
      expect(nativeCalls(await sim.readCallLog(), "sendPrompt"), "sendPrompt calls on a V4 install").toEqual([]);
    }
    await bridge?.stop();
    await sim?.cleanup();
  });
}
