/**
 * A raw-line ACP client for the conformance suite (modelled on the acp-tck v1 harness): starts
 * the BUILT CLI (test/support/cli-process.ts) against a simulated install, writes JSON-RPC lines
 * itself (any id, any shape), and keeps every stdout line as raw bytes, checked for UTF-8 and
 * validated per definition (test/support/acp-transcript.ts). Agent → client requests are
 * answered like the kit's mock client: permissions `cancelled`, anything else -32601.
 *
 * "Nothing arrives after X" is decided with a barrier, not a quiet period: `barrier()` sends a
 * `_`-prefixed request and waits for its answer; the agent handles its input in order, so what
 * it had queued before reading the barrier is on the wire before the barrier's answer.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transcript } from "../../../support/acp-transcript.js";
import { CliProcess } from "../../../support/cli-process.js";
import { createSimulatedInstall, type SimInstall } from "../../../../fixtures/sim-install.js";

export interface Line {
  from: "agent" | "client";
  /** index in `RawAgent.lines` */
  index: number;
  message: any;
}

export const STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"] as const;

let barrierCount = 0;

export class RawAgent {
  readonly lines: Line[] = [];
  readonly transcript = new Transcript();
  /** stdout lines that were not valid UTF-8 or not JSON (each is a conformance failure) */
  readonly badLines: string[] = [];
  private readonly listeners = new Set<(line: Line) => void>();
  private nextId = 1;
  private buffer = Buffer.alloc(0);

  private constructor(private readonly cli: CliProcess) {
    cli.child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
  }

  static start(sim: SimInstall, cwd: string, env: Record<string, string> = {}): RawAgent {
    return new RawAgent(CliProcess.start({ cwd, env: { ...sim.env, ...env } }));
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    let newline = this.buffer.indexOf(0x0a);
    while (newline >= 0) {
      const bytes = this.buffer.subarray(0, newline);
      this.buffer = this.buffer.subarray(newline + 1);
      newline = this.buffer.indexOf(0x0a);
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        this.badLines.push(`not UTF-8: ${bytes.toString("hex").slice(0, 80)}`);
        continue;
      }
      if (text.trim() === "") continue;
      this.transcript.record("agent", text);
      let message: any;
      try {
        message = JSON.parse(text);
      } catch {
        this.badLines.push(`not JSON: ${text.slice(0, 200)}`);
        continue;
      }
      if (Array.isArray(message) || typeof message !== "object" || message === null) {
        this.badLines.push(`not one JSON-RPC message: ${text.slice(0, 200)}`);
        continue;
      }
      this.push("agent", message);
      if (typeof message.method === "string" && "id" in message) this.answerAgentRequest(message);
    }
  }

  private push(from: Line["from"], message: any): void {
    const line: Line = { from, index: this.lines.length, message };
    this.lines.push(line);
    for (const listener of [...this.listeners]) listener(line);
  }

  /** the mock client's answers to agent → client requests */
  private answerAgentRequest(request: any): void {
    if (request.method === "session/request_permission")
      this.send({ jsonrpc: "2.0", id: request.id, result: { outcome: { outcome: "cancelled" } } });
    else this.send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } });
  }

  /** write one raw message (recorded and validated like the agent's) */
  send(message: unknown): void {
    const text = JSON.stringify(message);
    this.transcript.record("client", text);
    this.push("client", message);
    this.child.stdin.write(`${text}\n`);
  }

  /** send a request; resolves with the agent's response line (result or error) */
  request(method: string, params: unknown, id: string | number = this.nextId++): Promise<Line> {
    const answered = this.waitFor(
      (l) => l.from === "agent" && l.message.method === undefined && l.message.id === id,
      `the response to ${method} (${String(id)})`,
    );
    this.send({ jsonrpc: "2.0", id, method, params });
    return answered;
  }

  /** send a request that must succeed; resolves with its result */
  async call(method: string, params: unknown): Promise<any> {
    const line = await this.request(method, params);
    if (!("result" in line.message)) throw new Error(`${method} failed: ${JSON.stringify(line.message.error)}`);
    return line.message.result;
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** resolves with the first line (already seen or future) matching `predicate` */
  waitFor(predicate: (line: Line) => boolean, what: string, timeoutMs = 20_000): Promise<Line> {
    const seen = this.lines.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}\n--- stderr tail ---\n${this.stderr.slice(-3000)}`));
      }, timeoutMs);
      const check = (line: Line): void => {
        if (!predicate(line)) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve(line);
      };
      this.listeners.add(check);
    });
  }

  /** a round trip: everything the agent queued before reading it is in `lines` afterwards */
  async barrier(): Promise<Line> {
    barrierCount += 1;
    return this.request("_zcode-acp-conformance/barrier", {}, `barrier-${barrierCount}`);
  }

  async initialize(clientCapabilities: Record<string, unknown> = {}): Promise<any> {
    return this.call("initialize", { protocolVersion: 1, clientCapabilities, clientInfo: { name: "acp-tck-like", version: "1.0.0" } });
  }

  /** session/update notifications of one session between two line indexes */
  updates(sessionId: string, from = 0, to = this.lines.length): Line[] {
    return this.lines
      .slice(from, to)
      .filter((l) => l.from === "agent" && l.message.method === "session/update" && l.message.params?.sessionId === sessionId);
  }

  /** agent → client requests by method */
  agentRequests(prefix: string): Line[] {
    return this.lines.filter(
      (l) => l.from === "agent" && typeof l.message.method === "string" && "id" in l.message && l.message.method.startsWith(prefix),
    );
  }

  async stop(): Promise<number | null> {
    return (await this.cli.close(10_000, "resolve")).code;
  }
}

/** one simulated install per test file; workspaces inside its temp dir */
export interface Conformance {
  sim(): SimInstall;
  workspace(): Promise<string>;
  /** a started, initialized (unless `initialize: false`) agent; stopped after the file */
  agent(options?: { initialize?: boolean; capabilities?: Record<string, unknown>; env?: Record<string, string> }): Promise<RawAgent>;
}

export function conformance(hooks: {
  beforeAll: (fn: () => Promise<void>) => void;
  afterAll: (fn: () => Promise<void>) => void;
}): Conformance {
  let install: SimInstall | undefined;
  const agents: RawAgent[] = [];
  const dirs: string[] = [];
  hooks.beforeAll(async () => {
    install = await createSimulatedInstall();
  });
  hooks.afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    await install?.cleanup();
  });
  const workspace = async (): Promise<string> => {
    const dir = await mkdtemp(join(dirname(install!.root), "ws-"));
    dirs.push(dir);
    return dir;
  };
  return {
    sim: () => install!,
    workspace,
    async agent(options = {}) {
      const agent = RawAgent.start(install!, await workspace(), options.env);
      agents.push(agent);
      if (options.initialize !== false) await agent.initialize(options.capabilities ?? {});
      return agent;
    },
  };
}

/**
 * every problem of the agent's side of a transcript: bad lines, schema / pairing / gating
 * problems of its messages, requests never answered (the tests' own lines may be invalid on
 * purpose: an unknown method, a request without mcpServers)
 */
export function problems(agent: RawAgent): string[] {
  return [
    ...agent.badLines,
    ...agent.transcript.problems.filter((p) => p.startsWith("[agent]")),
    ...agent.transcript.unanswered("client").map((r) => `client request never answered: ${r}`),
    ...agent.transcript.unanswered("agent").map((r) => `agent request never answered: ${r}`),
  ];
}
