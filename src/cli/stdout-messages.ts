/**
 * The outgoing half of the ACP stdio transport: every JSON-RPC message the SDK
 * connection writes is serialised and handed to stdout in one string write — the same bytes as
 * the SDK's `ndJsonStream` (`JSON.stringify(message) + "\n"`).
 *
 * Why not `ndJsonStream`'s writer: the SDK connection takes a writer from its stream for every
 * message (`getWriter()` … `releaseLock()`), and `ndJsonStream` does the same once more on the
 * byte stream, with a TextEncoder copy in between. A web-stream writer costs several promises,
 * and each `releaseLock()` rejects two of them with fresh TypeErrors (stack traces included):
 * about 4 KB of garbage per notification, which set the pace of the garbage collector and made
 * its pauses the bridge's latency tail at a thousand notifications a second.
 *
 * So `getWriter()` of this stream hands out one long-lived writer that implements the writer
 * interface directly on stdout. Its writes are serialised by the caller (the SDK connection queues
 * them) and it does not lock the stream. Backpressure is kept: when stdout's buffer is full, a
 * write (and `ready`) settles on `drain`, or fails if stdout closes or errs first, so the SDK's
 * write queue, and with it the session's update queue, waits for a slow client. The incoming half
 * is src/acp/incoming-messages.ts.
 */
import type { Writable } from "node:stream";
import type { AnyMessage } from "@agentclientprotocol/sdk";

const DONE: Promise<undefined> = Promise.resolve(undefined);

export interface StdoutMessageOptions {
  /** sees every message first; returning true keeps it off stdout (the replayed initialize's answer) */
  intercept?: (message: AnyMessage) => boolean;
  /** sees every message right before it is written (the wire-order tracker); what it returns is written instead */
  observe?: (message: AnyMessage) => AnyMessage | undefined;
  /** told of each response (a message with an id and no method) once stdout has flushed it */
  responseWritten?: (message: AnyMessage) => void;
}

/** Write one message; undefined when stdout took it, else a promise settled on drain / close / error. */
function writeMessage(out: Writable, message: AnyMessage, options: StdoutMessageOptions): Promise<undefined> | undefined {
  if (options.intercept?.(message)) return undefined;
  const written = options.observe?.(message) ?? message;
  if (out.destroyed || !out.writable) throw new Error("stdout is closed");
  const report = options.responseWritten;
  const line = `${JSON.stringify(written)}\n`;
  const flushed = report !== undefined && "id" in written && !("method" in written) ? () => report(written) : undefined;
  if (flushed ? out.write(line, (error) => error || flushed()) : out.write(line)) return undefined;
  return new Promise<undefined>((resolve, reject) => {
    const settle = (error?: Error): void => {
      out.off("drain", onDrain);
      out.off("close", onClose);
      out.off("error", onError);
      if (error) reject(error);
      else resolve(undefined);
    };
    const onDrain = (): void => settle();
    const onClose = (): void => settle(new Error("stdout closed"));
    const onError = (error: Error): void => settle(error);
    out.on("drain", onDrain);
    out.on("close", onClose);
    out.on("error", onError);
  });
}

/** A writer on stdout with the WritableStreamDefaultWriter interface, shared by every getWriter(). */
function stdoutWriter(out: Writable, options: StdoutMessageOptions): WritableStreamDefaultWriter<AnyMessage> {
  let pending: Promise<undefined> | undefined;
  let closing: Promise<undefined> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<undefined>((resolve) => (resolveClosed = () => resolve(undefined)));
  const writer = {
    get closed(): Promise<undefined> {
      return closed;
    },
    get desiredSize(): number | null {
      return out.destroyed ? null : Math.max(0, out.writableHighWaterMark - out.writableLength);
    },
    get ready(): Promise<undefined> {
      return pending ?? DONE;
    },
    write(message: AnyMessage): Promise<undefined> {
      if (closing) return Promise.reject(new TypeError("the stdout message stream is closed"));
      let waiting: Promise<undefined> | undefined;
      try {
        waiting = writeMessage(out, message, options);
      } catch (error) {
        return Promise.reject(error);
      }
      if (!waiting) return DONE;
      const current = waiting.finally(() => {
        if (pending === current) pending = undefined;
      });
      pending = current;
      return current;
    },
    close(): Promise<undefined> {
      closing ??= (pending ?? DONE).then(() => {
        resolveClosed();
        return undefined;
      });
      return closing;
    },
    abort(): Promise<undefined> {
      closing ??= DONE;
      resolveClosed();
      return DONE;
    },
    releaseLock(): void {
      // nothing is locked: the one writer is shared and the caller serialises its writes
    },
  };
  return writer;
}

/** The WritableStream of outgoing ACP messages for the SDK connection, on `out` (stdout). */
export class StdoutMessageStream extends WritableStream<AnyMessage> {
  private readonly writer: WritableStreamDefaultWriter<AnyMessage>;

  constructor(out: Writable, options: StdoutMessageOptions = {}) {
    // the underlying sink serves the standard paths (pipeTo, a locked writer of the base class)
    super({ write: (message) => writeMessage(out, message, options) });
    this.writer = stdoutWriter(out, options);
  }

  override getWriter(): WritableStreamDefaultWriter<AnyMessage> {
    return this.writer;
  }
}

/** `options.observe` sees every message right before it is written (the wire-order tracker). */
export function stdoutMessages(out: Writable, options: StdoutMessageOptions = {}): WritableStream<AnyMessage> {
  return new StdoutMessageStream(out, options);
}
