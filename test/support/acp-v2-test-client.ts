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
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { Transcript } from "./acp-transcript.js";
import { V2_RULES } from "./acp-v2-schema.js";
import { CliProcess } from "./cli-process.js";
import { simEnv, TranscriptClient, type SimEnvOptions } from "./transcript-client.js";

export interface AcpV2TestClientOptions extends SimEnvOptions {
  /** answer session/request_permission (default: `cancelled`) */
  onPermission?: (
    params: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
}

export class AcpV2TestClient extends TranscriptClient {
  readonly permissionRequests: acp.RequestPermissionRequest[] = [];
  private readonly connection: acp.ClientConnection;

  private constructor(cli: CliProcess, options: AcpV2TestClientOptions) {
    super(cli, new Transcript(V2_RULES), "ACP v2");
    const { input, output } = this.sdkStreams();
    this.connection = acp
      .client({ name: "zcode-acp-v2-test" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
        this.permissionRequests.push(params);
        return options.onPermission ? options.onPermission(params, signal) : { outcome: { outcome: "cancelled" } };
      })
      .connect(acp.ndJsonStream(input, output));
  }

  static start(options: AcpV2TestClientOptions = {}): AcpV2TestClient {
    return new AcpV2TestClient(CliProcess.start({ env: simEnv(options) }), options);
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

  /** The `nth` (0-based) session/update of `sessionId` matching `predicate`, waiting for it. */
  waitForUpdate(sessionId: string, predicate: (update: any) => boolean, nth = 0, timeoutMs = 10_000): Promise<any> {
    return this.waitForNthUpdate(sessionId, predicate, nth, timeoutMs);
  }

  /** The `nth` idle `state_update` of a session (its stop reason ends a turn). */
  waitForIdle(sessionId: string, nth = 0, timeoutMs = 10_000): Promise<any> {
    return this.waitForUpdate(sessionId, (u) => u.sessionUpdate === "state_update" && u.state === "idle", nth, timeoutMs);
  }

  protected override closeConnection(): void {
    this.connection.close();
  }
}
