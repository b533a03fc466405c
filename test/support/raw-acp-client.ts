/**
 * A raw-line ACP client for end-to-end tests that need exact bytes on the wire: it spawns the
 * BUILT CLI over real pipes, writes the lines a test gives it (several in ONE write when asked),
 * and records and validates every line in both directions (./acp-transcript.ts). No SDK in
 * between, so nothing reorders, validates or answers on the test's behalf.
 *
 *   const client = await RawAcpClient.start({ env: sim.env });
 *   await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
 *   const asked = await client.waitForAgent((m) => m.method === "session/request_permission");
 *   await client.write([cancelLine, answerLine]);   // one write(2) of both lines
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { CLI_PATH, type ExitInfo } from "./acp-test-client.js";
import { Transcript } from "./acp-transcript.js";
import { waitForExit } from "./processes.js";

export interface RawAcpClientOptions {
  /** environment on top of process.env (e.g. a simulated install's `env`) */
  env?: Record<string, string>;
  args?: string[];
  cwd?: string;
}

/** one JSON-RPC message as the text of one line (no newline) */
export type RawLine = string | Record<string, unknown>;

export class RawAcpClient {
  readonly transcript = new Transcript();
  readonly exited: Promise<ExitInfo>;
  private stderrText = "";
  private nextId = 1;
  private readonly waiters = new Set<() => void>();

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => (this.stderrText = (this.stderrText + text).slice(-400_000)));
    child.stdin.on("error", () => undefined); // EPIPE after an exit is reported by `exited`
    const decoder = new TextDecoder();
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += decoder.decode(chunk, { stream: true });
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        this.transcript.record("agent", buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
      for (const wake of [...this.waiters]) wake();
    });
  }

  static start(options: RawAcpClientOptions = {}): RawAcpClient {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
    const child = spawn(process.execPath, [CLI_PATH, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new RawAcpClient(child);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** a request line with a fresh id (not written) */
  requestLine(method: string, params: unknown): { id: number; line: Record<string, unknown> } {
    const id = this.nextId++;
    return { id, line: { jsonrpc: "2.0", id, method, params } };
  }

  /** Write `lines` in ONE write call; resolves once the bytes were handed to the pipe. */
  write(lines: readonly RawLine[]): Promise<void> {
    const texts = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l)));
    for (const text of texts) this.transcript.record("client", text);
    return this.writeBytes(texts.map((t) => `${t}\n`).join(""));
  }

  /** Write bytes exactly as given (not recorded: may be no JSON at all). */
  writeBytes(bytes: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.child.stdin.write(bytes, (error) => (error ? reject(error) : resolve())));
  }

  /** Send a request and wait for its response message (result or error). */
  async request(method: string, params: unknown, timeoutMs = 15_000): Promise<any> {
    const { id, line } = this.requestLine(method, params);
    await this.write([line]);
    return this.response(id, timeoutMs);
  }

  /** the agent's response to our request `id` */
  response(id: number, timeoutMs = 15_000): Promise<any> {
    return this.waitForAgent((m) => m.id === id && m.method === undefined, `the response to request ${id}`, timeoutMs);
  }

  /** the first agent message (already recorded or future) that matches */
  waitForAgent(predicate: (message: any) => boolean, what = "an agent message", timeoutMs = 15_000): Promise<any> {
    const find = (): any => this.transcript.agentMessages().find(predicate);
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for ${what}; stderr tail:\n${this.stderrText.slice(-3000)}`));
      }, timeoutMs);
      const check = (): void => {
        const message = find();
        if (message === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(message);
      };
      this.waiters.add(check);
    });
  }

  /** initialize + session/new in `cwd`; returns the session id */
  async openSession(cwd: string, clientCapabilities: Record<string, unknown> = {}): Promise<string> {
    const init = await this.request("initialize", { protocolVersion: 1, clientCapabilities });
    if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    const opened = await this.request("session/new", { cwd, mcpServers: [] });
    if (opened.error) throw new Error(`session/new failed: ${JSON.stringify(opened.error)}`);
    return opened.result.sessionId as string;
  }

  /** End stdin and wait for the exit (SIGKILL after `timeoutMs`). */
  async close(timeoutMs = 10_000): Promise<ExitInfo> {
    this.child.stdin.end();
    return this.waitExit(timeoutMs);
  }

  async kill(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<ExitInfo> {
    this.child.kill(signal);
    return this.waitExit(timeoutMs);
  }

  private waitExit(timeoutMs: number): Promise<ExitInfo> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    return waitForExit(this.child, this.exited, timeoutMs, () => this.stderrText);
  }
}

export const cancelLine = (sessionId: string): Record<string, unknown> => ({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });

export const resultLine = (id: unknown, result: unknown): Record<string, unknown> => ({ jsonrpc: "2.0", id, result });
