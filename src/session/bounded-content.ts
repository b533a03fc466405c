/**
 * Bounds on what one replayed history part puts in front of the client (docs/history.md): text,
 * tool input and output keep their head and end with a plain marker saying how much was left out.
 * The bootstrap already bounds every message it hands over; these bounds hold whatever it sent.
 *
 * The marker and the head cut are the bootstrap's (src/runtime/bounds.js: `formatBytes`,
 * `omittedMarker`, `utf8Head`), which is their one definition. This layer cannot import it: src/runtime/
 * is a separate program that nothing of ours imports (docs/architecture.md, test/architecture/layers.test.ts).
 * The three functions below are a copy, and test/unit/session/bounded-content.test.ts checks them
 * byte for byte against src/runtime/bounds.js: a change to one without the other fails it.
 */

/** the most one text, tool input string or tool output of a replayed part keeps, in UTF-8 bytes */
const REPLAY_FIELD_BYTES = 64 * 1024;
/** a string cut by the bootstrap (its head plus its marker) is not cut again */
const MARKER_SLACK_BYTES = 256;
/** strings nested deeper than this in a tool input are left as they are (they were bounded upstream) */
const MAX_DEPTH = 32;

/** "2.5 kB", "19.8 MB" (decimal units): copy of src/runtime/bounds.js `formatBytes` */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The plain marker appended where content was left out: copy of src/runtime/bounds.js `omittedMarker` */
export function omittedMarker(bytes: number): string {
  return `\n… [zcode-acp: ${formatBytes(bytes)} more not shown]`;
}

/**
 * The longest head of `text` whose UTF-8 encoding is at most `maxBytes` (never splits a surrogate
 * pair): copy of src/runtime/bounds.js `utf8Head`.
 */
export function utf8Head(text: string, maxBytes: number): string {
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
