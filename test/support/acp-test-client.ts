/**
 * ACP test client for end-to-end tests: starts the BUILT CLI (./cli-process.ts), speaks ACP
 * through the SDK client, and records and validates every raw line in both directions
 * (./acp-transcript.ts). Permission requests are answered `cancelled` and elicitations `cancel`
 * unless the test answers them (./bridge-process.ts scripts answers per prompt instead).
 *
 *   const client = await AcpTestClient.start({ env: sim.env });
 *   await client.initialize();
 *   const { sessionId } = await client.newSession(cwd);
 *   await client.prompt(sessionId, "sim:tool-bash");
 *   client.expectValid();            // every line valid, nothing unanswered
 *   await client.close();            // ends stdin, waits for a clean exit
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable } from "node:stream";
// the unstable surface: a client that advertised an unstable capability parses its updates (subagent_update, plan_update)
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Transcript, type Direction, type TranscriptLine } from "./acp-transcript.js";
import { CliProcess, lineSplitter, type ExitInfo } from "./cli-process.js";

export type { ExitInfo } from "./cli-process.js";

export interface AcpTestClientOptions {
  /** environment for the CLI on top of process.env (e.g. a simulated install's `env`) */
  env?: Record<string, string>;
  /** simulated host profile, passed as ZCODE_SIM_PROFILE */
  simProfile?: Record<string, unknown>;
  /** ZCODE_ACP_CANCEL_GRACE_MS for this run */
  cancelGraceMs?: number;
  /** extra command-line arguments */
  args?: string[];
  cwd?: string;
  /** answer session/request_permission (default: `cancelled`) */
  onPermission?: (params: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  /** answer elicitation/create (default: `cancel`) */
  onElicitation?: (params: acp.CreateElicitationRequest) => acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;
}

export class AcpTestClient {
  readonly transcript = new Transcript();
  private connection!: acp.ClientConnection;

  private constructor(
    private readonly cli: CliProcess,
    options: AcpTestClientOptions,
  ) {
    const child = cli.child;
    child.stdout.on(
      "data",
      lineSplitter((line) => this.transcript.record("agent", line)),
    );
    const recordClient = lineSplitter((line) => this.transcript.record("client", line));
    const input = new WritableStream<Uint8Array>({
      write: (chunk) => {
        recordClient(chunk);
        return cli.write(chunk);
      },
      close: () => void child.stdin.end(),
    });
    const output = Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>;
    this.connection = acp
      .client({ name: "zcode-acp-test" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) =>
        options.onPermission ? options.onPermission(params) : { outcome: { outcome: "cancelled" } },
      )
      .onRequest(acp.methods.client.elicitation.create, ({ params }) =>
        options.onElicitation ? options.onElicitation(params) : { action: "cancel" },
      )
      .connect(acp.ndJsonStream(input, output));
  }

  static async start(options: AcpTestClientOptions = {}): Promise<AcpTestClient> {
    const env: Record<string, string | undefined> = { ...options.env };
    if (options.simProfile) env.ZCODE_SIM_PROFILE = JSON.stringify(options.simProfile);
    if (options.cancelGraceMs !== undefined) env.ZCODE_ACP_CANCEL_GRACE_MS = String(options.cancelGraceMs);
    return new AcpTestClient(CliProcess.start({ env, args: options.args, cwd: options.cwd }), options);
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get exited(): Promise<ExitInfo> {
    return this.cli.exited;
  }

  /** The SDK's client context: send any request or notification. */
  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  initialize(
    clientCapabilities: acp.ClientCapabilities = {},
    clientInfo = { name: "zcode-acp-test", version: "0.0.0" },
  ): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities, clientInfo });
  }

  newSession(cwd: string, mcpServers: acp.McpServer[] = []): Promise<acp.NewSessionResponse> {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
  }

  prompt(sessionId: string, prompt: string | acp.ContentBlock[]): Promise<acp.PromptResponse> {
    const blocks = typeof prompt === "string" ? [{ type: "text" as const, text: prompt }] : prompt;
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  /** Raw session updates the agent wrote for this session (also the ones the SDK would drop). */
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

  /** Wait for a session/update of `sessionId` matching `predicate`. */
  async waitForUpdate(sessionId: string, predicate: (update: any) => boolean, timeoutMs = 10_000): Promise<any> {
    const line = await this.waitForLine(
      (l) =>
        l.from === "agent" &&
        l.message.method === "session/update" &&
        l.message.params?.sessionId === sessionId &&
        predicate(l.message.params.update),
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
    if (problems.length > 0) throw new Error(`ACP transcript problems:\n${problems.join("\n")}`);
  }

  /** End stdin (the client goes away) and wait for the CLI to exit; kills it after `timeoutMs`. */
  async close(timeoutMs = 10_000): Promise<ExitInfo> {
    this.connection.close();
    return this.cli.close(timeoutMs);
  }

  /** Send a signal and wait for the exit. */
  kill(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<ExitInfo> {
    return this.cli.kill(signal, timeoutMs);
  }
}
