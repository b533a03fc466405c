/**
 * Bounds on what the V4 projection hands the session layer (docs/zcode-host.md §16). On the legacy
 * stream the runtime bounds every event inside the Electron process (src/runtime/bounds.js); a V4
 * frame crosses whole (cutting a row would leave the bridge's copy of the conversation wrong), so
 * the projection bounds the events it makes from rows the same way: a tool's output keeps its head
 * and the runtime's marker (src/util/size-marker.ts, the bridge's one copy of the runtime's).
 */
import { omittedMarker, utf8Head } from "../../util/size-marker.js";

export { formatBytes, omittedMarker, utf8Head } from "../../util/size-marker.js";

/** a string of a live event: the runtime's `eventLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes` */
export const EVENT_STRING_BYTES = 256 * 1024;
/** a string of a replayed history message: the runtime's `messageLimits(DEFAULT_FRAME_LIMIT_BYTES).stringBytes` */
export const MESSAGE_STRING_BYTES = 64 * 1024;

/** the marker the runtime put at the end of a string it cut (src/runtime/bounds.js) */
const RUNTIME_MARKER = /\n… \[zcode-acp: [0-9.]{1,12} (?:bytes|kB|MB) more not shown\]$/;

/**
 * `text` itself when it fits `maxBytes` (UTF-8), else its head and the marker of what was left out.
 * A string the runtime already cut (its head within `maxBytes`, then the runtime's marker) is kept
 * as it is: cutting it again would replace the runtime's count by the marker's own few bytes.
 */
export function boundText(text: string, maxBytes: number): string {
  if (text.length <= maxBytes / 4) return text;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return text;
  const marker = RUNTIME_MARKER.exec(text.slice(-64));
  if (marker && bytes - Buffer.byteLength(marker[0], "utf8") <= maxBytes) return text;
  const head = utf8Head(text, maxBytes);
  return head + omittedMarker(bytes - Buffer.byteLength(head, "utf8"));
}

/** the runtime's marker at the end of `text` (a string the runtime cut), if it ends with one */
export function trailingMarker(text: string): string | undefined {
  return RUNTIME_MARKER.exec(text.slice(-64))?.[0];
}

/** `value` with each string longer than `maxBytes` bounded (copy-on write: a value within bounds comes back as it is) */
export function boundStrings(value: unknown, maxBytes: number, depth = 0): unknown {
  if (typeof value === "string") return boundText(value, maxBytes);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, index) => {
      const bounded = boundStrings(item, maxBytes, depth + 1);
      if (bounded !== item) (out ??= [...(value as unknown[])])[index] = bounded;
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
