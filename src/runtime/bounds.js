// Size bounds applied inside the Electron process before a host value is framed (docs/history.md,
// adr/0018). A value is walked once, copy-on-write: what is within its bounds comes back as the
// same object. A string over its allowance keeps its head (cut at a UTF-8 boundary) followed by a
// plain marker saying how much was left out. Bounds are in UTF-8 bytes of the raw strings.

/** strings this short are always kept whole (ids, types, enums, timestamps) */
const SHORT_BYTES = 256;
/** deeper than this, a value is replaced by the marker (the host never nests this deep) */
const MAX_DEPTH = 64;

/** "2.5 kB", "19.8 MB" (decimal units) */
export function formatBytes(bytes) {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/**
 * The plain marker appended where content was left out. This file is the marker's one definition;
 * src/session/bounded-content.ts (which cannot import src/runtime/) holds a copy of `formatBytes`,
 * `omittedMarker` and `utf8Head` that test/unit/session/bounded-content.test.ts compares with these.
 */
export function omittedMarker(bytes) {
  return `\n… [zcode-acp: ${formatBytes(bytes)} more not shown]`;
}

/** The longest head of `text` whose UTF-8 encoding is at most `maxBytes` (never splits a surrogate pair). */
export function utf8Head(text, maxBytes) {
  if (maxBytes <= 0) return "";
  let end = Math.min(text.length, maxBytes);
  for (;;) {
    const bytes = Buffer.byteLength(text.slice(0, end), "utf8");
    if (bytes <= maxBytes) break;
    end = Math.max(0, Math.min(end - 1, Math.floor((end * maxBytes) / bytes)));
  }
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/**
 * Limits for one value: each string keeps at most `stringBytes`; once `totalBytes` of content
 * have been kept, longer strings keep only the marker; past `totalBytes + slackBytes`, the
 * remaining items of arrays and keys of objects are dropped.
 * @typedef {{ stringBytes: number, totalBytes: number, slackBytes: number }} Limits
 */

/** The limits of one event (and of one reduced snapshot) for a channel of `frameLimitBytes`. */
export function eventLimits(frameLimitBytes) {
  const totalBytes = Math.max(16 * 1024, Math.min(1024 * 1024, Math.floor(frameLimitBytes / 8)));
  return Object.freeze({ stringBytes: Math.floor(totalBytes / 4), totalBytes, slackBytes: Math.floor(totalBytes / 4) });
}

/** The limits of one replayed history message. */
export function messageLimits(frameLimitBytes) {
  const totalBytes = Math.max(8 * 1024, Math.min(256 * 1024, Math.floor(frameLimitBytes / 32)));
  return Object.freeze({ stringBytes: Math.floor(totalBytes / 4), totalBytes, slackBytes: Math.floor(totalBytes / 4) });
}

/**
 * `value` within `limits` (the same object when nothing had to be cut).
 * @param {unknown} value
 * @param {Limits} limits
 * @returns {{ value: unknown, omittedBytes: number }}
 */
export function boundValue(value, limits) {
  const state = { remaining: limits.totalBytes, omittedBytes: 0 };
  const out = walk(value, limits, state, 0);
  return { value: out, omittedBytes: state.omittedBytes };
}

function boundString(text, limits, state) {
  // each string also costs its quotes and a separator
  if (text.length <= SHORT_BYTES / 3) {
    state.remaining -= text.length + 4;
    return text;
  }
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= SHORT_BYTES) {
    state.remaining -= bytes + 4;
    return text;
  }
  const allowance = Math.max(0, Math.min(limits.stringBytes, state.remaining));
  if (bytes <= allowance) {
    state.remaining -= bytes + 4;
    return text;
  }
  const head = utf8Head(text, allowance);
  const kept = Buffer.byteLength(head, "utf8");
  state.remaining -= kept + 64;
  state.omittedBytes += bytes - kept;
  return head + omittedMarker(bytes - kept);
}

function exhausted(limits, state) {
  return state.remaining < -limits.slackBytes;
}

function walk(value, limits, state, depth) {
  if (typeof value === "string") return boundString(value, limits, state);
  if (value === null || typeof value !== "object") {
    state.remaining -= 8;
    return value;
  }
  if (depth >= MAX_DEPTH) {
    state.omittedBytes += 1;
    return omittedMarker(0).trim();
  }
  if (Array.isArray(value)) {
    let out = value;
    for (let i = 0; i < value.length; i += 1) {
      if (exhausted(limits, state)) {
        const rest = value.length - i;
        out = out === value ? value.slice(0, i) : out.slice(0, i);
        state.omittedBytes += rest;
        // a list of strings says what was left out in its own terms
        if (out.every((item) => typeof item === "string")) out.push(`… [zcode-acp: ${rest} more items not shown]`);
        return out;
      }
      const item = value[i];
      const bounded = walk(item, limits, state, depth + 1);
      if (bounded !== item) {
        if (out === value) out = value.slice();
        out[i] = bounded;
      }
    }
    return out;
  }
  let out = value;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i];
    state.remaining -= key.length + 4;
    if (exhausted(limits, state)) {
      if (out === value) out = { ...value };
      for (const dropped of keys.slice(i)) delete out[dropped];
      state.omittedBytes += keys.length - i;
      return out;
    }
    const item = value[key];
    const bounded = walk(item, limits, state, depth + 1);
    if (bounded !== item) {
      if (out === value) out = { ...value };
      out[key] = bounded;
    }
  }
  return out;
}
