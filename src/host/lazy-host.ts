/**
 * A HostClient that loads the host modules (launcher, channel, install checks) on its first
 * use, so the ACP `initialize` answer does not wait for code it does not need.
 */
import type { CallOptions, HostClient, HostEventSink, HostSubscription, SemanticOperation, ServiceName, SessionEventTarget } from "./types.js";
import type { BridgeError } from "../util/errors.js";

type ExitListener = (info: { incarnation: number; error: BridgeError }) => void;

export class LazyHostClient implements HostClient {
  private host: HostClient | undefined;
  private loading: Promise<HostClient> | undefined;
  private readonly listeners = new Map<ExitListener, (() => void) | undefined>();

  constructor(private readonly create: () => Promise<HostClient>) {}

  get incarnation(): number {
    return this.host?.incarnation ?? 0;
  }

  async call<T = unknown>(service: ServiceName, method: string, params: Record<string, unknown>, options?: CallOptions): Promise<T> {
    return (await this.load()).call<T>(service, method, params, options);
  }

  async operate<T = unknown>(operation: SemanticOperation, sessionId: string, params: Record<string, unknown>, options?: CallOptions): Promise<T> {
    return (await this.load()).operate<T>(operation, sessionId, params, options);
  }

  async protocolId(): Promise<string> {
    return (await this.load()).protocolId();
  }

  async subscribe(target: SessionEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    return (await this.load()).subscribe(target, sink);
  }

  onExit(listener: ExitListener): () => void {
    this.listeners.set(listener, this.host?.onExit(listener));
    return () => {
      this.listeners.get(listener)?.();
      this.listeners.delete(listener);
    };
  }

  /** the host's counts once it is loaded (`_zcode/diagnostics`) */
  diagnostics(): Record<string, unknown> {
    const host = this.host as { diagnostics?: () => Record<string, unknown> } | undefined;
    return { loaded: host !== undefined, exitListeners: this.listeners.size, ...(host?.diagnostics?.() ?? {}) };
  }

  async close(): Promise<void> {
    if (!this.loading) return;
    await (await this.loading).close();
  }

  private load(): Promise<HostClient> {
    this.loading ??= this.create().then((host) => {
      this.host = host;
      for (const listener of this.listeners.keys()) this.listeners.set(listener, host.onExit(listener));
      return host;
    });
    return this.loading;
  }
}
