/**
 * Reader side of `sim:bench` (fixtures/sim/app/out/host/scenarios/bench.js): every text delta
 * starts with "@<k>:<emit ms>;". A chunk the bridge merged carries several stamps; each one
 * counts as one event that arrived when the chunk arrived. The tracker checks that the events
 * arrive complete and in order and records arrival − emit per event.
 */
const STAMP = /@(\d+):(\d+\.\d+);/g;

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export class StampTracker {
  /** arrival − emit (ms) of event k, in arrival order */
  readonly latencies: Float64Array;
  count = 0;
  bytes = 0;
  chunks = 0;
  firstArrival = Number.NaN;
  lastArrival = Number.NaN;
  /** first ordering problem seen (missing, duplicated or reordered event) */
  problem: string | undefined;
  private waiters: Array<() => void> = [];

  constructor(readonly expected: number) {
    this.latencies = new Float64Array(expected);
  }

  get complete(): boolean {
    return this.count >= this.expected;
  }

  /** One text chunk arrived now. */
  add(text: string, arrival = wallNow()): void {
    this.chunks += 1;
    this.bytes += text.length;
    if (this.count === 0 && Number.isNaN(this.firstArrival)) this.firstArrival = arrival;
    STAMP.lastIndex = 0;
    for (let match = STAMP.exec(text); match; match = STAMP.exec(text)) {
      const k = Number(match[1]);
      if (k !== this.count && this.problem === undefined) this.problem = `event ${k} arrived where ${this.count} was expected`;
      if (this.count < this.expected) this.latencies[this.count] = arrival - Number(match[2]);
      this.count += 1;
    }
    this.lastArrival = arrival;
    if (this.complete) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once every expected event arrived; rejects after `timeoutMs`. */
  whenComplete(timeoutMs: number): Promise<void> {
    if (this.complete) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.count} of ${this.expected} events arrived within ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
