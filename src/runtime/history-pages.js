// Paged history for session/load (docs/history.md, adr/0018). The host's legacy reads cannot return
// an older page in bounded size, so the bootstrap makes the host's one full read, holds the
// messages here for the duration of the load and hands them to the bridge in bounded pieces:
//   hold(messages)      → {historyId, total}          (the `history-pages` projection of the read)
//   piece(historyId)    → {messages, done}            (`__history {op:"next", historyId}`)
//   release(historyId)  → null                         (`__history {op:"close", historyId}`)
// Each message is reduced first (bounds.js, messageLimits); a piece holds at most
// MAX_PIECE_MESSAGES messages and at most `pieceBytes` of JSON. A held history is released after
// its last piece, on close, after IDLE_MS without a request, after LIFETIME_MS in all, and when the
// bridge's channel closes (disposeAll). At most MAX_HELD histories are held at once.
//
// A read takes a slot BEFORE the host's full read (`reserve`, from the dispatcher): held histories
// and reads in progress together never exceed MAX_HELD. A fifth concurrent load waits for a slot
// (first come, first served) for at most SLOT_WAIT_MS, then is refused with CHANNEL_OVERFLOW and
// `data: {retryable: true, limit, waitedMs}` before anything was read. The slot of a read turns
// into its held history (`slot.hold`) or is given back when the read fails (`slot.cancel`).
import { boundValue, messageLimits, omittedMarker } from "./bounds.js";

const MAX_HELD = 4;
/** how long a read waits for a slot; well within the bridge's readHistory timeout (120 s) */
const SLOT_WAIT_MS = 30_000;
const MAX_PIECE_MESSAGES = 200;
const IDLE_MS = 60_000;
const LIFETIME_MS = 10 * 60_000;
const HISTORY_ID = /^h[0-9]{1,15}$/;
/** a `data:` URL longer than this is replaced (an inlined image of several MB is not replayed) */
const MAX_DATA_URL_BYTES = 4096;

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A coded error the dispatcher answers as it is. */
export class HistoryError extends Error {
  /** @param {string} code @param {string} message @param {Record<string, unknown>} [data] */
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** One message as the bridge may replay it: no system prompt, no inlined images, every field bounded. */
export function reduceMessage(message, limits) {
  if (!isRecord(message)) return message;
  let value = message;
  if (isRecord(message.info) && message.info.system !== undefined) {
    const { system: _system, ...info } = message.info;
    value = { ...value, info };
  }
  if (Array.isArray(message.parts)) {
    const parts = message.parts.map((part) => {
      if (!isRecord(part) || part.type !== "file" || typeof part.url !== "string") return part;
      if (!part.url.startsWith("data:") || part.url.length <= MAX_DATA_URL_BYTES) return part;
      return { ...part, url: "data:,", omitted: omittedMarker(part.url.length).trim() };
    });
    value = { ...value, parts };
  }
  return boundValue(value, limits).value;
}

/** @param {{ frameLimitBytes: number }} options */
export function createHistoryPages(options) {
  const limits = messageLimits(options.frameLimitBytes);
  const pieceBytes = Math.max(64 * 1024, Math.min(1024 * 1024, Math.floor(options.frameLimitBytes / 4)));
  const held = new Map(); // historyId → { messages, index, idle, lifetime }
  let reserved = 0; // reads in progress that hold a slot
  const waiters = []; // { grant(slot), timer } in arrival order
  let nextNumber = 1;

  const release = (historyId) => {
    const entry = held.get(historyId);
    if (!entry) return false;
    held.delete(historyId);
    clearTimeout(entry.idle);
    clearTimeout(entry.lifetime);
    entry.messages = [];
    grantWaiting();
    return true;
  };

  /** A reserved slot: `hold` turns it into a held history, `cancel` gives it back (each once). */
  const newSlot = () => {
    let open = true;
    const close = () => {
      if (!open) return false;
      open = false;
      reserved -= 1;
      return true;
    };
    return {
      hold(messages) {
        if (!Array.isArray(messages)) {
          if (close()) grantWaiting();
          throw new Error("the history is not a list of messages");
        }
        if (!close()) throw new Error("this history slot was already used");
        return holdEntry(messages);
      },
      cancel() {
        if (close()) grantWaiting();
      },
    };
  };

  function grantWaiting() {
    while (waiters.length > 0 && held.size + reserved < MAX_HELD) {
      const waiter = waiters.shift();
      clearTimeout(waiter.timer);
      reserved += 1;
      waiter.grant(newSlot());
    }
  }

  const armIdle = (historyId, entry) => {
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => release(historyId), IDLE_MS);
    entry.idle.unref?.();
  };

  const entryOf = (historyId) => {
    if (typeof historyId !== "string" || !HISTORY_ID.test(historyId)) {
      throw new HistoryError("CHANNEL_PROTOCOL", "invalid historyId");
    }
    const entry = held.get(historyId);
    if (!entry) {
      throw new HistoryError(
        "HOST_CALL_FAILED",
        `the history ${historyId} is no longer held (finished, closed, or unused for ${IDLE_MS / 1000} s)`,
      );
    }
    return entry;
  };

  function holdEntry(messages) {
    const historyId = `h${nextNumber}`;
    nextNumber += 1;
    const entry = { messages, index: 0, idle: undefined, lifetime: undefined };
    entry.lifetime = setTimeout(() => release(historyId), LIFETIME_MS);
    entry.lifetime.unref?.();
    armIdle(historyId, entry);
    held.set(historyId, entry);
    return { historyId, total: messages.length };
  }

  return {
    /**
     * A slot for one full read, taken before the read: at once when fewer than MAX_HELD histories
     * are held or being read, else after the earliest release within SLOT_WAIT_MS, else refused.
     * @returns {Promise<{ hold(messages: unknown): { historyId: string, total: number }, cancel(): void }>}
     */
    reserve() {
      if (waiters.length === 0 && held.size + reserved < MAX_HELD) {
        reserved += 1;
        return Promise.resolve(newSlot());
      }
      return new Promise((resolve, reject) => {
        const waiter = { grant: resolve, timer: undefined, reject };
        waiter.timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new HistoryError(
              "CHANNEL_OVERFLOW",
              `${MAX_HELD} session histories (the most read at once) were still being loaded after ${SLOT_WAIT_MS / 1000} s, ` +
                `so this history was not read; load the session again once another load has finished`,
              { retryable: true, limit: MAX_HELD, waitedMs: SLOT_WAIT_MS },
            ),
          );
        }, SLOT_WAIT_MS);
        waiter.timer.unref?.();
        waiters.push(waiter);
      });
    },

    /** Hold a full history read without a reserved slot (refused when MAX_HELD are held or being read). */
    hold(messages) {
      if (!Array.isArray(messages)) throw new Error("the history is not a list of messages");
      if (held.size + reserved >= MAX_HELD) {
        throw new HistoryError("CHANNEL_OVERFLOW", `more than ${MAX_HELD} session histories are being loaded at once`, {
          retryable: true,
          limit: MAX_HELD,
        });
      }
      return holdEntry(messages);
    },

    /** The next piece of a held history; the last piece (done) releases it. */
    piece(historyId) {
      const entry = entryOf(historyId);
      const out = [];
      let bytes = 2;
      while (entry.index < entry.messages.length && out.length < MAX_PIECE_MESSAGES) {
        const message = reduceMessage(entry.messages[entry.index], limits);
        const size = Buffer.byteLength(JSON.stringify(message) ?? "null", "utf8") + 1;
        if (out.length > 0 && bytes + size > pieceBytes) break;
        out.push(message);
        bytes += size;
        entry.messages[entry.index] = undefined; // handed over: not held twice
        entry.index += 1;
      }
      const done = entry.index >= entry.messages.length;
      if (done) release(historyId);
      else armIdle(historyId, entry);
      return { messages: out, done };
    },

    release(historyId) {
      entryOf(historyId);
      release(historyId);
      return null;
    },

    /** histories held right now */
    get size() {
      return held.size;
    },

    /** reads waiting for a slot right now */
    get waiting() {
      return waiters.length;
    },

    disposeAll() {
      for (const waiter of waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new HistoryError("CHANNEL_PROTOCOL", "the channel closed while the history read waited for a slot"));
      }
      for (const historyId of [...held.keys()]) release(historyId);
    },
  };
}
