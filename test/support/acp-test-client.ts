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
// the unstable surface: a client that advertised an unstable capability parses its updates (subagent_update, plan_update)
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Transcript } from "./acp-transcript.js";
import { CliProcess } from "./cli-process.js";
import { simEnv, TranscriptClient, type SimEnvOptions } from "./transcript-client.js";

export type { ExitInfo } from "./cli-process.js";

export interface AcpTestClientOptions extends SimEnvOptions {
  /** extra command-line arguments */
  args?: string[];
  cwd?: string;
  /** answer session/request_permission (default: `cancelled`) */
  onPermission?: (params: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  /** answer elicitation/create (default: `cancel`) */
  onElicitation?: (params: acp.CreateElicitationRequest) => acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;
}

export class AcpTestClient extends TranscriptClient {
  private readonly connection: acp.ClientConnection;

  private constructor(cli: CliProcess, options: AcpTestClientOptions) {
    super(cli, new Transcript());
    const { input, output } = this.sdkStreams();
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
    return new AcpTestClient(CliProcess.start({ env: simEnv(options), args: options.args, cwd: options.cwd }), options);
  }

  /** The SDK's client context: send any request or notification. */
  get agent(): acp.ClientContext {
    return this.connection.agent;
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

  /** Wait for a session/update of `sessionId` matching `predicate`. */
  waitForUpdate(sessionId: string, predicate: (update: any) => boolean, timeoutMs = 10_000): Promise<any> {
    return this.waitForNthUpdate(sessionId, predicate, 0, timeoutMs);
  }

  protected override closeConnection(): void {
    this.connection.close();
  }
}
