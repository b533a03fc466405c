/**
 * Why the ACP command should stop, collected from the first moment: SIGTERM / SIGINT / SIGHUP and a
 * failing stdout (the client went away, EPIPE). The connection registers its shutdown with
 * `onStop` once it exists; a request that came earlier is handed to it at once.
 *
 * A signal that arrives once a stop is under way (a second SIGTERM, a Ctrl-C after stdin closed)
 * ends the process at once (adr/0019): the `onForce` hook runs first, synchronously (it SIGKILLs
 * the host process, so nothing is left running), then the process exits with 128 + the signal's
 * number, as a shell reports a process a signal ended.
 *
 * The signal listeners are `on`, not `once`: while ours is registered, execa's signal-exit does
 * not re-raise the signal (which would kill the bridge before it stops the host gracefully).
 */
import { constants } from "node:os";
import type { Logger } from "../log/logger.js";
import { describeError } from "../util/errors.js";

/** signals that end the bridge gracefully (interactions denied, generation stopped, host stopped);
 * SIGHUP: the terminal or the client's session went away */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];

export interface StopRequestsOptions {
  /** how the process ends on a forced stop (tests replace it) */
  exit?: (code: number) => void;
}

/** the exit code of a process a signal ended: 128 + its number (SIGTERM → 143) */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

export class StopRequests {
  private reason: string | undefined;
  private handler: ((reason: string) => void) | undefined;
  private force: (() => void) | undefined;
  private wake!: (reason: string) => void;
  /** resolves with the first reason */
  readonly requested = new Promise<string>((resolve) => (this.wake = resolve));
  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.reason !== undefined) this.forceExit(signal);
    else this.request(signal);
  };
  private readonly onStdoutError = (error: Error): void => {
    this.logger.warn("stdout failed", { error: describeError(error) });
    this.request("stdout closed");
  };
  private readonly exit: (code: number) => void;

  constructor(
    private readonly logger: Logger,
    options: StopRequestsOptions = {},
  ) {
    this.exit = options.exit ?? ((code) => process.exit(code));
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

  /** `kill` runs synchronously right before a forced exit (it must not wait for anything) */
  onForce(kill: () => void): void {
    this.force = kill;
  }

  /** the signal listeners go; the stdout one stays (a late EPIPE must not crash the exit) */
  dispose(): void {
    for (const signal of STOP_SIGNALS) process.off(signal, this.onSignal);
  }

  private forceExit(signal: NodeJS.Signals): void {
    this.logger.warn("second stop request: exiting now", { signal, first: this.reason });
    try {
      this.force?.();
    } catch (error) {
      this.logger.error("could not end the host before exiting", { error: describeError(error) });
    }
    this.exit(signalExitCode(signal));
  }
}
