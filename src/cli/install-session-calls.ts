/**
 * What the install's host offers of session management (src/native/session-calls.ts), for
 * `initialize` to advertise: read from the first install assessment of the `acp` command (the
 * warm-up's, adr/0013; never a launch). `initialize` waits for that assessment, at most
 * SESSION_CALLS_WAIT_MS; an install that cannot be assessed (none, unsupported, slower than that)
 * offers nothing, so nothing is advertised that could not be served.
 */
import type { Assessment } from "../compat/types.js";
import { NO_SESSION_CALLS, sessionCallsOf, type SessionCalls } from "../native/session-calls.js";

/**
 * how long `initialize` waits for the warm-up assessment: one from the fingerprint cache takes
 * ~10 ms, a first one (child processes, hashing) about a second on an idle machine; well inside
 * the 10 s a registry launch check gives `initialize`
 */
export const SESSION_CALLS_WAIT_MS = 8_000;

export class InstallSessionCalls {
  private observed: SessionCalls | undefined;
  private decided: Promise<SessionCalls> | undefined;

  constructor(
    private readonly waitMs: number = SESSION_CALLS_WAIT_MS,
    /** told when the wait ended before the assessment (nothing advertised then) */
    private readonly onTimeout: () => void = () => undefined,
  ) {}

  /** Record an assessment; the first one decides (a later launch's assessment does not change what was advertised). */
  observe(assessment: Assessment): void {
    this.observed ??= assessment.supported ? sessionCallsOf(assessment.manifest?.protocol.allowlist.agent) : NO_SESSION_CALLS;
  }

  /** What to advertise, once `prepare` (the warm-up: module load and assessment, never rejecting) is done or the wait is over. */
  get(prepare: () => Promise<void>): Promise<SessionCalls> {
    this.decided ??= new Promise<SessionCalls>((resolve) => {
      const decide = (): void => resolve(this.observed ?? NO_SESSION_CALLS);
      const timer = setTimeout(() => {
        if (this.observed === undefined) this.onTimeout();
        decide();
      }, this.waitMs);
      timer.unref();
      void prepare().then(
        () => {
          clearTimeout(timer);
          decide();
        },
        () => {
          clearTimeout(timer);
          decide();
        },
      );
    });
    return this.decided;
  }
}
