/**
 * The one "wait until" of the tests: re-checks an observable condition until it holds, within a
 * bound, and fails with what it waited for. Not a sleep: it returns at the first check that
 * holds. Waits that can hook an event (a new ACP line, a host event) use the client's own
 * `waitFor` instead of polling.
 */

export interface UntilOptions {
  /** what is awaited, named in the failure message ("the exit notification"); default "the condition" */
  what?: string;
  /** give up after this many ms (default 5000) */
  timeoutMs?: number;
  /**
   * give up after this many checks instead of a time: for in-process waits that need only turns
   * of the event loop, so the bound does not depend on the clock
   */
  checks?: number;
  /**
   * between two checks: 0 (the default) waits for the next turn of the event loop (for state in
   * this process); more waits this many ms (for facts outside it: files, processes, a call log)
   */
  intervalMs?: number;
}

/** the values `until` treats as "holds" */
export type Truthy<T> = Exclude<T, false | 0 | "" | null | undefined>;

/**
 * Resolves with the first truthy value of `check` (which may be async: it is awaited before the
 * next check); rejects after the bound.
 */
export async function until<T>(check: () => T | PromiseLike<T>, options: UntilOptions = {}): Promise<Truthy<T>> {
  const { what = "the condition", timeoutMs = 5000, checks, intervalMs = 0 } = options;
  const deadline = Date.now() + timeoutMs;
  for (let done = 1; ; done += 1) {
    const result = check();
    // a synchronous check is not awaited: a wait that holds at once costs no extra microtask
    const value = isPromiseLike(result) ? await result : result;
    if (value) return value as Truthy<T>;
    if (checks !== undefined ? done >= checks : Date.now() > deadline) {
      throw new Error(`timed out after ${checks !== undefined ? `${checks} checks` : `${timeoutMs} ms`} waiting for ${what}`);
    }
    await new Promise<void>((resolve) => (intervalMs > 0 ? setTimeout(resolve, intervalMs) : setImmediate(resolve)));
  }
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
