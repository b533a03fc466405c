// The bootstrap's end of the internal NDJSON channel (docs/runtime-contract.md §4): a dedicated pipe
// (an inherited file descriptor, fd 3 by default), never the process's stdout.
// Frames are bounded in both directions; the outbound buffer is bounded too.
import net from "node:net";

const NEWLINE = 0x0a;

export class FrameError extends Error {
  /** @param {"FRAME_TOO_LARGE" | "CHANNEL_PROTOCOL"} code */
  constructor(code, message) {
    super(message);
    this.name = "FrameError";
    this.code = code;
  }
}

/**
 * Open the channel on `fd`.
 * @param {{ fd: number, frameLimitBytes: number, maxBufferedBytes: number,
 *   onFrame: (value: unknown) => void, onFailure: (error: FrameError) => void, onClose: () => void }} options
 */
export function openNdjsonPipe(options) {
  const { frameLimitBytes, maxBufferedBytes } = options;
  const socket = new net.Socket({ fd: options.fd, readable: true, writable: true });
  let pending = [];
  let pendingBytes = 0;
  let dead = false;
  let closedNotified = false;

  const failInput = (error) => {
    if (dead) return;
    dead = true;
    pending = [];
    pendingBytes = 0;
    options.onFailure(error);
  };
  const notifyClosed = () => {
    if (closedNotified) return;
    closedNotified = true;
    options.onClose();
  };

  socket.on("data", (chunk) => {
    if (dead) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const part = chunk.subarray(start, nl);
      start = nl + 1;
      if (pendingBytes + part.length > frameLimitBytes) {
        failInput(new FrameError("FRAME_TOO_LARGE", `inbound frame exceeds the limit of ${frameLimitBytes} bytes`));
        return;
      }
      const line = pendingBytes === 0 ? part : Buffer.concat([...pending, part]);
      pending = [];
      pendingBytes = 0;
      const text = line.toString("utf8").replace(/\r$/, "");
      if (text.trim() === "") continue;
      let value;
      try {
        value = JSON.parse(text);
      } catch {
        failInput(new FrameError("CHANNEL_PROTOCOL", "inbound line is not valid JSON"));
        return;
      }
      options.onFrame(value);
      if (dead) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (pendingBytes + rest.length > frameLimitBytes) {
        failInput(new FrameError("FRAME_TOO_LARGE", `inbound frame exceeds the limit of ${frameLimitBytes} bytes`));
        return;
      }
      pending.push(Buffer.from(rest));
      pendingBytes += rest.length;
    }
  });
  socket.on("end", notifyClosed);
  socket.on("close", notifyClosed);
  // EPIPE / ECONNRESET: the bridge went away; treat like a close
  socket.on("error", notifyClosed);

  return {
    /**
     * Write one frame. Returns "ok", "too-large" (nothing written), "invalid" (not JSON) or
     * "overflow" (nothing written: the bridge is not reading and `force` was not set).
     */
    send(value, force = false) {
      if (socket.destroyed || !socket.writable) return "ok";
      let text;
      try {
        text = JSON.stringify(value);
      } catch {
        return "invalid";
      }
      if (typeof text !== "string") return "invalid";
      if (Buffer.byteLength(text, "utf8") > frameLimitBytes) return "too-large";
      if (!force && socket.writableLength > maxBufferedBytes) return "overflow";
      socket.write(`${text}\n`);
      return "ok";
    },
    /** Stop reading (after a protocol failure) without closing the write side. */
    stopReading() {
      dead = true;
      socket.pause();
    },
    /** Flush what is buffered, then close; `done` runs once (also after a bounded wait). */
    end(done, waitMs = 1000) {
      let called = false;
      const finish = () => {
        if (called) return;
        called = true;
        done();
      };
      const timer = setTimeout(finish, waitMs);
      timer.unref?.();
      if (socket.destroyed || !socket.writable) finish();
      else socket.end(finish);
    },
    get bufferedBytes() {
      return socket.writableLength;
    },
  };
}
