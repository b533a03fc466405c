/**
 * The size marker and the UTF-8 head cut the bridge shows where content was left out
 * (docs/history.md): `… [zcode-acp: 19.7 MB more not shown]`. Their one definition inside Electron
 * is src/runtime/bounds.js, which nothing of ours may import (src/runtime/ is a separate program:
 * docs/architecture.md); this is the bridge's one copy, used by the session layer's replay bounds
 * and the V4 read path's projection, and checked byte for byte against the runtime's by
 * test/unit/util/size-marker.test.ts.
 */

/** "2.5 kB", "19.8 MB" (decimal units) */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The plain marker appended where content was left out. */
export function omittedMarker(bytes: number): string {
  return `\n… [zcode-acp: ${formatBytes(bytes)} more not shown]`;
}

/** The longest head of `text` whose UTF-8 encoding is at most `maxBytes` (never splits a surrogate pair). */
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
