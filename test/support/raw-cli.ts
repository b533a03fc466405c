/**
 * The BUILT CLI (./cli-process.ts) over real pipes, driven with raw bytes: the test
 * decides how the client's lines are split into writes (for the early `initialize` path). Every
 * complete line in both directions is recorded and validated (./acp-transcript.ts); the agent's
 * raw stdout is kept byte for byte.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Transcript, type TranscriptLine } from "./acp-transcript.js";
import { CliProcess, lineSplitter, type ExitInfo } from "./cli-process.js";

export type RawExit = ExitInfo;

export class RawCli {
  readonly transcript = new Transcript();
  /** everything the agent wrote on stdout */
  stdout = "";
  private readonly recordClient = lineSplitter((line) => this.transcript.record("client", line));

  private constructor(private readonly cli: CliProcess) {
    const recordAgent = lineSplitter((line) => this.transcript.record("agent", line));
    cli.child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
      recordAgent(chunk);
    });
  }

  static start(env: Record<string, string>): RawCli {
    return new RawCli(CliProcess.start({ env }));
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get exited(): Promise<RawExit> {
    return this.cli.exited;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  /** one write(2)-sized piece of input, flushed before the promise resolves */
  write(bytes: string | Buffer): Promise<void> {
    const chunk = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
    this.recordClient(chunk);
    return this.cli.write(chunk);
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
        reject(
          new Error(
            `no matching agent line within ${timeoutMs} ms; stdout:\n${this.stdout.slice(-2000)}\nstderr:\n${this.stderr.slice(-2000)}`,
          ),
        );
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
  close(timeoutMs = 15_000): Promise<RawExit> {
    return this.cli.close(timeoutMs, "resolve");
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
