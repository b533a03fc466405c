/**
 * The lifecycle of one ACP session (adr/0017): its state, and the one queue through which every
 * operation that changes it passes, one at a time (open, replay, the start of a prompt with its
 * resync, mode and option changes, close, release).
 *
 *     opening ──→ attached ⇄ resyncing          (a resync that fails leaves `detached`)
 *        │          │  ↑ ↓        │
 *        │          │ detached ←──┘              (the subscription ended; the next operation resyncs)
 *        └──────────┴────┴───────→ closing ──→ closed
 *
 * Closing is not queued behind the running operation: `close` refuses new operations at once and
 * aborts the running one's signal (its waits end, its next step does nothing), then runs the
 * close work after it. Cancel is not an operation: it acts on the turn at once.
 */
import { BridgeError } from "../util/errors.js";

export type LifecycleState = "opening" | "attached" | "detached" | "resyncing" | "closing" | "closed";

const TRANSITIONS: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  opening: ["attached", "detached", "closing"],
  attached: ["resyncing", "detached", "closing"],
  detached: ["resyncing", "closing"],
  resyncing: ["attached", "detached", "closing"],
  closing: ["closed"],
  closed: [],
};

/**
 * How many operations may be queued or running on one session. Prompts and steering texts are
 * bounded before (zcode-inputs.ts, 8 waiting); this bounds the rest (mode and option changes,
 * loads) of a client that sends them faster than ZCode answers.
 */
export const MAX_PENDING_OPERATIONS = 32;

/** a monotonic use counter: the least recently used session has the smallest stamp */
let useCounter = 0;

export class SessionLifecycle {
  private current: LifecycleState = "opening";
  /** the end of the queue: the next operation starts when it settles */
  private tail: Promise<void> = Promise.resolve();
  /** operations queued or running */
  private pending = 0;
  private readonly closer = new AbortController();
  private closing: Promise<void> | undefined;
  /** when the session was last used by the client (larger is more recent) */
  lastUsed = ++useCounter;

  constructor(private readonly sessionId: string) {}

  get state(): LifecycleState {
    return this.current;
  }

  /** an operation is queued or running */
  get busy(): boolean {
    return this.pending > 0;
  }

  /** closing or closed: no operation starts any more */
  get ended(): boolean {
    return this.current === "closing" || this.current === "closed";
  }

  /** aborted when the session starts closing */
  get signal(): AbortSignal {
    return this.closer.signal;
  }

  touch(): void {
    this.lastUsed = ++useCounter;
  }

  /** Move to `next`; a move the diagram does not have is a bug (INTERNAL). */
  to(next: LifecycleState): void {
    if (this.current === next) return;
    if (!TRANSITIONS[this.current].includes(next)) {
      throw new BridgeError("INTERNAL", `session ${this.sessionId}: no lifecycle transition ${this.current} → ${next}`);
    }
    this.current = next;
  }

  /** The error of an operation asked for (or still queued) once the session is closing. */
  closedError(): BridgeError {
    return new BridgeError("SESSION_NOT_FOUND", `Session ${this.sessionId} is closed.`, { details: { sessionId: this.sessionId } });
  }

  /**
   * Run `op` after every operation queued before it. Refused at once (and when its turn comes)
   * once closing, and at once with SESSION_BUSY when `MAX_PENDING_OPERATIONS` are queued.
   */
  run<T>(op: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.ended) return Promise.reject(this.closedError());
    if (this.pending >= MAX_PENDING_OPERATIONS) {
      return Promise.reject(
        new BridgeError(
          "SESSION_BUSY",
          `Session ${this.sessionId} already has ${MAX_PENDING_OPERATIONS} requests waiting for their turn. ` +
            "Wait for them to be answered (or cancel the running prompt), then send this again.",
          { details: { sessionId: this.sessionId, pending: this.pending, limit: MAX_PENDING_OPERATIONS } },
        ),
      );
    }
    this.pending++;
    const result = this.tail.then(() => {
      if (this.ended) throw this.closedError();
      return op(this.closer.signal);
    });
    this.tail = result.then(
      () => void this.pending--,
      () => void this.pending--,
    );
    return result;
  }

  /**
   * Start closing (idempotent): refuse new operations, abort the running one, and run `work` once
   * every operation queued before has settled. Resolves when the session is closed.
   */
  close(work: () => Promise<void>): Promise<void> {
    if (this.closing) return this.closing;
    this.to("closing");
    this.closer.abort(this.closedError());
    this.closing = this.tail.then(work).finally(() => this.to("closed"));
    return this.closing;
  }
}

/** Resolves after `ms`, or at once when any of `signals` aborts. */
export function abortableDelay(ms: number, signals: readonly AbortSignal[], onWake?: (wake: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const cleanups: Array<() => void> = [];
    const done = (): void => {
      for (const cleanup of cleanups) cleanup();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    cleanups.push(() => clearTimeout(timer));
    for (const signal of signals) {
      if (signal.aborted) {
        queueMicrotask(done);
        continue;
      }
      signal.addEventListener("abort", done, { once: true });
      cleanups.push(() => signal.removeEventListener("abort", done));
    }
    if (onWake) cleanups.push(onWake(done));
  });
}
