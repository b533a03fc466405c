/**
 * Bounds on what one replayed history part puts in front of the client (docs/history.md): text,
 * tool input and output keep their head and end with a plain marker saying how much was left out.
 * The bootstrap already bounds every message it hands over; these bounds hold whatever it sent.
 *
 * The marker and the head cut are the bootstrap's (src/runtime/bounds.js), through the bridge's one
 * copy of them (src/util/size-marker.ts).
 */
import { omittedMarker, utf8Head } from "../util/size-marker.js";

export { formatBytes, omittedMarker, utf8Head } from "../util/size-marker.js";

/** the most one text, tool input string or tool output of a replayed part keeps, in UTF-8 bytes */
const REPLAY_FIELD_BYTES = 64 * 1024;
/** a string cut by the bootstrap (its head plus its marker) is not cut again */
const MARKER_SLACK_BYTES = 256;
/** strings nested deeper than this in a tool input are left as they are (they were bounded upstream) */
const MAX_DEPTH = 32;

/** The head of `text` within `maxBytes` (UTF-8) and the marker, or `text` itself when it fits. */
export function boundText(text: string, maxBytes = REPLAY_FIELD_BYTES): string {
  if (text.length <= maxBytes / 3) return text;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes + MARKER_SLACK_BYTES) return text;
  const head = utf8Head(text, maxBytes);
  return head + omittedMarker(bytes - Buffer.byteLength(head, "utf8"));
}

/** Every string of a JSON value bounded as `boundText` (the same value when nothing was cut). */
export function boundStrings(value: unknown, maxBytes = REPLAY_FIELD_BYTES, depth = 0): unknown {
  if (typeof value === "string") return boundText(value, maxBytes);
  if (value === null || typeof value !== "object" || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] = value;
    value.forEach((item: unknown, i) => {
      const bounded = boundStrings(item, maxBytes, depth + 1);
      if (bounded === item) return;
      if (out === value) out = value.slice();
      out[i] = bounded;
    });
    return out;
  }
  let out = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    const bounded = boundStrings(item, maxBytes, depth + 1);
    if (bounded === item) continue;
    if (out === value) out = { ...(value as Record<string, unknown>) };
    out[key] = bounded;
  }
  return out;
}
