/**
 * One launch of the host: the process, its channel, readiness and its end.
 *
 * Every incarnation ends exactly once (`ended` resolves with the typed error that describes
 * why): a host-exit frame from the bootstrap, the process exiting, the channel failing closed,
 * a start-up failure or timeout, or stop(). At that moment every pending call is rejected and
 * every subscription ended with that error; the process is then stopped (if still running)
 * with the bounded escalation channel close → wait → SIGTERM → wait → SIGKILL, and
 * `terminated` resolves once it is gone.
 */
import { ChannelConnection, type ChannelCloseInfo } from "../channel/connection.js";
import type { Logger } from "../log/logger.js";
import { BridgeError } from "../util/errors.js";
import { launchHost, type HostProcessExit, type LaunchedHost, type SupportedInstall } from "./launcher.js";
import { timeoutFor, type TimeoutTable } from "./timeouts.js";

/** an abandoned start: each step of the escalation (channel close → SIGTERM → SIGKILL) waits at most this */
export const ABANDON_STEP_MS = 400;

export interface IncarnationOptions {
  number: number;
  install: SupportedInstall;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  timeouts: TimeoutTable;
  frameLimitBytes: number;
  maxPendingDeliveries?: number;
  bootstrapScript?: string;
}

export class HostIncarnation {
  readonly number: number;
  readonly install: SupportedInstall;
  readonly channel: ChannelConnection;
  /** resolves when the host reported ready; rejects with HOST_START_FAILED (or the end error) */
  readonly ready: Promise<void>;
  /** resolves once, with the error that ended this incarnation */
  readonly ended: Promise<BridgeError>;
  /** resolves once the process is gone */
  readonly terminated: Promise<void>;
  private readonly host: LaunchedHost;
  private readonly logger: Logger;
  private readonly timeouts: TimeoutTable;
  private endError: BridgeError | undefined;
  private isReady = false;
  private resolveReady!: () => void;
  private rejectReady!: (error: BridgeError) => void;
  private resolveEnded!: (error: BridgeError) => void;
  private startupTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  /** the start was abandoned: the escalation does not wait the graceful budgets */
  private abandoned = false;
  private resolveTerminated!: () => void;

  constructor(options: IncarnationOptions) {
    this.number = options.number;
    this.install = options.install;
    this.logger = options.logger.child(`host#${options.number}`);
    this.timeouts = options.timeouts;
    this.ready = new Promise<void>((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => undefined);
    this.ended = new Promise<BridgeError>((resolve) => (this.resolveEnded = resolve));
    this.host = launchHost({
      install: options.install,
      env: options.env,
      logger: this.logger,
      frameLimitBytes: options.frameLimitBytes,
      disposeTimeoutMs: timeoutFor(this.timeouts, "dispose"),
      ...(options.bootstrapScript === undefined ? {} : { bootstrapScript: options.bootstrapScript }),
    });
    this.channel = new ChannelConnection({
      input: this.host.channel,
      output: this.host.channel,
      logger: this.logger,
      frameLimitBytes: options.frameLimitBytes,
      ...(options.maxPendingDeliveries === undefined ? {} : { maxPendingDeliveries: options.maxPendingDeliveries }),
      peerEndError: () =>
        this.endError ??
        new BridgeError(
          "HOST_EXITED",
          "The ZCode host process closed its channel (it exited or crashed). The next request starts a new host.",
          {
            details: { incarnation: this.number },
          },
        ),
      onNotification: (method, params) => (method === "ready" ? this.onReady() : this.onHostExitFrame(params)),
      onClose: (info) => this.onChannelClose(info),
    });
    this.terminated = new Promise<void>((resolve) => (this.resolveTerminated = resolve));
    void this.host.exited.then(() => {
      this.host.releaseStreams();
      this.resolveTerminated();
    });
    void this.host.exited.then((exit) => this.onProcessExit(exit));
    this.startupTimer = setTimeout(
      () => {
        const ms = timeoutFor(this.timeouts, "startup");
        this.end(
          new BridgeError("HOST_START_FAILED", `The ZCode host did not become ready within ${ms} ms.`, {
            details: { incarnation: this.number, timeoutMs: ms },
          }),
        );
      },
      timeoutFor(this.timeouts, "startup"),
    );
  }

  get pid(): number | undefined {
    return this.host.pid;
  }

  get alive(): boolean {
    return this.endError === undefined;
  }

  /** true once the host reported ready */
  get started(): boolean {
    return this.isReady;
  }

  /**
   * Give up a start that has not reached ready (the bridge is stopping): end with `reason` and
   * escalate without the graceful budgets — nothing was served yet, so there is nothing to
   * dispose cleanly. Resolves once the process is gone (about 1 s at worst). A host that is
   * ready already is stopped gracefully instead.
   */
  abandon(reason: BridgeError): Promise<void> {
    if (!this.isReady && this.endError === undefined) this.abandoned = true;
    return this.stop(reason);
  }

  /** SIGKILL now, synchronously (the bridge exits at once on a second stop signal). */
  killNow(): void {
    this.host.kill("SIGKILL");
  }

  /** Graceful stop (idempotent): end with `reason`, then the bounded escalation. */
  stop(reason?: BridgeError): Promise<void> {
    this.end(reason ?? new BridgeError("HOST_EXITED", "The ZCode host was stopped.", { details: { incarnation: this.number } }));
    return this.terminated;
  }

  private onReady(): void {
    if (this.endError || this.isReady) return;
    this.isReady = true;
    clearTimeout(this.startupTimer);
    this.logger.info("ZCode host ready", { pid: this.host.pid });
    this.resolveReady();
  }

  private onHostExitFrame(params: Record<string, unknown>): void {
    this.end(this.errorFromExitFrame(params));
  }

  private errorFromExitFrame(params: Record<string, unknown>): BridgeError {
    const details: Record<string, string | number> = { incarnation: this.number };
    for (const key of ["reason", "exitCode", "failedPhase", "errorCode"] as const) {
      const value = params[key];
      if (typeof value === "string" || typeof value === "number") details[key] = value;
    }
    const error = params.error;
    const inner = typeof error === "object" && error !== null ? (error as Record<string, unknown>) : {};
    const innerMessage = typeof inner.message === "string" ? inner.message.slice(0, 500) : undefined;
    if (innerMessage !== undefined) details.error = innerMessage;
    switch (params.reason) {
      case "startup-failed":
        return new BridgeError(
          "HOST_START_FAILED",
          `The ZCode host failed to start (phase ${String(details.failedPhase ?? "unknown")}, code ${String(details.errorCode ?? "unknown")}).`,
          { details },
        );
      case "integrity":
        return new BridgeError(
          "UNSUPPORTED_ZCODE",
          `The ZCode host files changed after zcode-acp verified them (${innerMessage ?? "SHA-256 mismatch"}); ` +
            `nothing was started. Run \`zcode-acp check\`; reinstall ZCode if it fails.`,
          { details },
        );
      case "rpc-wiring":
        return new BridgeError("HOST_START_FAILED", `Cannot connect to the ZCode host's services: ${innerMessage ?? "unknown reason"}.`, {
          details,
        });
      case "protocol": {
        const code = inner.code === "FRAME_TOO_LARGE" ? "FRAME_TOO_LARGE" : "CHANNEL_PROTOCOL";
        return new BridgeError(code, `The host runtime refused a frame from the bridge: ${innerMessage ?? "protocol error"}.`, { details });
      }
      default:
        return this.exitedError(details, innerMessage);
    }
  }

  private exitedError(details: Record<string, string | number>, cause?: string): BridgeError {
    const what =
      cause !== undefined
        ? `crashed (${cause})`
        : details.exitCode !== undefined
          ? `exited with code ${String(details.exitCode)}`
          : "exited";
    const code = this.isReady ? "HOST_EXITED" : "HOST_START_FAILED";
    const next = this.isReady ? " The next request starts a new host." : "";
    return new BridgeError(code, `The ZCode host ${what}.${next}`, { details });
  }

  private onProcessExit(exit: HostProcessExit): void {
    if (this.endError) return;
    const details: Record<string, string | number> = { incarnation: this.number, reason: "process-exit" };
    if (exit.exitCode !== undefined) details.exitCode = exit.exitCode;
    if (exit.signal !== undefined) details.signal = exit.signal;
    if (exit.spawnError !== undefined) {
      this.end(new BridgeError("HOST_START_FAILED", `Cannot start the ZCode executable: ${exit.spawnError}`, { details }));
      return;
    }
    this.end(this.exitedError(details, exit.signal === undefined ? undefined : `signal ${exit.signal}`));
  }

  private onChannelClose(info: ChannelCloseInfo): void {
    if (info.byOwner) return;
    // peer end or fail-closed: the channel already rejected everything with info.error
    this.end(this.isReady ? info.error : this.startError(info.error));
  }

  private startError(error: BridgeError): BridgeError {
    if (error.code === "HOST_START_FAILED") return error;
    return new BridgeError("HOST_START_FAILED", `The ZCode host failed during start-up: ${error.message}`, {
      cause: error,
      details: { incarnation: this.number, code: error.code },
    });
  }

  /** The single end of this incarnation. */
  private end(error: BridgeError): void {
    if (this.endError) return;
    this.endError = error;
    clearTimeout(this.startupTimer);
    this.logger.info("ZCode host incarnation ended", { code: error.code, reason: error.message });
    if (!this.isReady)
      this.rejectReady(error.code === "HOST_START_FAILED" || error.code === "UNSUPPORTED_ZCODE" ? error : this.startError(error));
    this.channel.close(error);
    this.resolveEnded(error);
    void this.escalate();
  }

  /** channel closed already → wait → SIGTERM → wait → SIGKILL → wait. */
  private escalate(): Promise<void> {
    this.stopping ??= (async () => {
      const step = (key: "stopGrace" | "killGrace"): number =>
        this.abandoned ? Math.min(ABANDON_STEP_MS, timeoutFor(this.timeouts, key)) : timeoutFor(this.timeouts, key);
      if (await this.exitWithin(step("stopGrace"))) return;
      this.logger[this.abandoned ? "info" : "warn"]("the host did not exit after its channel closed; sending SIGTERM", {
        pid: this.host.pid,
      });
      this.host.kill("SIGTERM");
      if (await this.exitWithin(step("killGrace"))) return;
      this.logger.warn("the host ignored SIGTERM; sending SIGKILL", { pid: this.host.pid });
      this.host.kill("SIGKILL");
      if (await this.exitWithin(timeoutFor(this.timeouts, "killGrace"))) return;
      this.logger.error("the host process survived SIGKILL; giving up on it", { pid: this.host.pid });
      this.host.releaseStreams();
      this.resolveTerminated();
    })();
    return this.stopping;
  }

  private async exitWithin(ms: number): Promise<boolean> {
    if (this.host.hasExited()) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const exited = this.host.exited.then(() => true as const);
    const result = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    return result;
  }
}
