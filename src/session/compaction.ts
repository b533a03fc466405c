/**
 * ZCode's context compaction as ACP `compaction_update`s (docs/zcode-host.md §5.11, docs/acp.md §2.11).
 *
 * What reaches this module is a part (live `part.upserted`, or a part of the history), in one of
 * the shapes ZCode's public source (3.15.1) has:
 * - the part the V4 read path makes of a `timelineMarker` row whose `marker` is
 *   `{type:"compact", origin, status, tokensBefore?, tokensAfter?, summaryRef?}`
 *   (src/native/v4-read/projection.ts `compactionPart`): `{type:"compaction", partId, status,
 *   origin, tokensBefore?, tokensAfter?, summaryRef?}`;
 * - the legacy stored `compaction` part `{partId, auto, reason?, summaryMessageId?, metadata?}`,
 *   its lifecycle in `metadata` (`operationId`, `timelineStatus`, `trigger`, token counts);
 * - the legacy `timeline` part of `timelineType:"context_compaction"` (`operationId`, `status`,
 *   `trigger`, `preCompactTokenCount`, `postCompactTokenCount`, `truePostCompactTokenCount`, `reason`).
 *
 * Statuses: V4 `running`, legacy `started` / `retrying` → `in_progress`; `success` / `completed`
 * → `completed`; `failed` → `failed`; `cancelled` / `interrupted` → `cancelled`; `noop` /
 * `skipped` (nothing was compacted) are not shown — but a compaction the client was already
 * shown `in_progress` is closed `completed` (with `_meta.zcode.status: "noop"`), so a client is
 * never left with an open compaction. An unknown status goes out as ZCode's own (`_zcode_<status>`).
 * ZCode sends no summary text (only a reference to the model-only summary message), so none is
 * claimed; the token counts and the reference go under `_meta.zcode`.
 */
import type { CompactionStatus, SessionUpdate } from "@agentclientprotocol/sdk";
import { BridgeError } from "../util/errors.js";
import { boundText } from "./bounded-content.js";

/** `noop` / `skipped`: ZCode looked and compacted nothing */
const NOOP = "noop";

/** ZCode's compaction statuses (V4 marker and legacy `CompactTimelineStatus`) → ACP's */
export const COMPACTION_STATUS: Readonly<Record<string, CompactionStatus>> = {
  // V4 `timelineMarker` marker.status
  running: "in_progress",
  success: "completed",
  failed: "failed",
  cancelled: "cancelled",
  noop: NOOP,
  // legacy CompactTimelineStatus (ZCode maps these to the V4 set: projection-rows.ts mapCompactMarkerStatus)
  started: "in_progress",
  retrying: "in_progress",
  completed: "completed",
  skipped: NOOP,
  interrupted: "cancelled",
};

/** how many compactions shown `in_progress` are remembered per session (a noop closes them) */
const OPEN_KEPT = 64;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const tokens = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/** One compaction as read from a part: its id, ZCode's status, what goes under `_meta.zcode`. */
export interface Compaction {
  compactionId: string;
  /** ZCode's status word, as sent */
  native: string;
  /** ACP's status, or `noop` (NOOP) when nothing was compacted */
  status: CompactionStatus;
  meta: Record<string, unknown>;
  error?: string;
}

/** Is this part a compaction (any of the three shapes)? */
export function isCompactionPart(part: Record<string, unknown>): boolean {
  return part.type === "compaction" || (part.type === "timeline" && part.timelineType === "context_compaction");
}

/**
 * The compaction a part describes; undefined for a part that is no compaction to show (another
 * part, or the compaction metadata ZCode also puts on the model-only summary message: no
 * lifecycle status and no summary reference). A compaction part without any id cannot be
 * addressed and is refused (NATIVE_PROTOCOL_ERROR).
 */
export function readCompaction(part: Record<string, unknown>): Compaction | undefined {
  if (!isCompactionPart(part)) return undefined;
  const metadata = isRecord(part.metadata) ? part.metadata : {};
  const compactionId = text(part.operationId) ?? text(metadata.operationId) ?? text(part.partId) ?? text(part.id);
  if (!compactionId) {
    throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode sent a compaction part without an id; it cannot be shown.");
  }
  const summaryRef = text(part.summaryRef) ?? text(part.summaryMessageId) ?? text(metadata.summaryMessageId);
  const stated = text(part.status) ?? text(metadata.timelineStatus);
  // the summary message's own compaction metadata is a boundary for the model, not a compaction event
  if (stated === undefined && summaryRef === undefined) return undefined;
  // a stored part with a summary and no status is a finished compaction (as ZCode's desktop reads it)
  const native = stated ?? "completed";
  const status = COMPACTION_STATUS[native] ?? `_zcode_${native}`;
  const meta: Record<string, unknown> = { status: native };
  const origin = text(part.origin) ?? originOf(text(part.trigger) ?? text(metadata.trigger), part.auto);
  if (origin) meta.origin = origin;
  const before = tokens(part.tokensBefore) ?? tokens(part.preCompactTokenCount) ?? tokens(metadata.preCompactTokenCount);
  const after =
    tokens(part.tokensAfter) ??
    tokens(part.truePostCompactTokenCount) ??
    tokens(metadata.truePostCompactTokenCount) ??
    tokens(part.postCompactTokenCount) ??
    tokens(metadata.postCompactTokenCount);
  if (before !== undefined) meta.tokensBefore = before;
  if (after !== undefined) meta.tokensAfter = after;
  if (summaryRef !== undefined) meta.summaryRef = summaryRef.slice(0, 200);
  const compaction: Compaction = { compactionId, native, status, meta };
  const reason = text(part.reason) ?? text(metadata.reason);
  if (reason && status === "failed") compaction.error = boundText(reason);
  return compaction;
}

/** ZCode's trigger → `manual` / `auto` (as its V4 projection does: every trigger but `manual` is automatic) */
function originOf(trigger: string | undefined, auto: unknown): string | undefined {
  if (trigger) return trigger === "manual" ? "manual" : "auto";
  return typeof auto === "boolean" ? (auto ? "auto" : "manual") : undefined;
}

function update(compaction: Compaction, status: CompactionStatus): SessionUpdate {
  const out: SessionUpdate = {
    sessionUpdate: "compaction_update",
    compactionId: compaction.compactionId,
    status,
    _meta: { zcode: compaction.meta },
  };
  if (compaction.error) out.error = compaction.error;
  return out;
}

/**
 * A compaction part of the history as its final `compaction_update`; undefined for a part that
 * is not shown (no compaction, or one that compacted nothing).
 */
export function compactionUpdate(part: Record<string, unknown>): SessionUpdate | undefined {
  const compaction = readCompaction(part);
  if (!compaction || compaction.status === NOOP) return undefined;
  return update(compaction, compaction.status);
}

/** The live compactions of one session: which ones the client was shown running (a noop closes those). */
export class CompactionTracker {
  private readonly open = new Set<string>();

  /** the updates for one compaction part seen live (none for a noop the client was never shown) */
  updates(part: Record<string, unknown>): SessionUpdate[] {
    const compaction = readCompaction(part);
    if (!compaction) return [];
    const id = compaction.compactionId;
    if (compaction.status === NOOP) {
      if (!this.open.delete(id)) return [];
      return [update(compaction, "completed")];
    }
    if (compaction.status === "in_progress") {
      this.open.delete(id);
      this.open.add(id);
      if (this.open.size > OPEN_KEPT) this.open.delete(this.open.values().next().value!);
    } else this.open.delete(id);
    return [update(compaction, compaction.status)];
  }
}

/** ZCode's end of a compaction that failed or was stopped (its queue is then held), else undefined */
export function compactionStopped(part: Record<string, unknown>): "failed" | "cancelled" | undefined {
  let compaction: Compaction | undefined;
  try {
    compaction = readCompaction(part);
  } catch {
    return undefined;
  }
  return compaction?.status === "failed" || compaction?.status === "cancelled" ? compaction.status : undefined;
}
