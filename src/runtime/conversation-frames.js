// The V4 read path's reductions (adr/0024, docs/zcode-host.md §16): what ZCode's V4 conversation
// sends must cross the bridge's channel in frames under its limit.
// - `conversation-frame`: one wire frame of onDynamicConversationFrame. ZCode's own physical frames
//   are at most 1 MiB, so they pass unchanged; a larger `complete` frame is cut here into fragments
//   of ZCode's own wire format (base64 pieces with the CRC-32 of the whole), which the bridge's
//   assembler reassembles like ZCode's. Nothing inside a frame is cut: a row or delta that lost
//   content would leave the bridge's copy of the conversation wrong for good.
// - `conversation-rows`: one conversationRowsRangeV4 page. Each row is bounded like a replayed
//   history message; when the page still does not fit a frame, its oldest rows are left out and
//   `hasMore` set: the bridge's next page (beforeRowId = the first row it got) brings them.
import { boundValue, messageLimits } from "./bounds.js";

/** room left in a channel frame for the bridge's envelope around one event */
const ENVELOPE_ROOM = 64 * 1024;
/** decoded bytes per fragment cut here (ZCode's own physical limit is 1 MiB) */
const FRAGMENT_BYTES = 768 * 1024;

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (zlib polynomial) of a Buffer, as 8 lowercase hex digits */
export function crc32Hex(bytes) {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, "0");
}

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function budget(frameLimitBytes) {
  return Math.max(64 * 1024, frameLimitBytes - ENVELOPE_ROOM);
}

/**
 * One wire frame → the frames to send (one, or its fragments).
 * @returns {unknown[]}
 */
export function conversationFrames(frame, context) {
  if (!isRecord(frame) || frame.kind !== "complete" || !("frame" in frame)) return [frame];
  const whole = JSON.stringify(frame);
  if (whole === undefined || Buffer.byteLength(whole, "utf8") <= budget(context.frameLimitBytes)) return [frame];
  const bytes = Buffer.from(JSON.stringify(frame.frame), "utf8");
  const size = Math.max(1024, Math.min(FRAGMENT_BYTES, Math.floor((budget(context.frameLimitBytes) * 3) / 4) - 4096));
  const count = Math.ceil(bytes.length / size);
  const { frame: _logical, kind: _kind, ...header } = frame;
  const logicalFrameId =
    typeof frame.logicalFrameId === "string" && frame.logicalFrameId !== ""
      ? frame.logicalFrameId
      : `zacp-${String(frame.subscriptionId)}-${String(frame.logicalFrameOrdinal)}`;
  const checksum = { algorithm: "crc32", value: crc32Hex(bytes) };
  const out = [];
  for (let index = 0; index < count; index++) {
    out.push({
      ...header,
      kind: "fragment",
      logicalFrameId,
      fragmentIndex: index,
      fragmentCount: count,
      logicalBytes: bytes.length,
      checksum,
      dataBase64: bytes.subarray(index * size, (index + 1) * size).toString("base64"),
    });
  }
  return out;
}

/** One rows page, bounded per row and cut (oldest rows first) to fit one frame. */
export function conversationRows(page, context) {
  if (!isRecord(page) || !Array.isArray(page.rows)) throw new Error("the rows page has no rows list");
  const limits = messageLimits(context.frameLimitBytes);
  const rows = page.rows.map((row) => boundValue(row, limits).value);
  const sizes = rows.map((row) => Buffer.byteLength(JSON.stringify(row) ?? "null", "utf8") + 1);
  const room = Math.floor(budget(context.frameLimitBytes) / 2);
  let total = sizes.reduce((sum, n) => sum + n, 0);
  let first = 0;
  // keep the newest rows; at least one (a bounded row always fits)
  while (total > room && first < rows.length - 1) {
    total -= sizes[first];
    first += 1;
  }
  if (first === 0) return rows.every((row, i) => row === page.rows[i]) ? page : { ...page, rows };
  return { ...page, rows: rows.slice(first), hasMore: true };
}
