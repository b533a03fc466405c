/**
 * A minimal ACP client for the benchmarks: JSON-RPC lines written and read by hand (JSON.parse
 * per line, no SDK, no schema parsing). It separates what the bridge adds from what the SDK
 * client adds on the reading side.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { CLI_PATH } from "./bridge-client.js";

/** the parts of a session/update this client reads */
type SessionUpdate = { sessionUpdate?: string; content?: { type?: string; text: string } };
type Message = {
  id?: number;
  method?: string;
  params?: { update?: SessionUpdate };
  result?: unknown;
  error?: { code: number; message: string };
};

export class LineClient {
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly pending = new Map<number, { resolve(result: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private buffer = "";

  constructor(
    env: NodeJS.ProcessEnv,
    private readonly onText: (text: string) => void,
  ) {
    this.child = spawn(process.execPath, [CLI_PATH], { env, stdio: ["pipe", "pipe", "pipe"] });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stderr.resume();
    this.child.stdin.on("error", () => undefined);
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (text: string) => this.onData(text));
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private onData(text: string): void {
    this.buffer += text;
    let newline = this.buffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim() !== "") this.onMessage(JSON.parse(line) as Message);
      newline = this.buffer.indexOf("\n");
    }
  }

  private onMessage(message: Message): void {
    if (message.method === "session/update") {
      const update = message.params?.update;
      if (update?.sessionUpdate === "agent_message_chunk" && update.content?.type === "text") this.onText(update.content.text);
      return;
    }
    if (message.method !== undefined && message.id !== undefined) {
      // a request from the agent (permission): refuse
      this.child.stdin.write(
        `${JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported by the bench client" } })}\n`,
      );
      return;
    }
    if (message.id === undefined) return;
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.error) waiter.reject(new Error(`${message.error.code} ${message.error.message}`));
    else waiter.resolve(message.result);
  }
}
