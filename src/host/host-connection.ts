/**
 * HostConnection: the HostClient implementation on top of the launcher and the NDJSON channel.
 *
 * - Lazy: the first call/subscribe/operate resolves the install (it must be `supported`), launches
 *   the host and waits for `ready` within the start-up budget. Call timeouts start after ready.
 * - One host per bridge process: a relaunch waits until the previous process is gone.
 * - A host exit (crash, channel failure, stop) rejects every pending call and ends every
 *   subscription with the typed error at once, fires the onExit listeners, and the next request
 *   launches a fresh host with `incarnation` + 1.
 * - close() is final: it stops the host (channel close → dispose → bounded wait → SIGTERM → SIGKILL)
 *   and later requests are refused with CHANNEL_CLOSED.
 * - Stopping never waits for a start (adr/0019): `refuseStarts()` (the bridge is stopping) and
 *   close() abandon a host that has not reported ready — its process is ended at once, the
 *   requests waiting for it fail — and no host is launched after them.
 */
import type { Assessment } from "../compat/types.js";
import type { Logger } from "../log/logger.js";
import { DEFAULT_FRAME_LIMIT_BYTES } from "../channel/limits.js";
import { BridgeError, describeError } from "../util/errors.js";
import { acceptsOptionalParam } from "../manifest/release-lines.js";
import { HostIncarnation } from "./incarnation.js";
import { requireSupported } from "./launcher.js";
import { buildTimeoutTable, timeoutFor, type TimeoutTable } from "./timeouts.js";
import { isMethodNotFound, notServedError, PROBE_TIMEOUT_MS, ServedSurface, type Served } from "./served-surface.js";
import type { Disposable } from "../util/disposable.js";
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

/** The dynamic event behind HostClient.subscribe; it must be in the descriptor's agent events. */
export const SESSION_EVENT = "onDynamicSessionEvent";

export interface HostConnectionOptions {
  resolveInstall: () => Promise<Assessment>;
  logger: Logger;
  /** environment of the host process (the CLI passes its own); ELECTRON_RUN_AS_NODE=1 is added */
  env: NodeJS.ProcessEnv;
  /** overrides of the timeout table (src/host/timeouts.ts), in milliseconds */
  timeouts?: Partial<Record<string, number>>;
  /** internal channel frame limit in both directions (default 16 MiB) */
  frameLimitBytes?: number;
  /** pause reading host events while this many sink promises are unsettled (default 64) */
  maxPendingDeliveries?: number;
  /** another bootstrap script (tests only) */
  bootstrapScript?: string;
}

export interface HostDiagnostics {
  incarnation: number;
  running: boolean;
  pendingRequests: number;
  openRoutes: number;
  pendingDeliveries: number;
  readingPaused: boolean;
  exitListeners: number;
  /** the largest internal channel frame received from any host of this process, in bytes (legacy and V4 reads alike) */
  largestFrameBytes: number;
  /** the internal channel's frame limit, in bytes */
  frameLimitBytes: number;
}

export class HostConnection implements HostClient {
  private readonly options: HostConnectionOptions;
  private readonly logger: Logger;
  private readonly timeouts: TimeoutTable;
  private readonly frameLimitBytes: number;
  private readonly exitListeners = new Set<ExitListener>();
  private current: HostIncarnation | undefined;
  private starting: Promise<HostIncarnation> | undefined;
  private launches = 0;
  private closed = false;
  /** the bridge is stopping: no launch from now on (a running host still serves the last calls) */
  private startsRefused = false;
  /** the largest inbound frame of the incarnations that ended */
  private largestFrameOfEnded = 0;
  /** what the running incarnation was found not to serve (adr/0033); replaced with each launch */
  private served = new ServedSurface(0);

  constructor(options: HostConnectionOptions) {
    this.options = options;
    this.logger = options.logger.child("host");
    this.timeouts = buildTimeoutTable(options.timeouts);
    this.frameLimitBytes = options.frameLimitBytes ?? DEFAULT_FRAME_LIMIT_BYTES;
  }

  get incarnation(): number {
    return this.launches;
  }

  /** pid of the running host process (diagnostics and tests), undefined when none runs */
  get pid(): number | undefined {
    return this.current?.alive ? this.current.pid : undefined;
  }

  /** Counts for leak checks (the env-gated `_zcode/diagnostics` ACP method). */
  diagnostics(): HostDiagnostics {
    const host = this.current;
    const channel = host?.alive ? host.channel : undefined;
    return {
      incarnation: this.launches,
      running: host?.alive ?? false,
      pendingRequests: channel?.pendingRequests ?? 0,
      openRoutes: channel?.openRoutes ?? 0,
      pendingDeliveries: channel?.pendingDeliveries ?? 0,
      readingPaused: channel?.readingPaused ?? false,
      exitListeners: this.exitListeners.size,
      largestFrameBytes: Math.max(this.largestFrameOfEnded, host?.channel.largestInboundFrameBytes ?? 0),
      frameLimitBytes: this.frameLimitBytes,
    };
  }

  async call<T = unknown>(service: ServiceName, method: string, params: Record<string, unknown>, options: CallOptions = {}): Promise<T> {
    if (typeof method !== "string" || method === "") throw new BridgeError("METHOD_NOT_ALLOWED", "a host method name is required");
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      throw new BridgeError("INTERNAL", `${service}.${method} needs one params object`);
    }
    const host = await this.ensureStarted();
    if (host.install.manifest.protocol.channels[service] === undefined) {
      throw new BridgeError("METHOD_NOT_ALLOWED", `the protocol ${host.install.manifest.protocol.id} has no ${String(service)} channel`);
    }
    const label = `${service}.${method}`;
    const channelName = host.install.manifest.protocol.channels[service] ?? service;
    const served = this.servedOf(host);
    // a call this host answered "Method not found" is not sent to it again (adr/0033)
    const known = served.why(service, method);
    if (known !== undefined) throw notServedError(channelName, method, known);
    try {
      const result = await host.channel.request(
        "__call",
        { service, method, params },
        { timeoutMs: timeoutFor(this.timeouts, options.timeout ?? "default"), label },
      );
      return result as T;
    } catch (error) {
      if (!isMethodNotFound(error)) throw error;
      const how = "the host answered “Method not found”";
      served.learn(service, method, how);
      this.logger.warn("the running host does not serve an allowlisted call; not sent to it again", { method: label });
      throw notServedError(channelName, method, how);
    }
  }

  /**
   * Does the running host serve `service.method`? One probe per incarnation with a params object that
   * names no session, so a served method refuses it and nothing runs (adr/0033); bounded by
   * PROBE_TIMEOUT_MS. A hash-pinned release (no `trust: "local"`) is not probed: its calls were
   * reviewed against the released build, so the pin answers "served" without a call.
   */
  async probe(service: ServiceName, method: string): Promise<Served> {
    const host = await this.ensureStarted();
    const served = this.servedOf(host);
    if (served.why(service, method) !== undefined) return "unserved";
    if (!(await this.allows(service, method))) return "unknown";
    if (host.install.manifest.trust !== "local") return "served";
    return served.probe(service, method, () =>
      host.channel.request("__call", { service, method, params: {} }, { timeoutMs: PROBE_TIMEOUT_MS, label: `probe ${service}.${method}` }),
    );
  }

  /** `service.name` (a method or an event) is not served by the running host: learned for this incarnation. */
  learnUnserved(service: ServiceName, name: string, how: string): void {
    const host = this.current;
    if (host?.alive !== true) return;
    this.servedOf(host).learn(service, name, how);
    this.logger.warn("the running host does not serve an allowlisted name", { name: `${service}.${name}`, how });
  }

  /** What the running incarnation was found not to serve (`service.name` → how it was learned). */
  unserved(): Record<string, string> {
    const host = this.current;
    return host?.alive === true && this.served.incarnation === host.number ? this.served.learned() : {};
  }

  private servedOf(host: HostIncarnation): ServedSurface {
    if (this.served.incarnation !== host.number) this.served = new ServedSurface(host.number);
    return this.served;
  }

  async operate<T = unknown>(
    operation: SemanticOperation,
    sessionId: string,
    params: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<T> {
    const host = await this.ensureStarted();
    const descriptor = host.install.manifest.protocol.operations[operation];
    if (!descriptor)
      throw new BridgeError("METHOD_NOT_ALLOWED", `the protocol ${host.install.manifest.protocol.id} has no operation ${operation}`);
    return this.call<T>(descriptor.service, descriptor.method, { ...params, [descriptor.sessionKey]: sessionId }, options);
  }

  async history(historyId: string, op: "next" | "close", options: CallOptions = {}): Promise<unknown> {
    const host = await this.ensureStarted();
    return host.channel.request(
      "__history",
      { op, historyId },
      { timeoutMs: timeoutFor(this.timeouts, options.timeout ?? "default"), label: `history.${op}` },
    );
  }

  async protocolId(): Promise<string> {
    return (await this.ensureStarted()).install.manifest.protocol.id;
  }

  /** allowed by the manifest (the upper bound) and not found unserved by the running host (adr/0033) */
  async allows(service: ServiceName, method: string): Promise<boolean> {
    const host = await this.ensureStarted();
    const { protocol } = host.install.manifest;
    if (protocol.channels[service] === undefined || !(protocol.allowlist[service] ?? []).includes(method)) return false;
    return this.servedOf(host).why(service, method) === undefined;
  }

  async acceptsParam(service: ServiceName, method: string, param: string): Promise<boolean> {
    const { artifact } = (await this.ensureStarted()).install.manifest;
    return acceptsOptionalParam(artifact.cliVersion, service, method, param);
  }

  async subscribe(target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    const host = await this.ensureStarted();
    // a target naming its workspace event (V4 frames, v3 header requests) is sent without that name
    const { event, nativeTarget } =
      "event" in target
        ? { event: target.event, nativeTarget: { workspacePath: target.workspacePath } }
        : { event: SESSION_EVENT, nativeTarget: target };
    if (!host.install.manifest.protocol.events.agent.includes(event)) {
      throw new BridgeError("METHOD_NOT_ALLOWED", `the protocol ${host.install.manifest.protocol.id} does not allow ${event}`);
    }
    const unservedEvent = this.servedOf(host).why("agent", event);
    if (unservedEvent !== undefined) throw notServedError(host.install.manifest.protocol.channels.agent ?? "agent", event, unservedEvent);
    // "subscribing": an end is held until the host acknowledged; "done": ended or refused
    let state: "subscribing" | "active" | "done" = "subscribing";
    let heldEnd: BridgeError | null | undefined;
    const deliverEnd = (error: BridgeError | null): void => {
      try {
        sink.onEnd(error);
      } catch (hookError) {
        this.logger.error("subscription sink onEnd threw", { error: describeError(hookError) });
      }
    };
    const subscriptionId = host.channel.openRoute({
      onEvent: (event) => (state === "done" ? undefined : sink.onEvent(event)),
      onEnd: (error) => {
        if (state === "subscribing") heldEnd = error;
        else if (state === "active") {
          state = "done";
          deliverEnd(error);
        }
      },
    });
    try {
      await host.channel.request(
        "__subscribe",
        { subscriptionId, service: "agent", event, target: nativeTarget },
        { timeoutMs: timeoutFor(this.timeouts, "subscribe"), label: `agent.${event}` },
      );
    } catch (error) {
      state = "done";
      host.channel.closeRoute(subscriptionId, null);
      if (host.alive) void this.unsubscribe(host, subscriptionId);
      throw error;
    }
    if (heldEnd !== undefined) {
      // ended while subscribing (host exit, oversized first event): report it like any later end
      state = "done";
      const error = heldEnd;
      queueMicrotask(() => deliverEnd(error));
    } else {
      state = "active";
    }
    return {
      id: subscriptionId,
      incarnation: host.number,
      dispose: async () => {
        if (!host.channel.closeRoute(subscriptionId, null)) return;
        if (host.alive) await this.unsubscribe(host, subscriptionId);
      },
    };
  }

  /** Launch the host (if none runs) without a request: the CLI's warm-up when one is on its way. */
  async startNow(): Promise<void> {
    await this.ensureStarted();
  }

  onExit(listener: ExitListener): Disposable {
    this.exitListeners.add(listener);
    return { dispose: () => void this.exitListeners.delete(listener) };
  }

  /**
   * No host is launched from now on; a start in progress is abandoned (its process ended at
   * once, its waiters get HOST_START_FAILED). A host that is ready stays for the last calls
   * (denials, stopGeneration) until close(). Resolves once an abandoned process is gone.
   */
  async refuseStarts(): Promise<void> {
    this.startsRefused = true;
    const host = this.current;
    if (host && !host.started && host.alive) {
      this.logger.info("abandoning the host start: zcode-acp is stopping", { incarnation: host.number });
      await host.abandon(
        new BridgeError("HOST_START_FAILED", "The ZCode host start was abandoned because zcode-acp is stopping.", {
          details: { incarnation: host.number },
        }),
      );
    }
  }

  /** SIGKILL the host process now, synchronously (the bridge exits at once on a second stop signal). */
  killNow(): void {
    this.closed = true;
    this.startsRefused = true;
    this.current?.killNow();
  }

  async close(): Promise<void> {
    this.closed = true;
    // a start still resolving the install launches nothing now (start() checks startsRefused)
    await this.refuseStarts();
    const host = this.current;
    if (host) await host.stop();
  }

  private async unsubscribe(host: HostIncarnation, subscriptionId: string): Promise<void> {
    try {
      await host.channel.request(
        "__unsubscribe",
        { subscriptionId },
        { timeoutMs: timeoutFor(this.timeouts, "unsubscribe"), label: "unsubscribe" },
      );
    } catch (error) {
      this.logger.debug("unsubscribe failed", { subscriptionId, error: describeError(error) });
    }
  }

  private ensureStarted(): Promise<HostIncarnation> {
    if (this.closed) return Promise.reject(new BridgeError("CHANNEL_CLOSED", "The host connection is closed."));
    if (this.starting) return this.starting;
    const current = this.current;
    if (current?.alive) return current.ready.then(() => current);
    if (this.startsRefused) return Promise.reject(stoppingError());
    this.starting = this.start(current).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(previous: HostIncarnation | undefined): Promise<HostIncarnation> {
    if (previous) await previous.terminated; // one host per bridge process
    let assessment: Assessment;
    try {
      assessment = await this.options.resolveInstall();
    } catch (error) {
      if (error instanceof BridgeError) throw error;
      throw new BridgeError("UNSUPPORTED_ZCODE", `Cannot check the ZCode install: ${describeError(error)}`, { cause: error });
    }
    const install = requireSupported(assessment);
    if (this.closed) throw new BridgeError("CHANNEL_CLOSED", "The host connection is closed.");
    if (this.startsRefused) throw stoppingError();
    this.launches += 1;
    let host: HostIncarnation;
    try {
      host = new HostIncarnation({
        number: this.launches,
        install,
        env: this.options.env,
        logger: this.logger,
        timeouts: this.timeouts,
        frameLimitBytes: this.frameLimitBytes,
        ...(this.options.maxPendingDeliveries === undefined ? {} : { maxPendingDeliveries: this.options.maxPendingDeliveries }),
        ...(this.options.bootstrapScript === undefined ? {} : { bootstrapScript: this.options.bootstrapScript }),
      });
    } catch (error) {
      throw error instanceof BridgeError
        ? error
        : new BridgeError("HOST_START_FAILED", `Cannot start the ZCode host: ${describeError(error)}`, { cause: error });
    }
    this.current = host;
    void host.ended.then((error) => this.onHostEnded(host, error));
    await host.ready;
    return host;
  }

  private onHostEnded(host: HostIncarnation, error: BridgeError): void {
    this.largestFrameOfEnded = Math.max(this.largestFrameOfEnded, host.channel.largestInboundFrameBytes);
    this.logger.info("host incarnation ended", { incarnation: host.number, code: error.code });
    for (const listener of [...this.exitListeners]) {
      try {
        listener({ incarnation: host.number, error });
      } catch (hookError) {
        this.logger.error("host exit listener threw", { error: describeError(hookError) });
      }
    }
  }
}

function stoppingError(): BridgeError {
  return new BridgeError("HOST_START_FAILED", "zcode-acp is stopping: no ZCode host is started any more.");
}
