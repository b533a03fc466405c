/**
 * The BUILT CLI (`node dist/cli/main.js`) over real pipes, driven with raw bytes: the test
 * decides how the client's lines are split into writes (for the early `initialize` path). Every
 * complete line in both directions is recorded and validated (./acp-transcript.ts); the agent's
 * raw stdout is kept byte for byte.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { CLI_PATH } from "./acp-test-client.js";
import { Transcript, type TranscriptLine } from "./acp-transcript.js";

export interface RawExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function splitter(onLine: (line: string) => void): (chunk: Buffer) => void {
  const decoder = new TextDecoder();
  let buffer = "";
  return (chunk) => {
    buffer += decoder.decode(chunk, { stream: true });
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  };
}

export class RawCli {
  readonly transcript = new Transcript();
  readonly exited: Promise<RawExit>;
  /** everything the agent wrote on stdout */
  stdout = "";
  stderr = "";
  private readonly recordClient = splitter((line) => this.transcript.record("client", line));

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const recordAgent = splitter((line) => this.transcript.record("agent", line));
    child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
      recordAgent(chunk);
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => (this.stderr += text));
    child.stdin.on("error", () => undefined);
  }

  static start(env: Record<string, string>): RawCli {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
    return new RawCli(spawn(process.execPath, [CLI_PATH], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] }));
  }

  /** one write(2)-sized piece of input, flushed before the promise resolves */
  write(bytes: string | Buffer): Promise<void> {
    const chunk = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
    this.recordClient(chunk);
    return new Promise((resolve, reject) => this.child.stdin.write(chunk, (error) => (error ? reject(error) : resolve())));
  }

  /** agent lines so far */
  agentLines(): TranscriptLine[] {
    return this.transcript.lines.filter((l) => l.from === "agent");
  }

  /** the first (or a later) agent line matching `predicate` */
  waitFor(predicate: (message: any) => boolean, timeoutMs = 15_000): Promise<TranscriptLine> {
    const found = this.agentLines().find((l) => l.message !== undefined && predicate(l.message));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`no matching agent line within ${timeoutMs} ms; stdout:\n${this.stdout.slice(-2000)}\nstderr:\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const stop = this.transcript.onLine((line) => {
        if (line.from !== "agent" || line.message === undefined || !predicate(line.message)) return;
        clearTimeout(timer);
        stop();
        resolve(line);
      });
    });
  }

  /** the answer to request `id` */
  answer(id: unknown, timeoutMs?: number): Promise<TranscriptLine> {
    return this.waitFor((m) => m.id === id && !("method" in m), timeoutMs);
  }

  /** end stdin and wait for the exit (SIGKILL after `timeoutMs`) */
  async close(timeoutMs = 15_000): Promise<RawExit> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** a request line as the SDK client writes it */
export function requestLine(id: number | string, method: string, params: unknown): string {
  return `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;
}

export const INITIALIZE_PARAMS = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "raw-test", version: "0.0.0" },
};
