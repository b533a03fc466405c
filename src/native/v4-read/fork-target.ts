/**
 * The row a session/fork forks at (docs/acp.md "Session management"): ZCode's `forkAssistant`
 * targets a row `{rowId, entityId}` at the conversation's revision and log epoch (zcode-v4.md
 * §4.1, §4.3), and only a row that says so: ZCode's rows carry `actions.canFork: true` exactly
 * where a fork is allowed, the last answer segment of a finished turn
 * (shared/reference/zcode-3.15.1-source.md §2.5). Read through `conversationRowsRangeV4`, newest
 * page first: the row whose id is the ACP `messageId` the bridge gave the client (live:
 * `assistantResponseId` or `entityId`; history replay: `assistantResponseId` or `row-<rowId>`,
 * ./projection.ts and ./history.ts; segments of one answer may share it, the tail comes first),
 * or without one the newest row ZCode allows a fork at. A message ZCode does not allow a fork at
 * is refused here (INVALID_PARAMS), before anything is sent. The page says at which revision and
 * log epoch it was read: the fork's compare-and-set base.
 */
import type { HostClient } from "../../host/types.js";
import { BridgeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";
import { ROWS_PAGE_LIMIT } from "./history.js";
import { asRow, type Row } from "./row-store.js";

/** pages searched for the message before giving up (20 000 rows) */
const MAX_PAGES = 100;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export interface ForkTarget {
  target: { rowId: number | string; entityId: string };
  base: { revision: number; logEpoch: string };
}

/** does this row carry the ACP messageId `id`? */
function carries(row: Row, id: string): boolean {
  return row.assistantResponseId === id || row.entityId === id || `row-${row.rowId}` === id;
}

/** does ZCode allow a fork at this row (`actions.canFork === true`)? */
function canFork(row: Row): boolean {
  return isRecord(row.actions) && row.actions.canFork === true;
}

/** a message the client named that ZCode does not allow a fork at */
function notForkable(row: Row, messageId: string): BridgeError {
  return new BridgeError(
    "INVALID_PARAMS",
    row.kind === "assistantText"
      ? `ZCode cannot fork at the message ${messageId}: it forks only at the last answer of a finished turn. ` +
          "Fork at a turn's final answer, or leave out the messageId to fork at the newest one."
      : `The message ${messageId} is not an answer of the agent; ZCode forks a session at the last answer of a finished turn.`,
    { details: { messageId } },
  );
}

export async function findForkTarget(host: HostClient, ref: SessionRef, messageId: string | undefined): Promise<ForkTarget> {
  let before: number | string | undefined;
  /** the rows carrying `messageId` so far that ZCode does not allow a fork at (an answer row preferred), and their turn */
  let carrying: Row | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const params: Record<string, unknown> = { workspacePath: ref.workspacePath, sessionId: ref.sessionId, limit: ROWS_PAGE_LIMIT };
    if (before !== undefined) params.beforeRowId = before;
    const raw = await host.call<unknown>("agent", "conversationRowsRangeV4", params, { timeout: "forkSession" });
    if (!isRecord(raw) || !Array.isArray(raw.rows) || typeof raw.hasMore !== "boolean") {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode answered a rows page without rows and hasMore.");
    }
    const revision = raw.atRevision;
    const logEpoch = raw.atLogEpoch;
    if (typeof revision !== "number" || !Number.isSafeInteger(revision) || typeof logEpoch !== "string" || logEpoch === "") {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode's rows page does not say at which revision and log epoch it was read.");
    }
    const rows = raw.rows.map(asRow).filter((row): row is Row => row !== undefined);
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      if (messageId !== undefined && carrying !== undefined && row.turnId !== carrying.turnId) {
        // past the turn of the message: its segments (which may share its id) are all read
        throw notForkable(carrying, messageId);
      }
      if (messageId !== undefined && !carries(row, messageId)) continue;
      if (!canFork(row)) {
        if (messageId !== undefined && (carrying === undefined || (carrying.kind !== "assistantText" && row.kind === "assistantText"))) {
          carrying = row;
        }
        continue;
      }
      if (typeof row.entityId !== "string" || row.entityId === "") {
        throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode allows a fork at a row that has no entity id to fork at.");
      }
      return { target: { rowId: row.rowId, entityId: row.entityId }, base: { revision, logEpoch } };
    }
    if (!raw.hasMore || rows.length === 0) break;
    const first = rows[0]!.rowId;
    if (before !== undefined && String(first) === String(before)) {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode's rows pages did not advance (the same rows again).");
    }
    before = first;
  }
  if (messageId !== undefined && carrying !== undefined) throw notForkable(carrying, messageId);
  throw new BridgeError(
    "INVALID_PARAMS",
    messageId === undefined
      ? `The session ${ref.sessionId} has no answer ZCode can fork at yet (a fork attaches to the last answer of a finished turn).`
      : `The session ${ref.sessionId} has no message ${messageId}; fork at a message the agent sent in it.`,
    { details: { sessionId: ref.sessionId, ...(messageId !== undefined ? { messageId } : {}) } },
  );
}
