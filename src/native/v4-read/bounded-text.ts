/**
 * Bounds on what the V4 projection hands the session layer (docs/zcode-host.md §16). On the legacy
 * stream the runtime bounds every event inside the Electron process (src/runtime/bounds.js); a V4
 * frame crosses whole (cutting a row would leave the bridge's copy of the conversation wrong), so
 * the projection bounds the events it makes from rows the same way: a tool's output keeps its head
 * and the runtime's marker. `formatBytes`, `omittedMarker` and `utf8Head` are copies of
 * src/runtime/bounds.js (which nothing of ours may import), compared by
 * test/unit/native/v4-read/bounded-text.test.ts.
 */

/** a string of a live event: the runtime's `eventLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes` */
export const EVENT_STRING_BYTES = 256 * 1024;
/** a string of a replayed history message: the runtime's `messageLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes` */
export const MESSAGE_STRING_BYTES = 64 * 1024;

/** "2.5 kB", "19.8 MB" (decimal units) */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

export function omittedMarker(bytes: number): string {
  return `\n… [zcode-acp: ${formatBytes(bytes)} more not shown]`;
}

/** the longest head of `text` whose UTF-8 encoding is at most `maxBytes` (never splits a surrogate pair) */
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

/** `text` itself when it fits `maxBytes` (UTF-8), else its head and the marker of what was left out */
export function boundText(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 4) return text;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const head = utf8Head(text, maxBytes);
  return head + omittedMarker(bytes - Buffer.byteLength(head, "utf8"));
}

/** `value` with each string longer than `maxBytes` bounded (copy-on write: a value within bounds comes back as it is) */
export function boundStrings(value: unknown, maxBytes: number, depth = 0): unknown {
  if (typeof value === "string") return boundText(value, maxBytes);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, index) => {
      const bounded = boundStrings(item, maxBytes, depth + 1);
      if (bounded !== item) (out ??= [...value])[index] = bounded;
    });
    return out ?? value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const bounded = boundStrings(item, maxBytes, depth + 1);
    if (bounded !== item) (out ??= { ...(value as Record<string, unknown>) })[key] = bounded;
  }
  return out ?? value;
}
