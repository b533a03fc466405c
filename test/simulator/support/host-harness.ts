/**
 * Drives a simulated host without the bridge: a worker_threads Worker with a parentPort shim
 * (host-worker.mjs) runs the install's out/host/index.js, and the test side connects with the
 * install's own RPC module (its release's export letters, fixtures/sim-releases.ts) over a
 * MessageChannel.
 */
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SimInstall } from "../../../fixtures/sim-install.js";
import type { RpcName } from "../../../fixtures/sim-releases.js";

const WORKER_ENTRY = fileURLToPath(new URL("./host-worker.mjs", import.meta.url));

export type Any = any;

/** The install's RPC chunk by source name (whatever letters the release exports them under). */
export interface RpcModule {
  MessagePortProtocol: new (port: unknown) => Any;
  ChannelClient: new (protocol: unknown) => Any;
  ProxyChannel: { toService(channel: unknown): Any; fromService(service: unknown): Any };
  /** exported by the v2 chunks only */
  SocketProtocol?: new (socket: unknown) => Any;
  ChannelServer: new (protocol: unknown, ctx: unknown, options?: unknown) => Any;
  Emitter: new (options?: unknown) => Any;
  VSBuffer: new (bytes: Uint8Array) => { buffer: Uint8Array };
  encodeMessage(header: unknown, body: unknown): Uint8Array;
  decodeMessage(bytes: Uint8Array): { header: Any; body: Any };
  serializeValue(value: unknown): Uint8Array;
  deserializeValue(bytes: Uint8Array): Any;
  isFlowControl(value: unknown): boolean;
}

export function rpcModulePath(install: SimInstall): string {
  return join(install.appArchive, install.flavour.rpcModule);
}

/** Import the install's RPC chunk and name its exports as the source does. */
export async function loadRpcModule(install: SimInstall): Promise<RpcModule> {
  const mod = (await import(pathToFileURL(rpcModulePath(install)).href)) as Record<string, unknown>;
  const named: Record<string, unknown> = {};
  for (const [name, exported] of Object.entries(install.flavour.rpcExports) as Array<[RpcName, string]>) {
    if (!(exported in mod)) throw new Error(`${install.flavour.rpcModule} does not export ${exported} (${name})`);
    named[name] = mod[exported];
  }
  return named as unknown as RpcModule;
}

/**
 * Wait until `check` returns a value, re-checking whenever `subscribe`'s callback fires (a
 * condition with no event to hook is polled with test/support/until.ts).
 */
export function waitUntil<T>(
  check: () => T | undefined,
  subscribe: (wake: () => void) => () => void,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const first = check();
    if (first !== undefined) {
      resolve(first);
      return;
    }
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const unsubscribe = subscribe(() => {
      const value = check();
      if (value === undefined) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(value);
    });
  });
}

export interface Connection {
  rpc: RpcModule;
  port: MessagePort;
  protocol: Any;
  client: Any;
  agent: Any;
  task: Any;
  /** v2 channels (on v1 a call parks and fails with Unknown channel after 1000 ms) */
  modelSelection: Any;
  session: Any;
}

export interface HarnessOptions {
  profile?: Record<string, unknown>;
  env?: Record<string, string>;
  /** answer browser / media / feedback requests at once like the bridge does (default true) */
  answerReverse?: boolean;
}

export class HostHarness {
  readonly messages: Any[] = [];
  readonly exited: Promise<number>;
  stdout = "";
  stderr = "";
  error: Error | undefined;
  private wakers = new Set<() => void>();
  private exitCode: number | undefined;

  private constructor(
    readonly install: SimInstall,
    readonly worker: Worker,
    private readonly options: HarnessOptions,
  ) {
    worker.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString();
    });
    worker.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    worker.on("message", (message: Any) => {
      this.messages.push(message);
      if (options.answerReverse !== false) this.answerReverse(message);
      this.wake();
    });
    worker.on("error", (error) => {
      this.error = error;
      this.wake();
    });
    this.exited = new Promise((resolve) =>
      worker.on("exit", (code) => {
        this.exitCode = code;
        this.wake();
        resolve(code);
      }),
    );
  }

  static start(install: SimInstall, options: HarnessOptions = {}): HostHarness {
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...install.env, ...options.env };
    if (options.profile) env.ZCODE_SIM_PROFILE = JSON.stringify(options.profile);
    const worker = new Worker(WORKER_ENTRY, {
      workerData: { hostIndex: join(install.appArchive, install.manifest.artifact.hostIndex.path) },
      env,
      stdout: true,
      stderr: true,
    });
    return new HostHarness(install, worker, options);
  }

  get hasExited(): boolean {
    return this.exitCode !== undefined;
  }

  private wake(): void {
    for (const waker of [...this.wakers]) waker();
  }

  onChange(waker: () => void): () => void {
    this.wakers.add(waker);
    return () => this.wakers.delete(waker);
  }

  /** The bridge's answers (docs/runtime-contract.md §4 step 5). */
  private answerReverse(message: Any): void {
    if (typeof message?.requestId !== "string" || message.requestId === "") return;
    if (message.type === "browser-execute-request") {
      this.post({
        type: "browser-execute-result",
        requestId: message.requestId,
        result: {
          ok: false,
          elapsedMs: 0,
          error: { code: "backend_unavailable", message: "Browser control is unavailable", sideEffect: "none" },
        },
      });
    } else if (message.type === "local-media-preview-path-authorize-request") {
      this.post({
        type: "local-media-preview-path-authorize-result",
        requestId: message.requestId,
        ok: false,
        error: "Local media preview is unavailable",
      });
    } else if (message.type === "feedback-log-archive-request") {
      this.post({
        type: "feedback-log-archive-result",
        requestId: message.requestId,
        ok: false,
        error: "Feedback archives are unavailable",
      });
    } else if (message.type === "plugin-sandbox-register-request") {
      this.post({
        type: "plugin-sandbox-register-result",
        requestId: message.requestId,
        ok: false,
        error: "Plugin sandboxes are unavailable headless",
      });
    }
  }

  post(data: unknown, ports: MessagePort[] = []): void {
    this.worker.postMessage({ data, ports }, ports);
  }

  waitForMessage(predicate: (message: Any) => boolean, timeoutMs = 5000, what = "a host message"): Promise<Any> {
    return waitUntil(
      () => this.messages.find(predicate),
      (w) => this.onChange(w),
      timeoutMs,
      what,
    );
  }

  startupStates(): Any[] {
    return this.messages.filter((m) => m.type === "database-startup-state").map((m) => m.state);
  }

  /**
   * Post init-local with a fresh port and return the bridge-side port. On the v2 line it carries
   * zcodeBuiltinProviderConfigFilePath as the bridge does; a key of `extra` set to undefined is left out.
   */
  init(extra: Record<string, unknown> = {}): MessagePort {
    const { port1, port2 } = new MessageChannel();
    const data: Record<string, unknown> = { type: "init-local", deviceMid: "zcode-acp-headless", agentSpawnFallbackCwd: this.install.root };
    if (this.install.builtinProviderConfigPath) data.zcodeBuiltinProviderConfigFilePath = this.install.builtinProviderConfigPath;
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete data[key];
      else data[key] = value;
    }
    this.post(data, [port2]);
    return port1;
  }

  /** init-local, then an RPC client through the install's own module (Initialize is awaited by the client itself). */
  async connect(extra: Record<string, unknown> = {}): Promise<Connection> {
    const port = this.init(extra);
    const rpc = await loadRpcModule(this.install);
    const protocol = new rpc.MessagePortProtocol(port);
    const client = new rpc.ChannelClient(protocol);
    const service = (name: string): Any => rpc.ProxyChannel.toService(client.getChannel(name));
    return {
      rpc,
      port,
      protocol,
      client,
      agent: service("zcode-agent"),
      task: service("zcode-task"),
      modelSelection: service("model-selection"),
      session: service("zcode-session"),
    };
  }

  /** Graceful stop: post dispose and wait for the worker to exit. */
  async dispose(timeoutMs = 5000): Promise<number> {
    if (this.hasExited) return this.exited;
    this.post({ type: "dispose" });
    const timer = setTimeout(() => void this.worker.terminate(), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async terminate(): Promise<void> {
    if (!this.hasExited) await this.worker.terminate();
  }
}
