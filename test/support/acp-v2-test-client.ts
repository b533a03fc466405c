/**
 * ACP v2 test client for end-to-end tests (adr/0028): starts the BUILT CLI (./cli-process.ts),
 * speaks ACP v2 through the SDK's own v2 client (`@agentclientprotocol/sdk/experimental/v2`)
 * over real pipes, and records and validates every raw line in both directions against the SDK's
 * v2 schema (./acp-transcript.ts with ./acp-v2-schema.ts). Permission requests are answered
 * `cancelled` unless the test answers them.
 *
 *   const client = AcpV2TestClient.start({ env: sim.env });
 *   await client.initialize();
 *   const { sessionId } = await client.newSession(cwd);
 *   const { messageId } = await client.prompt(sessionId, "hello");  // the receipt
 *   const idle = await client.waitForIdle(sessionId);                 // state_update idle
 *   client.expectValid();
 *   await client.close();
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { Transcript, type TranscriptLine } from "./acp-transcript.js";
import { V2_RULES } from "./acp-v2-schema.js";
import { CliProcess, lineSplitter, type ExitInfo } from "./cli-process.js";

export interface AcpV2TestClientOptions {
  env?: Record<string, string>;
  simProfile?: Record<string, unknown>;
  cancelGraceMs?: number;
  /** answer session/request_permission (default: `cancelled`) */
  onPermission?: (
    params: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
}

export class AcpV2TestClient {
  readonly transcript = new Transcript(V2_RULES);
  readonly permissionRequests: acp.RequestPermissionRequest[] = [];
  private readonly connection: acp.ClientConnection;
  private readonly recordClient: (chunk: Uint8Array | string) => void;

  private constructor(
    private readonly cli: CliProcess,
    options: AcpV2TestClientOptions,
  ) {
    const child = cli.child;
    child.stdout.on(
      "data",
      lineSplitter((line) => this.transcript.record("agent", line)),
    );
    const recordClient = lineSplitter((line) => this.transcript.record("client", line));
    this.recordClient = recordClient;
    const input = new WritableStream<Uint8Array>({
      write: (chunk) => {
        recordClient(chunk);
        return cli.write(chunk);
      },
      close: () => void child.stdin.end(),
    });
    const output = Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>;
    this.connection = acp
      .client({ name: "zcode-acp-v2-test" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissionRequests.push(params);
        return options.onPermission ? options.onPermission(params, signal) : { outcome: { outcome: "cancelled" } };
      })
      .connect(acp.ndJsonStream(input, output));
  }

  static start(options: AcpV2TestClientOptions = {}): AcpV2TestClient {
    const env: Record<string, string | undefined> = { ...options.env };
    if (options.simProfile) env.ZCODE_SIM_PROFILE = JSON.stringify(options.simProfile);
    if (options.cancelGraceMs !== undefined) env.ZCODE_ACP_CANCEL_GRACE_MS = String(options.cancelGraceMs);
    return new AcpV2TestClient(CliProcess.start({ env }), options);
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.cli.child;
  }

  get stderr(): string {
    return this.cli.stderr;
  }

  /** The SDK's v2 client context: send any request or notification. */
  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  initialize(): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "zcode-acp-v2-test", version: "0.0.0" },
      capabilities: {},
    });
  }

  newSession(cwd: string): Promise<acp.NewSessionResponse> {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  cancel(sessionId: string): Promise<void> {
    return this.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  }

  /** Write raw bytes to the CLI's stdin, beside the SDK's writes (whole lines only); recorded like the SDK's. */
  writeRaw(text: string): Promise<void> {
    this.recordClient(text);
    return this.cli.write(text);
  }

  /** Raw session updates the agent wrote for this session. */
  updates(sessionId: string): any[] {
    return this.transcript
      .agentMessages()
      .filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId)
      .map((m) => m.params.update);
  }

  /** Concatenated agent_message_chunk text of a session. */
  text(sessionId: string): string {
    return this.updates(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
      .map((u) => u.content.text as string)
      .join("");
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
  async waitForUpdate(sessionId: string, predicate: (update: any) => boolean, nth = 0, timeoutMs = 10_000): Promise<any> {
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

  /** The `nth` idle `state_update` of a session (its stop reason ends a turn). */
  waitForIdle(sessionId: string, nth = 0, timeoutMs = 10_000): Promise<any> {
    return this.waitForUpdate(sessionId, (u) => u.sessionUpdate === "state_update" && u.state === "idle", nth, timeoutMs);
  }

  /** Throws when any recorded line broke the v2 schema, gating or pairing rules. */
  expectValid(options: { allowUnanswered?: boolean } = {}): void {
    const problems = [...this.transcript.problems];
    if (!options.allowUnanswered) {
      for (const request of this.transcript.unanswered("client")) problems.push(`client request never answered: ${request}`);
      for (const request of this.transcript.unanswered("agent")) problems.push(`agent request never answered: ${request}`);
    }
    if (problems.length > 0) throw new Error(`ACP v2 transcript problems:\n${problems.join("\n")}`);
  }

  async close(timeoutMs = 10_000): Promise<ExitInfo> {
    this.connection.close();
    return this.cli.close(timeoutMs);
  }

  kill(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<ExitInfo> {
    return this.cli.kill(signal, timeoutMs);
  }
}
