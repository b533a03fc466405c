/**
 * Why the ACP command should stop, collected from the first moment: SIGTERM / SIGINT / SIGHUP and a
 * failing stdout (the client went away, EPIPE). The connection registers its shutdown with
 * `onStop` once it exists; a request that came earlier is handed to it at once.
 *
 * The signal listeners are `on`, not `once`: while ours is registered, execa's signal-exit does
 * not re-raise the signal (which would kill the bridge before it stops the host gracefully).
 */
import type { Logger } from "../log/logger.js";
import { describeError } from "../util/errors.js";

/** signals that end the bridge gracefully (interactions denied, generation stopped, host stopped);
 * SIGHUP: the terminal or the client's session went away */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];

export class StopRequests {
  private reason: string | undefined;
  private handler: ((reason: string) => void) | undefined;
  private wake!: (reason: string) => void;
  /** resolves with the first reason */
  readonly requested = new Promise<string>((resolve) => (this.wake = resolve));
  private readonly onSignal = (signal: NodeJS.Signals): void => this.request(signal);
  private readonly onStdoutError = (error: Error): void => {
    this.logger.warn("stdout failed", { error: describeError(error) });
    this.request("stdout closed");
  };

  constructor(private readonly logger: Logger) {
    for (const signal of STOP_SIGNALS) process.on(signal, this.onSignal);
    process.stdout.on("error", this.onStdoutError);
  }

  request(reason: string): void {
    if (this.reason === undefined) {
      this.reason = reason;
      this.wake(reason);
    }
    this.handler?.(reason);
  }

  /** `stop` runs for every request from now on, and at once for an earlier one */
  onStop(stop: (reason: string) => void): void {
    this.handler = stop;
    if (this.reason !== undefined) stop(this.reason);
  }

  /** the signal listeners go; the stdout one stays (a late EPIPE must not crash the exit) */
  dispose(): void {
    for (const signal of STOP_SIGNALS) process.off(signal, this.onSignal);
  }
}
