/**
 * A HostClient that loads the host modules (launcher, channel, install checks) on its first
 * use, so the ACP `initialize` answer does not wait for code it does not need.
 *
 * Warm-up (adr/0013-early-initialize-and-warm-up.md): right after `initialize` is answered the
 * CLI calls `prepare()`, which loads the modules and runs `warm` (the install assessment) without
 * launching anything, and `startEarly()` once a request that needs the host is known to be on its
 * way. Neither reports a failure itself: a failed load, assessment or start surfaces at the first
 * real use (call, operate, subscribe) with the same error as without the warm-up.
 */
import type {
  CallOptions,
  ExitListener,
  HostClient,
  HostEventSink,
  HostSubscription,
  SemanticOperation,
  ServiceName,
  HostEventTarget,
} from "./types.js";
import type { Disposable } from "../util/disposable.js";
import type { Served } from "./served-surface.js";

/** a host client that can be started before its first request (HostConnection) */
interface StartableHost extends HostClient {
  startNow?(): Promise<void>;
  /** no launch from now on; a start in progress is abandoned (HostConnection.refuseStarts) */
  refuseStarts?(): Promise<void>;
  /** SIGKILL the host process now (HostConnection.killNow) */
  killNow?(): void;
}

export interface LazyHostOptions {
  /** warm-up work once the host client exists (e.g. assessing the install); must not launch */
  warm?: (host: HostClient) => Promise<unknown> | void;
}

export class LazyHostClient implements HostClient {
  private host: StartableHost | undefined;
  private loading: Promise<StartableHost> | undefined;
  private early: Promise<void> | undefined;
  private warming: Promise<unknown> | undefined;
  private startsRefused = false;
  /** exit listeners, with their subscription on the host once it is loaded */
  private readonly listeners = new Map<ExitListener, Disposable | undefined>();

  constructor(
    private readonly create: () => Promise<StartableHost>,
    private readonly options: LazyHostOptions = {},
  ) {}

  get incarnation(): number {
    return this.host?.incarnation ?? 0;
  }

  /** Load the host modules and run the warm-up now; resolves when both are done, never rejects. */
  prepare(): Promise<void> {
    return this.load().then(
      () =>
        this.warming?.then(
          () => undefined,
          () => undefined,
        ),
      () => undefined,
    );
  }

  /** Resolves once the host modules are loaded (or failed to load); starts loading them. */
  loaded(): Promise<void> {
    return this.load().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Start the host now; the next use waits for this start and gets its error. Never rejects. */
  startEarly(): void {
    if (this.early || this.host?.incarnation) return;
    const early = this.load().then((host) => host.startNow?.());
    early.catch(() => undefined);
    this.early = early;
  }

  async call<T = unknown>(service: ServiceName, method: string, params: Record<string, unknown>, options?: CallOptions): Promise<T> {
    return (await this.ready()).call<T>(service, method, params, options);
  }

  async operate<T = unknown>(
    operation: SemanticOperation,
    sessionId: string,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<T> {
    return (await this.ready()).operate<T>(operation, sessionId, params, options);
  }

  async history(historyId: string, op: "next" | "close", options?: CallOptions): Promise<unknown> {
    return (await this.ready()).history(historyId, op, options);
  }

  async protocolId(): Promise<string> {
    return (await this.ready()).protocolId();
  }

  async allows(service: ServiceName, method: string): Promise<boolean> {
    return (await this.ready()).allows(service, method);
  }

  async probe(service: ServiceName, method: string): Promise<Served> {
    const host = await this.ready();
    return (await host.probe?.(service, method)) ?? "unknown";
  }

  learnUnserved(service: ServiceName, name: string, how: string): void {
    this.host?.learnUnserved?.(service, name, how);
  }

  async acceptsParam(service: ServiceName, method: string, param: string): Promise<boolean> {
    const host = await this.ready();
    return (await host.acceptsParam?.(service, method, param)) ?? false;
  }

  async subscribe(target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    return (await this.ready()).subscribe(target, sink);
  }

  onExit(listener: ExitListener): Disposable {
    this.listeners.set(listener, this.host?.onExit(listener));
    return {
      dispose: () => {
        this.listeners.get(listener)?.dispose();
        this.listeners.delete(listener);
      },
    };
  }

  /** the host's counts once it is loaded (`_zcode/diagnostics`) */
  diagnostics(): Record<string, unknown> {
    const host = this.host as { diagnostics?: () => Record<string, unknown> } | undefined;
    return { loaded: host !== undefined, exitListeners: this.listeners.size, ...(host?.diagnostics?.() ?? {}) };
  }

  /**
   * The bridge is stopping: no host is launched from now on and a start in progress is
   * abandoned at once (adr/0019); a running host stays for the last calls until close().
   */
  async refuseStarts(): Promise<void> {
    this.startsRefused = true;
    await this.host?.refuseStarts?.();
  }

  /** SIGKILL the host process now, synchronously (a second stop signal); a no-op before it is loaded. */
  killNow(): void {
    this.startsRefused = true;
    this.host?.killNow?.();
  }

  async close(): Promise<void> {
    this.startsRefused = true;
    if (!this.loading) return;
    let host: StartableHost;
    try {
      host = await this.loading;
    } catch {
      return; // nothing was created, nothing runs
    }
    await host.close();
  }

  /** the loaded host, after an early start settled; the first use after a failed one gets its error */
  private async ready(): Promise<StartableHost> {
    const host = await this.load();
    const early = this.early;
    if (early) {
      try {
        await early;
      } finally {
        if (this.early === early) this.early = undefined;
      }
    }
    return host;
  }

  private load(): Promise<StartableHost> {
    this.loading ??= this.create().then((host) => {
      this.host = host;
      if (this.startsRefused) void host.refuseStarts?.();
      for (const listener of this.listeners.keys()) this.listeners.set(listener, host.onExit(listener));
      const warming = this.options.warm?.(host);
      if (warming) this.warming = warming;
      return host;
    });
    return this.loading;
  }
}
