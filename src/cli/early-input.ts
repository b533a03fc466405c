/**
 * stdin before and after the ACP SDK is loaded. The CLI reads the client's first line itself
 * (to answer `initialize` early, src/cli/early-initialize.ts) and later hands the SDK connection
 * a web stream that yields every byte read from stdin, in order, none lost or repeated:
 *
 *   1. `firstLine()` resolves at the first "\n" (or the end of input, an error, or a line longer
 *      than the limit); reading goes on into the buffer, up to the limit, then stdin is paused;
 *   2. `stream(hold)` yields the first line; when `hold` is given it yields the rest only once
 *      `hold` settles (the SDK has answered the replayed initialize: no later request can
 *      overtake it), then everything buffered, then stdin live, with backpressure.
 *
 * The input's "end" and "error" are listened to from the start and delivered in order after the
 * buffered bytes.
 */
import type { Readable } from "node:stream";

export interface FirstLine {
  /** the first line without its "\n"; undefined when none arrived (end, error, too long) */
  line: Uint8Array | undefined;
}

type Sink = {
  enqueue(chunk: Uint8Array): void;
  close(): void;
  error(error: unknown): void;
  desiredSize: number | null;
};

/** default limit of the first line: a real initialize request is a few hundred bytes */
export const FIRST_LINE_LIMIT = 1024 * 1024;

export class EarlyInput {
  private chunks: Buffer[] = [];
  private size = 0;
  /** bytes of chunks[] before the first "\n" has been searched (the scan resumes there) */
  private scanned = 0;
  private firstLineEnd = -1;
  private ended = false;
  private failure: { error: unknown } | undefined;
  private sink: Sink | undefined;
  private wakeFirstLine: (() => void) | undefined;
  private firstLinePromise: Promise<FirstLine> | undefined;
  private streamed = false;
  private watcher: ((line: Uint8Array) => boolean) | undefined;
  private watchOffset = 0;

  constructor(
    private readonly input: Readable,
    private readonly limit = FIRST_LINE_LIMIT,
  ) {
    input.on("data", (chunk: Buffer | string) => this.onData(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    input.on("end", () => this.onEnd());
    input.on("error", (error: unknown) => this.onError(error));
  }

  /** Resolves once the first line is complete or cannot come (end, error, limit). */
  firstLine(): Promise<FirstLine> {
    this.firstLinePromise ??= new Promise<void>((resolve) => {
      this.wakeFirstLine = resolve;
      this.checkFirstLine();
    }).then(() => {
      if (this.firstLineEnd < 0) return { line: undefined };
      const all = this.buffered();
      return { line: all.subarray(0, this.firstLineEnd) };
    });
    return this.firstLinePromise;
  }

  /**
   * Until the stream is handed over, show `onLine` every complete line after the first, in
   * order, as it arrives, until it returns true. (To see a session request coming.)
   */
  watch(onLine: (line: Uint8Array) => boolean): void {
    if (this.streamed || this.firstLineEnd < 0) return;
    this.watcher = onLine;
    this.watchOffset = this.firstLineEnd + 1;
    this.scanWatched();
  }

  /**
   * The web stream for the SDK: every byte read so far and everything after it. With `hold`,
   * only the first line (with its "\n") is yielded until `hold` settles.
   */
  stream(hold?: Promise<unknown>): ReadableStream<Uint8Array> {
    if (this.streamed) throw new Error("the input stream was already handed over");
    this.streamed = true;
    this.watcher = undefined;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          const all = this.buffered();
          this.chunks = [];
          this.size = 0;
          if (hold && this.firstLineEnd >= 0) {
            controller.enqueue(copy(all.subarray(0, this.firstLineEnd + 1)));
            const rest = all.subarray(this.firstLineEnd + 1);
            const release = (): void => this.goLive(controller, rest);
            hold.then(release, release);
          } else {
            this.goLive(controller, all);
          }
        },
        pull: () => {
          if (this.sink && !this.ended && !this.failure) this.input.resume();
        },
        cancel: () => {
          this.sink = undefined;
          this.input.destroy();
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
    );
  }

  private goLive(controller: ReadableStreamDefaultController<Uint8Array>, pending: Buffer): void {
    // bytes that arrived while held are in this.chunks, after `pending`
    const held = this.buffered();
    this.chunks = [];
    this.size = 0;
    this.sink = controller;
    try {
      if (pending.byteLength > 0) controller.enqueue(copy(pending));
      if (held.byteLength > 0) controller.enqueue(copy(held));
      if (this.failure) controller.error(this.failure.error);
      else if (this.ended) controller.close();
      else this.input.resume();
    } catch {
      // the stream was cancelled meanwhile
    }
  }

  private onData(chunk: Buffer): void {
    const sink = this.sink;
    if (sink) {
      try {
        sink.enqueue(chunk);
        if ((sink.desiredSize ?? 0) <= 0) this.input.pause();
      } catch {
        // cancelled
      }
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
    if (this.firstLineEnd < 0) this.checkFirstLine();
    else this.scanWatched();
    // while nobody reads (waiting for the SDK or a held hand-over), do not buffer without bound
    if (this.size > this.limit) this.input.pause();
  }

  private scanWatched(): void {
    if (!this.watcher) return;
    const all = this.buffered();
    let from = this.watchOffset;
    for (let nl = all.indexOf(0x0a, from); nl >= 0 && this.watcher; nl = all.indexOf(0x0a, from)) {
      const line = all.subarray(from, nl);
      from = nl + 1;
      if (this.watcher(line)) this.watcher = undefined;
    }
    this.watchOffset = from;
  }

  private onEnd(): void {
    this.ended = true;
    if (this.sink) {
      try {
        this.sink.close();
      } catch {
        // cancelled
      }
    } else this.wakeFirstLine?.();
  }

  private onError(error: unknown): void {
    this.failure = { error };
    if (this.sink) {
      try {
        this.sink.error(error);
      } catch {
        // cancelled
      }
    } else this.wakeFirstLine?.();
  }

  private checkFirstLine(): void {
    if (this.firstLineEnd < 0) {
      const all = this.buffered();
      const at = all.indexOf(0x0a, this.scanned);
      if (at >= 0) this.firstLineEnd = at;
      else this.scanned = all.byteLength;
    }
    if (this.firstLineEnd >= 0 || this.ended || this.failure || this.size > this.limit) this.wakeFirstLine?.();
  }

  /** all buffered bytes as one Buffer (and keeps them as one chunk) */
  private buffered(): Buffer {
    if (this.chunks.length === 1) return this.chunks[0]!;
    const all = Buffer.concat(this.chunks, this.size);
    this.chunks = all.byteLength > 0 ? [all] : [];
    return all;
  }
}

/** a fresh Uint8Array (never a view into a pooled Buffer the SDK might keep) */
function copy(bytes: Buffer): Uint8Array {
  return new Uint8Array(bytes);
}
