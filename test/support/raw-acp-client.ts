/**
 * A raw-line ACP client for end-to-end tests that need exact bytes on the wire: it starts the
 * BUILT CLI (./cli-process.ts), writes the lines a test gives it (several in ONE write when asked),
 * and records and validates every line in both directions (./acp-transcript.ts). No SDK in
 * between, so nothing reorders, validates or answers on the test's behalf.
 *
 *   const client = await RawAcpClient.start({ env: sim.env });
 *   await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
 *   const asked = await client.waitForAgent((m) => m.method === "session/request_permission");
 *   await client.write([cancelLine, answerLine]);   // one write(2) of both lines
 */
import { Transcript } from "./acp-transcript.js";
import { CliProcess, type CliProcessOptions } from "./cli-process.js";
import { TranscriptClient } from "./transcript-client.js";

export type RawAcpClientOptions = CliProcessOptions;

/** one JSON-RPC message as the text of one line (no newline) */
export type RawLine = string | Record<string, unknown>;

export class RawAcpClient extends TranscriptClient {
  private nextId = 1;
  private readonly waiters = new Set<() => void>();

  private constructor(cli: CliProcess) {
    // the base records each chunk's lines first; the waiters then look at them
    super(cli, new Transcript());
    cli.child.stdout.on("data", () => {
      for (const wake of [...this.waiters]) wake();
    });
  }

  static start(options: RawAcpClientOptions = {}): RawAcpClient {
    return new RawAcpClient(CliProcess.start(options));
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
    return this.cli.write(bytes);
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
        reject(new Error(`timed out waiting for ${what}; stderr tail:\n${this.stderr.slice(-3000)}`));
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
}

export const cancelLine = (sessionId: string): Record<string, unknown> => ({
  jsonrpc: "2.0",
  method: "session/cancel",
  params: { sessionId },
});

export const resultLine = (id: unknown, result: unknown): Record<string, unknown> => ({ jsonrpc: "2.0", id, result });
