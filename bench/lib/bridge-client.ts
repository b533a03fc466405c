/**
 * The ACP side of the benchmarks: the built CLI spawned over real pipes, driven by the SDK
 * client (no transcript, no schema checks: the reader should cost what a real client costs).
 * Optionally a slow reader: stdout is paused periodically, so the bridge's writes back up.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

export const CLI_PATH = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface SlowReading {
  /** read for this long … */
  readMs: number;
  /** … then stop reading stdout for this long */
  pauseMs: number;
}

export interface BridgeClientOptions {
  env: NodeJS.ProcessEnv;
  /** every agent_message_chunk text, as it arrives */
  onText?: (text: string) => void;
  slow?: SlowReading;
  /** extra node options for the bridge process (e.g. --cpu-prof) */
  nodeArgs?: string[];
  /** another program instead of the built CLI (a baseline of the start-up benchmark), and its arguments */
  script?: string;
  args?: string[];
  /** the node binary (default: the one running the benchmark) */
  node?: string;
  /** run this command line instead of node (e.g. an installed bin or npx); nodeArgs and script are ignored */
  command?: string[];
}

/** stdout as a web stream; with `slow`, reading stops for pauseMs after every readMs. */
function stdoutStream(child: ChildProcessWithoutNullStreams, slow: SlowReading | undefined): ReadableStream<Uint8Array> {
  const out = child.stdout;
  let timer: NodeJS.Timeout | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      out.on("data", (chunk: Buffer) => controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
      out.on("end", () => {
        clearTimeout(timer);
        try {
          controller.close();
        } catch {
          // already closed
        }
      });
      out.on("error", (error) => controller.error(error));
      if (slow) {
        const cycle = (): void => {
          timer = setTimeout(() => {
            out.pause();
            timer = setTimeout(() => {
              out.resume();
              cycle();
            }, slow.pauseMs);
          }, slow.readMs);
        };
        cycle();
      }
    },
    cancel() {
      clearTimeout(timer);
      out.destroy();
    },
  });
}

export class BridgeClient {
  readonly exited: Promise<number | null>;
  /** performance.now() right before the spawn */
  readonly spawnedAt: number;
  /** session/update notifications received */
  updates = 0;
  private readonly connection: acp.ClientConnection;

  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    options: BridgeClientOptions,
    spawnedAt: number,
  ) {
    this.spawnedAt = spawnedAt;
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    child.stderr.resume(); // logs (warn level) are drained and dropped
    child.stdin.on("error", () => undefined);
    const onText = options.onText;
    this.connection = acp
      .client({ name: "zcode-acp-bench" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates += 1;
        const update = params.update;
        if (onText && update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") onText(update.content.text);
      })
      .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" as const } }))
      .connect(acp.ndJsonStream(Writable.toWeb(child.stdin), stdoutStream(child, options.slow)));
  }

  static start(options: BridgeClientOptions): BridgeClient {
    const script = options.script ?? CLI_PATH;
    if (!options.command && !existsSync(script))
      throw new Error(`${script} is missing${script === CLI_PATH ? ': run "npm run build" first' : ""}`);
    const [file, ...argv] = options.command ?? [
      options.node ?? process.execPath,
      ...(options.nodeArgs ?? []),
      script,
      ...(options.args ?? []),
    ];
    const spawnedAt = performance.now();
    const child = spawn(file!, argv, { env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    return new BridgeClient(child, options, spawnedAt);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get agent(): acp.ClientContext {
    return this.connection.agent;
  }

  initialize(): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "zcode-acp-bench", version: "0.0.0" },
    });
  }

  async newSession(cwd: string): Promise<string> {
    const { sessionId } = await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    return sessionId;
  }

  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  /** End stdin and wait for the exit (SIGKILL after `timeoutMs`). */
  async close(timeoutMs = 15_000): Promise<number | null> {
    this.connection.close();
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
