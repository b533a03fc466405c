// The V4 read path's reductions (adr/0024, docs/zcode-host.md §16, docs/history.md): nothing ZCode's
// V4 conversation sends crosses the bridge's channel in a frame past ZCode's own physical limit, and
// no row field crosses it larger than the legacy path lets an event field cross.
// - `conversation-frame`: one wire frame of onDynamicConversationFrame. ZCode's fragments (base64
//   pieces with the CRC-32 of the whole, zcode-v4.md §3.3) are reassembled HERE first, with the same
//   checks as ZCode's assembler (count, index, byte count, CRC-32, UTF-8, JSON). The logical frame is
//   then bounded like a legacy event (bounds.js, eventLimits): every row of `row.appended` /
//   `row.upserted` and of a snapshot's window, every `state.updated` patch, the snapshot's A zone.
//   A `row.delta` append is cut where its field reaches its bound and left out after that (one
//   string bound for tool input and output; 16 for a streamed answer, `text`, whose client gets it
//   whole as on the legacy path: one append of it at most 8). A field that is still streaming keeps
//   its head without the marker, which comes with the row's next whole-row upsert (ZCode upserts a
//   row on every structural change, the end of its streaming included, §3.8); an answer streamed
//   past one string bound is then held as its bounded head and marker. A snapshot (a resync's
//   recovery) keeps of an answer what its listener tracked before it (./answerBytes): a resync in
//   the middle of a long answer keeps its 16 bounds, and its appends go on.
//   A snapshot whose bounded window still does not fit one logical frame keeps its newest rows (the
//   others stay reachable through conversationRowsRangeV4). Seq numbers are never changed: a gap is
//   still a gap and the bridge's resync works as before.
//   The result is sent as one `complete` frame when it fits ZCode's physical limit (1 MiB), else as
//   fragments of ZCode's own format. A frame that cannot be reassembled or bounded is never dropped
//   silently: a `zcodeAcpFault` frame with a code and a message takes its place (ordinal and
//   subscription kept), and the bridge resynchronises on it (or ends the subscription if it was the
//   answer to a resync).
// - `conversation-rows`: one conversationRowsRangeV4 page. Each row is bounded like a replayed
//   history message; when the page still does not fit a frame, its oldest rows are left out and
//   `hasMore` set: the bridge's next page (beforeRowId = the first row it got) brings them.
import { boundValue, eventLimits, messageLimits, omittedMarker, utf8Head } from "./bounds.js";

/** room left in a channel frame for the bridge's envelope around one event */
const ENVELOPE_ROOM = 64 * 1024;
/** ZCode's physical frame limit (zcode-v4.md §3.3): no V4 frame sent here is larger */
const PHYSICAL_BYTES = 1024 * 1024;
/** decoded bytes per fragment cut here (base64 of it plus the header stays under PHYSICAL_BYTES) */
const FRAGMENT_BYTES = 768 * 1024;
/** the largest logical frame sent on (the bridge's assembler takes ZCode's 16 MiB) */
export const MAX_SENT_LOGICAL_BYTES = 12 * 1024 * 1024;
/**
 * ZCode's fragments reassembled here, per listener: one per workspace (the bridge shares it among
 * the workspace's subscriptions, src/native/v4-read/frame-listener.ts), so each frame is staged and
 * bounded once however many sessions are open. ZCode's own clients take 16 MiB per logical
 * frame; a host may send more (a row holding a 20 MB tool input several times over), which is
 * exactly what is bounded here, so the Electron side takes up to 256 MiB before it refuses.
 */
export const STAGING_LIMITS = Object.freeze({
  maxFragments: 1024,
  maxLogicalBytes: 256 * 1024 * 1024,
  maxStagedBytes: 256 * 1024 * 1024,
  maxAssemblies: 32,
  timeoutMs: 30_000,
});
/** rows whose streamed fields are tracked per ZCode subscription (oldest forgotten first) */
const MAX_TRACKED_ROWS = 1024;
/** ZCode subscriptions tracked per listener (a workspace's listener sees all of its sessions: ≤ 32 attached, their sub-agents') */
const MAX_STREAMS = 64;
const FAULT_KIND = "zcodeAcpFault";
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const HEX8 = /^[0-9a-fA-F]{8}$/;

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

const isCount = (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function budget(frameLimitBytes) {
  return Math.max(64 * 1024, Math.min(PHYSICAL_BYTES, frameLimitBytes - ENVELOPE_ROOM));
}

// ------------------------------------------------------------------ per-listener state

/** The state of one listener (one bridge subscription): ZCode fragments staged, rows tracked per ZCode subscription. */
function listenerState(context) {
  // the dispatcher gives each subscription its own `subscription` object; without one, the context itself
  const holder = isRecord(context.subscription) ? context.subscription : context;
  holder.v4 ??= { assemblies: new Map(), staged: 0, failed: new Set(), streams: new Map() };
  return holder.v4;
}

function streamOf(state, subscriptionId) {
  const key = String(subscriptionId);
  let stream = state.streams.get(key);
  if (stream === undefined) {
    stream = { rows: new Map() };
    state.streams.set(key, stream);
    if (state.streams.size > MAX_STREAMS) state.streams.delete(state.streams.keys().next().value);
  }
  return stream;
}

// ------------------------------------------------------------------ ZCode's fragments

function dropAssembly(state, key) {
  const assembly = state.assemblies.get(key);
  if (!assembly) return;
  state.staged -= assembly.staged;
  state.assemblies.delete(key);
}

function markFailed(state, key) {
  state.failed.add(key);
  if (state.failed.size > 256) state.failed.delete(state.failed.values().next().value);
}

/** One ZCode fragment: `undefined` while its frame is incomplete, else `{logical}` or `{fault}`. */
function stage(state, frame, now) {
  const { logicalFrameId: id, fragmentIndex: index, fragmentCount: count, logicalBytes, checksum, dataBase64 } = frame;
  const key = `${String(frame.subscriptionId)}\u0000${String(id)}`;
  if (state.failed.has(key)) return undefined; // its fault was reported with its first bad fragment
  const fail = (code, message) => {
    dropAssembly(state, key);
    markFailed(state, key);
    return { fault: { code, message } };
  };
  if (typeof id !== "string" || id === "") return fail("CHANNEL_PROTOCOL", "a fragment without a logicalFrameId");
  if (!isCount(count) || count < 1 || count > STAGING_LIMITS.maxFragments)
    return fail("CHANNEL_PROTOCOL", `a fragment count of ${String(count)}`);
  if (!isCount(index) || index >= count) return fail("CHANNEL_PROTOCOL", `a fragment index of ${String(index)} of ${count}`);
  if (!isCount(logicalBytes)) return fail("CHANNEL_PROTOCOL", "a fragment without its logical byte count");
  if (logicalBytes > STAGING_LIMITS.maxLogicalBytes) {
    return fail(
      "FRAME_TOO_LARGE",
      `ZCode sent a logical frame of ${logicalBytes} bytes (more than ${STAGING_LIMITS.maxLogicalBytes} are not staged)`,
    );
  }
  if (!isRecord(checksum) || checksum.algorithm !== "crc32" || typeof checksum.value !== "string" || !HEX8.test(checksum.value)) {
    return fail("CHANNEL_PROTOCOL", "a fragment without a crc32 checksum");
  }
  if (typeof dataBase64 !== "string" || dataBase64.length % 4 !== 0 || !BASE64.test(dataBase64)) {
    return fail("CHANNEL_PROTOCOL", "a fragment whose data is not base64");
  }
  const data = Buffer.from(dataBase64, "base64");
  let assembly = state.assemblies.get(key);
  if (!assembly) {
    if (state.assemblies.size >= STAGING_LIMITS.maxAssemblies) return fail("CHANNEL_OVERFLOW", "too many fragmented frames at once");
    assembly = {
      count,
      logicalBytes,
      checksum: checksum.value.toLowerCase(),
      parts: new Map(),
      staged: 0,
      startedAt: now,
      header: headerOf(frame),
    };
    state.assemblies.set(key, assembly);
  } else if (assembly.count !== count || assembly.logicalBytes !== logicalBytes || assembly.checksum !== checksum.value.toLowerCase()) {
    return fail("CHANNEL_PROTOCOL", `the fragments of ${id} disagree about their frame`);
  }
  if (assembly.parts.has(index)) return undefined; // a repeated fragment
  if (assembly.staged + data.length > logicalBytes)
    return fail("CHANNEL_PROTOCOL", `the fragments of ${id} exceed their ${logicalBytes} bytes`);
  if (state.staged + data.length > STAGING_LIMITS.maxStagedBytes) {
    return fail("FRAME_TOO_LARGE", `more than ${STAGING_LIMITS.maxStagedBytes} bytes of ZCode fragments staged at once`);
  }
  assembly.parts.set(index, data);
  assembly.staged += data.length;
  state.staged += data.length;
  if (assembly.parts.size < count) return undefined;
  dropAssembly(state, key);
  const bytes = Buffer.concat(Array.from({ length: count }, (_, i) => assembly.parts.get(i)));
  assembly.parts.clear();
  if (bytes.length !== logicalBytes) return fail("CHANNEL_PROTOCOL", `frame ${id} has ${bytes.length} bytes, not ${logicalBytes}`);
  if (crc32Hex(bytes) !== assembly.checksum) return fail("CHANNEL_PROTOCOL", `frame ${id} fails its crc32 checksum`);
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail("CHANNEL_PROTOCOL", `frame ${id} is not UTF-8`);
  }
  try {
    return { logical: JSON.parse(text) };
  } catch {
    return fail("CHANNEL_PROTOCOL", `frame ${id} is not JSON`);
  }
}

/** assemblies past their time: dropped, each reported as a fault */
function expire(state, now) {
  const out = [];
  for (const [key, assembly] of state.assemblies) {
    if (now - assembly.startedAt < STAGING_LIMITS.timeoutMs) continue;
    dropAssembly(state, key);
    markFailed(state, key);
    out.push(assembly.header ?? {});
  }
  return out;
}

// ------------------------------------------------------------------ bounding rows and deltas

/** the paths a `row.delta` appends to (zcode-v4.md §3.7) */
const PATHS = ["text", "inputText", "output.text", "summaryText"];

function getPath(row, path) {
  if (path === "output.text") return isRecord(row.output) ? row.output.text : undefined;
  return row[path];
}

function setPath(row, path, value) {
  if (path === "output.text") return { ...row, output: { ...row.output, text: value } };
  return { ...row, [path]: value };
}

/** the fields of a row that ZCode may still append to (their marker waits for the row's next upsert) */
function openPaths(row) {
  if ((row.kind === "assistantText" || row.kind === "reasoning") && row.state === "streaming") return ["text"];
  if (row.kind === "toolCall" && row.status === "inputStreaming") return ["inputText"];
  if (row.kind === "toolCall" && row.status === "running") return ["output.text"];
  if (row.kind === "subagent" && row.status === "running") return ["summaryText"];
  return [];
}

const byteLength = (text) => Buffer.byteLength(text, "utf8");

function track(stream, rowId, fields) {
  const key = String(rowId);
  stream.rows.delete(key);
  stream.rows.set(key, fields);
  if (stream.rows.size > MAX_TRACKED_ROWS) stream.rows.delete(stream.rows.keys().next().value);
}

/**
 * What of a streamed answer (`text` of an assistantText / reasoning row) a live row keeps, in bytes,
 * or undefined when it is bounded like any string (one string bound, with the marker). `prior` is
 * what this listener last tracked of the row's text (`{bytes, full, open}`), if anything:
 * - a text still streaming keeps up to STREAMED_TEXT_BOUNDS (its head, no marker: the marker comes
 *   with the row's closing upsert) in a snapshot (ZCode's whole state, not one merged append: a
 *   resync in the middle of a long answer must not shrink what the bridge may receive of it) and
 *   once this listener tracks the row; a row first seen in a delta already past one string bound
 *   is one huge append, cut at one bound like a legacy delta (undefined: the open-field rule);
 * - a text the runtime cut before (`bytes < full`: its bound, or an append past APPEND_TEXT_BOUNDS)
 *   keeps the head it let through, then the marker of the rest;
 * - a text that closed while it was streaming here (its closing upsert, or a resync snapshot after
 *   a gap that hid the close) keeps up to STREAMED_TEXT_BOUNDS, with the marker of anything past it;
 * - a closed text once streamed past one string bound keeps what was streamed.
 */
function answerBytes(row, open, prior, limits, snapshot) {
  if ((row.kind !== "assistantText" && row.kind !== "reasoning") || typeof row.text !== "string") return undefined;
  const streamed = limits.stringBytes * STREAMED_TEXT_BOUNDS;
  if (open) return prior !== undefined || snapshot ? streamed : undefined;
  if (prior === undefined) return undefined;
  if (prior.bytes < prior.full) return prior.bytes;
  if (prior.open) return streamed;
  return prior.bytes > limits.stringBytes ? prior.bytes : undefined;
}

/**
 * One row within `limits`. A live row (`stream` given) keeps an open field's head without the
 * marker, and what the bridge then holds of each appendable field is tracked in `stream`; a
 * history row (no stream) is bounded like any value. `prior`: the tracked fields before this row
 * (a snapshot passes the ones it replaces, and `snapshot` true).
 */
function boundRow(row, limits, stream, prior = stream?.rows, snapshot = false) {
  if (!isRecord(row)) return row;
  let value = row;
  const open = stream === undefined ? [] : openPaths(row);
  const key = String(row.rowId);
  const priorText = prior?.get(key)?.text;
  const answer = stream === undefined ? undefined : answerBytes(row, open.includes("text"), priorText, limits, snapshot);
  let keptText;
  let keptBytes;
  if (answer !== undefined && byteLength(row.text) > limits.stringBytes) {
    const head = utf8Head(row.text, answer);
    keptBytes = byteLength(head);
    const rest = byteLength(row.text) - keptBytes;
    keptText = open.includes("text") || rest === 0 ? head : head + omittedMarker(rest);
    value = setPath(value, "text", "");
  }
  for (const path of open) {
    if (keptText !== undefined && path === "text") continue;
    const text = getPath(row, path);
    if (typeof text === "string" && text.length > limits.stringBytes / 4 && byteLength(text) > limits.stringBytes) {
      value = setPath(value, path, utf8Head(text, limits.stringBytes));
    }
  }
  const bounded = boundValue(value, limits).value;
  if (keptText !== undefined && isRecord(bounded)) bounded.text = keptText;
  // the identity a reader needs is never left out, however full the row
  if (isRecord(bounded)) for (const k of ["rowId", "kind"]) if (!(k in bounded) && k in row) bounded[k] = row[k];
  if (stream !== undefined && (typeof row.rowId === "string" || typeof row.rowId === "number")) {
    const fields = {};
    for (const path of PATHS) {
      const full = getPath(row, path);
      if (typeof full !== "string") continue;
      const held = isRecord(bounded) ? getPath(bounded, path) : undefined;
      const fullBytes = byteLength(full);
      // what the bridge holds of the field's content (a marker the runtime added is not content)
      const bytes =
        path === "text" && keptBytes !== undefined
          ? keptBytes
          : held === full
            ? fullBytes
            : typeof held === "string"
              ? byteLength(held)
              : 0;
      fields[path] = { bytes, full: fullBytes, open: open.includes(path) };
    }
    track(stream, row.rowId, fields);
  }
  return bounded;
}

/**
 * How far a streamed answer (`text`: assistant text and reasoning) may grow by appends, in units of
 * the string bound: its deltas are each as small as a legacy text delta, and the legacy path
 * streams a whole answer however long it is, so the client gets the whole answer here too (up to
 * 16 string bounds, far past any model's output limit); the bridge holds it only while it streams
 * (ZCode's closing upsert, bounded with the marker, replaces it). Tool input and output stay at one
 * string bound, as the legacy path bounds them.
 */
const STREAMED_TEXT_BOUNDS = 16;
/** the largest single append of a streamed answer, in string bounds */
const APPEND_TEXT_BOUNDS = 8;

/** A `row.delta`: as it is, its head (the field reached its bound), or null (left out). */
function boundAppend(delta, limits, stream) {
  const { rowId, path, append } = delta;
  if ((typeof rowId !== "string" && typeof rowId !== "number") || typeof append !== "string" || !PATHS.includes(path)) return delta;
  const key = String(rowId);
  let fields = stream.rows.get(key);
  if (fields === undefined) {
    // a row this listener has not seen (outside the window): counted from here
    fields = {};
    track(stream, rowId, fields);
  }
  const field = (fields[path] ??= { bytes: 0, full: 0 });
  // an append goes only to a field still streaming
  field.open = true;
  const cutBefore = field.bytes < field.full;
  const n = byteLength(append);
  field.full += n;
  if (cutBefore) return null;
  const bound = path === "text" ? limits.stringBytes * STREAMED_TEXT_BOUNDS : limits.stringBytes;
  // one append (ZCode merges ~30 ms of them) stays within a few string bounds: its frame is then
  // sent in fragments like any large logical frame, far under the logical limit
  const room = Math.max(0, Math.min(bound - field.bytes, limits.stringBytes * (path === "text" ? APPEND_TEXT_BOUNDS : 1)));
  if (n <= room) {
    field.bytes += n;
    return delta;
  }
  const head = utf8Head(append, room);
  field.bytes += byteLength(head);
  return head === "" ? null : { ...delta, append: head };
}

function forgetFrom(stream, fromRowId) {
  let removing = false;
  for (const key of [...stream.rows.keys()]) {
    if (key === String(fromRowId)) removing = true;
    if (removing) stream.rows.delete(key);
  }
}

/** the JSON size of a value (a row that cannot be encoded counts as nothing: the bridge faults on it) */
const jsonBytes = (value) => byteLength(JSON.stringify(value) ?? "");

function boundSnapshot(snapshot, limits, stream) {
  if (!isRecord(snapshot)) return snapshot;
  const { rows, ...zone } = snapshot;
  const out = boundValue(zone, limits).value;
  for (const key of ["protocolVersion", "sessionId", "logEpoch", "seq", "revision"]) if (key in zone) out[key] = zone[key];
  // what was tracked before this snapshot decides how much of a streamed answer it keeps (a resync's
  // snapshot in the middle of a long answer keeps the answer's streamed bound, ./answerBytes)
  const prior = new Map(stream.rows);
  stream.rows.clear();
  if (!isRecord(rows) || !Array.isArray(rows.window)) return rows === undefined ? out : { ...out, rows };
  const window = rows.window.map((row) => boundRow(row, limits, stream, prior, true));
  // the newest rows that fit one logical frame (each row is within its bound, so at least one fits)
  const room = MAX_SENT_LOGICAL_BYTES - jsonBytes(out) - 64 * 1024;
  let first = window.length;
  let total = 0;
  while (first > 0) {
    const size = jsonBytes(window[first - 1]) + 1;
    if (total + size > room && first < window.length) break;
    total += size;
    first -= 1;
  }
  for (const row of window.slice(0, first)) if (isRecord(row)) stream.rows.delete(String(row.rowId));
  return { ...out, rows: { ...rows, window: first === 0 ? window : window.slice(first) } };
}

/** A logical frame bounded for the channel (the same object when nothing had to change). */
function boundLogical(logical, context, stream) {
  if (!isRecord(logical) || !isRecord(logical.payload)) return logical;
  const limits = eventLimits(context.frameLimitBytes);
  const payload = logical.payload;
  if (payload.kind === "snapshot") {
    return { ...logical, payload: { ...payload, snapshot: boundSnapshot(payload.snapshot, limits, stream) } };
  }
  if (payload.kind !== "deltas" || !Array.isArray(payload.deltas)) return logical;
  let changed = false;
  const deltas = [];
  for (const delta of payload.deltas) {
    let out = delta;
    if (isRecord(delta)) {
      if ((delta.op === "row.appended" || delta.op === "row.upserted") && isRecord(delta.row)) {
        const row = boundRow(delta.row, limits, stream);
        if (row !== delta.row) out = { ...delta, row };
      } else if (delta.op === "row.delta") {
        out = boundAppend(delta, limits, stream);
      } else if (delta.op === "state.updated" && isRecord(delta.patch)) {
        const patch = boundValue(delta.patch, limits).value;
        if (patch !== delta.patch) out = { ...delta, patch };
      } else if (delta.op === "row.removed") {
        forgetFrom(stream, delta.fromRowId);
      }
    }
    if (out !== delta) changed = true;
    if (out !== null) deltas.push(out);
  }
  return changed ? { ...logical, payload: { ...payload, deltas } } : logical;
}

// ------------------------------------------------------------------ frames out

function headerOf(frame) {
  const {
    frame: _logical,
    kind: _kind,
    fragmentIndex: _i,
    fragmentCount: _c,
    logicalBytes: _b,
    checksum: _s,
    dataBase64: _d,
    ...header
  } = frame;
  return header;
}

/** the frame that takes the place of one that could not be reassembled or bounded */
function faultFrame(header, code, message) {
  return { ...header, kind: FAULT_KIND, fault: { code, message } };
}

/** A bounded logical frame as physical frames: one complete frame, or fragments of ZCode's format. */
function physicalFrames(header, logical, context, original) {
  const limit = budget(context.frameLimitBytes);
  const complete = { ...header, kind: "complete", frame: logical };
  const json = JSON.stringify(logical);
  if (json === undefined) return [faultFrame(header, "CHANNEL_PROTOCOL", "a logical frame cannot be encoded as JSON")];
  const bytes = Buffer.from(json, "utf8");
  if (bytes.length + 2048 <= limit) return [original ?? complete];
  if (bytes.length > MAX_SENT_LOGICAL_BYTES) {
    return [
      faultFrame(
        header,
        "FRAME_TOO_LARGE",
        `a conversation frame is ${bytes.length} bytes after every row was bounded (at most ${MAX_SENT_LOGICAL_BYTES} are sent)`,
      ),
    ];
  }
  const size = Math.max(1024, Math.min(FRAGMENT_BYTES, Math.floor((limit * 3) / 4) - 4096));
  const count = Math.ceil(bytes.length / size);
  const logicalFrameId =
    typeof header.logicalFrameId === "string" && header.logicalFrameId !== ""
      ? header.logicalFrameId
      : `zacp-${String(header.subscriptionId)}-${String(header.logicalFrameOrdinal)}`;
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

/**
 * One wire frame → the frames to send (none while ZCode's fragments are incomplete; one complete
 * frame; its fragments; or a fault frame in its place).
 * @param {{ frameLimitBytes: number, subscription?: object, now?: () => number }} context
 * @returns {unknown[]}
 */
export function conversationFrames(frame, context) {
  if (!isRecord(frame) || (frame.kind !== "complete" && frame.kind !== "fragment")) return [frame]; // the bridge faults on it
  const state = listenerState(context);
  const now = typeof context.now === "function" ? context.now() : Date.now();
  const out = [];
  for (const expired of expire(state, now)) {
    out.push(faultFrame(expired, "CHANNEL_PROTOCOL", `a fragmented frame did not complete within ${STAGING_LIMITS.timeoutMs / 1000} s`));
  }
  const header = headerOf(frame);
  let logical;
  if (frame.kind === "fragment") {
    const staged = stage(state, frame, now);
    if (staged === undefined) return out;
    if (staged.fault) return [...out, faultFrame(header, staged.fault.code, staged.fault.message)];
    logical = staged.logical;
  } else {
    if (!("frame" in frame)) return [...out, frame];
    logical = frame.frame;
  }
  const bounded = boundLogical(logical, context, streamOf(state, frame.subscriptionId));
  const original = frame.kind === "complete" && bounded === logical ? frame : undefined;
  return [...out, ...physicalFrames(header, bounded, context, original)];
}

/**
 * One rows page, bounded per row and cut (oldest rows first) to fit one frame. Rows are bounded
 * newest first and only until the frame is full: a page of 200 rows of several MB costs the rows
 * that are sent, not the whole page.
 */
export function conversationRows(page, context) {
  if (!isRecord(page) || !Array.isArray(page.rows)) throw new Error("the rows page has no rows list");
  const limits = messageLimits(context.frameLimitBytes);
  const room = Math.floor(budget(context.frameLimitBytes) / 2);
  const kept = [];
  let total = 0;
  let changed = false;
  for (let i = page.rows.length - 1; i >= 0; i--) {
    const row = boundRow(page.rows[i], limits, undefined);
    const size = Buffer.byteLength(JSON.stringify(row) ?? "null", "utf8") + 1;
    // keep the newest rows; at least one (a bounded row always fits)
    if (kept.length > 0 && total + size > room) break;
    if (row !== page.rows[i]) changed = true;
    kept.push(row);
    total += size;
  }
  kept.reverse();
  if (kept.length === page.rows.length) return changed ? { ...page, rows: kept } : page;
  return { ...page, rows: kept, hasMore: true };
}
