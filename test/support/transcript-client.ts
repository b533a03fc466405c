/**
 * What the end-to-end ACP clients share (./acp-test-client.ts, ./acp-v2-test-client.ts,
 * ./raw-acp-client.ts): the BUILT CLI (./cli-process.ts) with every line it writes recorded in a
 * validated transcript (./acp-transcript.ts), the client's own lines recorded as they are written,
 * the lookups and waits on that transcript, and the end of the process. The clients differ only
 * in how they speak to the CLI (the SDK's v1 or v2 client, or raw lines).
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable } from "node:stream";
import type { Direction, Transcript, TranscriptLine } from "./acp-transcript.js";
import { lineSplitter, type CliProcess, type ExitInfo } from "./cli-process.js";

export interface SimEnvOptions {
  /** environment for the CLI on top of process.env (e.g. a simulated install's `env`) */
  env?: Record<string, string>;
  /** simulated host profile, passed as ZCODE_SIM_PROFILE */
  simProfile?: Record<string, unknown>;
  /** ZCODE_ACP_CANCEL_GRACE_MS for this run */
  cancelGraceMs?: number;
}

/** the CLI's environment for these options */
export function simEnv(options: SimEnvOptions): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...options.env };
  if (options.simProfile) env.ZCODE_SIM_PROFILE = JSON.stringify(options.simProfile);
  if (options.cancelGraceMs !== undefined) env.ZCODE_ACP_CANCEL_GRACE_MS = String(options.cancelGraceMs);
  return env;
}

export abstract class TranscriptClient {
  /** records the client's lines written through `sdkStreams` (or by a subclass), split at newlines */
  protected readonly recordClient = lineSplitter((line) => this.transcript.record("client", line));

  /** `protocol` names the transcript in `expectValid`'s failure ("ACP", "ACP v2") */
  protected constructor(
    protected readonly cli: CliProcess,
    readonly transcript: Transcript,
    private readonly protocol = "ACP",
  ) {
    cli.child.stdout.on(
      "data",
      lineSplitter((line) => this.transcript.record("agent", line)),
    );
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get exited(): Promise<ExitInfo> {
    return this.cli.exited;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  /** The CLI's stdin and stdout as web streams for an SDK connection; what the SDK writes is recorded. */
  protected sdkStreams(): { input: WritableStream<Uint8Array>; output: ReadableStream<Uint8Array> } {
    const child = this.cli.child;
    const input = new WritableStream<Uint8Array>({
      write: (chunk) => {
        this.recordClient(chunk);
        return this.cli.write(chunk);
      },
      close: () => void child.stdin.end(),
    });
    return { input, output: Readable.toWeb(child.stdout) as ReadableStream<Uint8Array> };
  }

  /** Raw session updates the agent wrote (for one session, or all; also the ones the SDK would drop). */
  updates(sessionId?: string): any[] {
    return this.transcript
      .agentMessages()
      .filter((m) => m.method === "session/update" && (!sessionId || m.params?.sessionId === sessionId))
      .map((m) => m.params.update);
  }

  /** Concatenated agent_message_chunk text of a session. */
  text(sessionId: string): string {
    return this.updates(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
      .map((u) => u.content.text as string)
      .join("");
  }

  /** Index of a raw line in the transcript (for ordering assertions). */
  indexOf(predicate: (line: TranscriptLine) => boolean, from: Direction = "agent"): number {
    return this.transcript.lines.findIndex((l) => l.from === from && l.message !== undefined && predicate(l));
  }

  /** Wait for a recorded (or future) line; rejects after `timeoutMs` with what was seen. */
  waitForLine(predicate: (line: TranscriptLine) => boolean, timeoutMs = 10_000): Promise<TranscriptLine> {
    const found = this.transcript.lines.find((l) => l.message !== undefined && predicate(l));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`no matching line within ${timeoutMs} ms; stderr tail:\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      const stop = this.transcript.onLine((line) => {
        if (line.message === undefined || !predicate(line)) return;
        clearTimeout(timer);
        stop();
        resolve(line);
      });
    });
  }

  /** The `nth` (0-based) session/update of `sessionId` matching `predicate`, waiting for it. */
  protected async waitForNthUpdate(sessionId: string, predicate: (update: any) => boolean, nth: number, timeoutMs: number): Promise<any> {
    let seen = 0;
    const line = await this.waitForLine(
      (l) =>
        l.from === "agent" &&
        l.message.method === "session/update" &&
        l.message.params?.sessionId === sessionId &&
        predicate(l.message.params.update) &&
        seen++ === nth,
      timeoutMs,
    );
    return line.message.params.update;
  }

  /** Throws when any recorded line broke the schema, gating or pairing rules. */
  expectValid(options: { allowUnanswered?: boolean } = {}): void {
    const problems = [...this.transcript.problems];
    if (!options.allowUnanswered) {
      for (const request of this.transcript.unanswered("client")) problems.push(`client request never answered: ${request}`);
      for (const request of this.transcript.unanswered("agent")) problems.push(`agent request never answered: ${request}`);
    }
    if (problems.length > 0) throw new Error(`${this.protocol} transcript problems:\n${problems.join("\n")}`);
  }

  /** End stdin (the client goes away) and wait for the CLI to exit; kills it after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<ExitInfo> {
    this.closeConnection();
    return this.cli.close(timeoutMs);
  }

  /** Send a signal and wait for the exit. */
  kill(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<ExitInfo> {
    return this.cli.kill(signal, timeoutMs);
  }

  /** what `close` ends first (an SDK connection) */
  protected closeConnection(): void {}
}
