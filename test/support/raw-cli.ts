/**
 * The BUILT CLI (./cli-process.ts) over real pipes, driven with raw bytes: the test
 * decides how the client's lines are split into writes (for the early `initialize` path). Every
 * complete line in both directions is recorded and validated (./acp-transcript.ts); the agent's
 * raw stdout is kept byte for byte.
 */
import { Transcript, type TranscriptLine } from "./acp-transcript.js";
import { CliProcess, type ExitInfo } from "./cli-process.js";
import { TranscriptClient } from "./transcript-client.js";

export type RawExit = ExitInfo;

export class RawCli extends TranscriptClient {
  /** everything the agent wrote on stdout */
  stdout = "";

  private constructor(cli: CliProcess) {
    // the base records the chunk's lines, then it is kept here
    super(cli, new Transcript());
    cli.child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
    });
  }

  static start(env: Record<string, string>): RawCli {
    return new RawCli(CliProcess.start({ env }));
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
  override close(timeoutMs = 15_000): Promise<RawExit> {
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
