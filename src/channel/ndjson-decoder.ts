/**
 * Incremental NDJSON decoder: bytes in, parsed JSON values out, one per line.
 *
 * - A frame is the bytes of one line, without its "\n" (a trailing "\r" is tolerated).
 * - A frame longer than `limitBytes` fails as soon as it is known to be too long (the decoder
 *   does not wait for the newline, so a peer cannot make it buffer more than the limit).
 * - Malformed JSON and bytes that are not valid UTF-8 fail with CHANNEL_PROTOCOL (nothing is
 *   replaced or guessed). Blank lines are skipped.
 * - After a failure the decoder is dead: every later push throws the same error.
 */
import { isUtf8 } from "node:buffer";
import { BridgeError } from "../util/errors.js";
import { DEFAULT_FRAME_LIMIT_BYTES } from "./limits.js";

const NEWLINE = 0x0a;

export class NdjsonDecoder {
  readonly limitBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private failure: BridgeError | undefined;

  constructor(limitBytes: number = DEFAULT_FRAME_LIMIT_BYTES) {
    if (!Number.isInteger(limitBytes) || limitBytes <= 0) throw new RangeError(`invalid frame limit ${limitBytes}`);
    this.limitBytes = limitBytes;
  }

  /** the largest frame decoded so far, in bytes (diagnostics: no frame may grow with a session's history) */
  largestFrameBytes = 0;

  /** bytes buffered for the current, incomplete frame */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /** Decode every complete frame in `chunk`. Throws BridgeError (FRAME_TOO_LARGE, CHANNEL_PROTOCOL). */
  push(chunk: Buffer | Uint8Array): unknown[] {
    if (this.failure) throw this.failure;
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const values: unknown[] = [];
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const part = bytes.subarray(start, nl);
      this.checkLength(this.pendingBytes + part.length);
      const line = this.pendingBytes === 0 ? part : Buffer.concat([...this.pending, part], this.pendingBytes + part.length);
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
      if (line.length > this.largestFrameBytes) this.largestFrameBytes = line.length;
      const value = this.parse(line);
      if (value !== SKIP) values.push(value);
    }
    if (start < bytes.length) {
      const rest = bytes.subarray(start);
      this.checkLength(this.pendingBytes + rest.length);
      // copy: the caller may reuse its chunk buffer
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
    return values;
  }

  /** The input ended. Throws CHANNEL_PROTOCOL when a partial frame is left over. */
  end(): void {
    if (this.failure) throw this.failure;
    if (this.pendingBytes > 0) {
      const bytes = this.pendingBytes;
      this.pending = [];
      this.pendingBytes = 0;
      this.fail(new BridgeError("CHANNEL_PROTOCOL", `internal channel ended inside a frame (${bytes} bytes without a newline)`));
    }
  }

  private checkLength(length: number): void {
    if (length > this.limitBytes) {
      this.pending = [];
      this.pendingBytes = 0;
      this.fail(
        new BridgeError("FRAME_TOO_LARGE", `internal channel frame exceeds the limit of ${this.limitBytes} bytes`, {
          details: { limitBytes: this.limitBytes, atLeastBytes: length },
        }),
      );
    }
  }

  private parse(line: Buffer): unknown {
    let end = line.length;
    if (end > 0 && line[end - 1] === 0x0d) end -= 1;
    if (!isUtf8(line.subarray(0, end))) {
      this.fail(
        new BridgeError("CHANNEL_PROTOCOL", "internal channel received a line that is not valid UTF-8", { details: { frameBytes: end } }),
      );
    }
    const text = line.toString("utf8", 0, end);
    if (text.trim() === "") return SKIP;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      this.fail(
        new BridgeError("CHANNEL_PROTOCOL", "internal channel received a line that is not valid JSON", {
          cause: error,
          details: { frameBytes: end },
        }),
      );
    }
  }

  private fail(error: BridgeError): never {
    this.failure = error;
    throw error;
  }
}

const SKIP: unique symbol = Symbol("skip");
