/**
 * A session's history through `conversationRowsRangeV4` (zcode-v4.md §3.5, docs/history.md): pages
 * of at most 200 rows (after a page the bootstrap cut to its frame, twice the rows that page
 * held), newest page first, each `beforeRowId` = the first rowId of the previous
 * page, until `hasMore` is false. Every page must be of the same conversation state
 * (`atLogEpoch`, `atRevision`, `atSeq`): when they change meanwhile the whole read is discarded
 * and done again (three attempts); a cursor that does not advance is a protocol error. The pages
 * are then handed out oldest first, each as the legacy snapshot messages `history-replay.ts`
 * reads (one message per row; the bootstrap has bounded every row, and cut a page to its frame).
 * A sub-agent's tool row keeps its subagent in the part's `metadata` (subagentMetadata).
 */
import type { HostClient } from "../../host/types.js";
import type { SnapshotMessage } from "../../protocol/native-types.js";
import { BridgeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";
import { MESSAGE_STRING_BYTES } from "./bounded-text.js";
import { compactionPart, toolResult } from "./projection.js";
import { asRow, type Row } from "./row-store.js";

export const ROWS_PAGE_LIMIT = 200;
const ATTEMPTS = 3;
/** more pages than this is a host that does not stop (200 000 rows) */
const MAX_PAGES = 1000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const TOOL_STATUS: Record<string, string> = {
  inputStreaming: "pending",
  pendingApproval: "pending",
  running: "running",
  success: "completed",
  error: "error",
  cancelled: "error",
};

function protocolError(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", message, details ? { details } : {});
}

interface Page {
  rows: Row[];
  at: string;
  hasMore: boolean;
}

async function readPage(host: HostClient, ref: SessionRef, beforeRowId: string | number | undefined, limit: number): Promise<Page> {
  const params: Record<string, unknown> = { workspacePath: ref.workspacePath, sessionId: ref.sessionId, limit };
  if (beforeRowId !== undefined) params.beforeRowId = beforeRowId;
  const raw = await host.call<unknown>("agent", "conversationRowsRangeV4", params, { timeout: "readHistory" });
  if (!isRecord(raw) || !Array.isArray(raw.rows) || typeof raw.hasMore !== "boolean") {
    throw protocolError("ZCode answered a history page without rows and hasMore.");
  }
  const rows: Row[] = [];
  for (const item of raw.rows) {
    const row = asRow(item);
    if (row) rows.push(row);
  }
  return { rows, at: JSON.stringify([raw.atLogEpoch ?? null, raw.atRevision ?? null, raw.atSeq ?? null]), hasMore: raw.hasMore };
}

/** all pages of one consistent read, newest first; undefined when the conversation changed meanwhile */
async function readAll(host: HostClient, ref: SessionRef): Promise<Row[][] | undefined> {
  const pages: Row[][] = [];
  let at: string | undefined;
  let before: string | number | undefined;
  let limit = ROWS_PAGE_LIMIT;
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await readPage(host, ref, before, limit);
    // a page the bootstrap cut to its frame (rows of several MB) says how many such rows fit: the
    // next one asks for twice that, not for 200 rows of which most would be read and left out again
    limit = page.rows.length < limit ? Math.min(ROWS_PAGE_LIMIT, Math.max(1, page.rows.length * 2)) : limit;
    if (at !== undefined && page.at !== at) return undefined;
    at = page.at;
    pages.push(page.rows);
    if (!page.hasMore) return pages;
    const first = page.rows[0]?.rowId;
    if (first === undefined || (before !== undefined && String(first) === String(before))) {
      throw protocolError("ZCode's history pages did not advance (the same rows again).", { beforeRowId: before });
    }
    before = first;
  }
  throw protocolError(`ZCode's history has more than ${MAX_PAGES} pages.`);
}

export async function* rowsHistory(host: HostClient, ref: SessionRef): AsyncGenerator<SnapshotMessage[]> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const pages = await readAll(host, ref);
    if (!pages) continue;
    const children: SubagentsSeen = new Map();
    for (const page of pages.reverse()) {
      const messages = rowsToMessages(page, children);
      if (messages.length > 0) yield messages;
    }
    return;
  }
  throw new BridgeError(
    "HOST_CALL_FAILED",
    `ZCode's conversation kept changing while its history was read (${ATTEMPTS} attempts). Load the session again once it is idle.`,
  );
}

/** the child session each `subagent` row names, by its parent tool call (kept across the pages of one read) */
export type SubagentsSeen = Map<string, { childSessionId: string; agentType: string | undefined }>;
/** `subagent` rows remembered per read (a child's tool rows follow its own soon after) */
const SUBAGENTS_KEPT = 256;

const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * A sub-agent's tool row as a legacy tool part names its subagent in `metadata` (as the live
 * event's origin: `source: "subagent"`, `parentToolCallId`, and `childSessionId` / `agentType`
 * once the parent's `subagent` row named them); history-replay.ts reads it for a client with
 * subagents, and no other client sees it.
 */
function subagentMetadata(row: Row, children: SubagentsSeen): Record<string, unknown> | undefined {
  const parentToolCallId = nonEmpty(row.parentToolCallId);
  if (!parentToolCallId) return undefined;
  const child = children.get(parentToolCallId);
  return {
    source: "subagent",
    parentToolCallId,
    ...(child ? { childSessionId: child.childSessionId } : {}),
    ...(child?.agentType ? { agentType: child.agentType } : {}),
  };
}

/** rows (oldest first) → legacy snapshot messages; rows without a history equivalent are skipped */
export function rowsToMessages(rows: readonly Row[], children: SubagentsSeen = new Map()): SnapshotMessage[] {
  const messages: SnapshotMessage[] = [];
  for (const row of rows) {
    const messageId =
      typeof row.assistantResponseId === "string" && row.assistantResponseId !== "" ? row.assistantResponseId : `row-${row.rowId}`;
    switch (row.kind) {
      case "userInput":
        if (typeof row.text === "string" && row.text !== "") {
          messages.push({ info: { role: "user", messageId }, parts: [{ type: "text", text: row.text }] });
        }
        break;
      case "assistantText":
      case "reasoning":
        if (typeof row.text === "string" && row.text !== "") {
          const type = row.kind === "assistantText" ? "text" : "reasoning";
          messages.push({ info: { role: "assistant", messageId }, parts: [{ type, text: row.text }] });
        }
        break;
      case "toolCall": {
        if (typeof row.toolCallId !== "string" || row.toolCallId === "") break;
        const status = TOOL_STATUS[typeof row.status === "string" ? row.status : ""] ?? "pending";
        const state: Record<string, unknown> = { status };
        if (row.input !== undefined) state.input = row.input;
        if (status === "error") {
          const error =
            isRecord(row.error) && typeof row.error.message === "string"
              ? row.error.message
              : row.status === "cancelled"
                ? "cancelled"
                : "failed";
          state.error = error;
        } else if (status === "completed") {
          state.output = toolResult(row, MESSAGE_STRING_BYTES);
        }
        const part: Record<string, unknown> = { type: "tool", callId: row.toolCallId, state };
        if (typeof row.toolName === "string") part.tool = row.toolName;
        const metadata = subagentMetadata(row, children);
        if (metadata) part.metadata = metadata;
        messages.push({ info: { role: "assistant", messageId }, parts: [part as SnapshotMessage["parts"][number]] });
        break;
      }
      case "subagent": {
        // names the child session of its parent tool call (GUESS: when ZCode fills `childSessionId`)
        const parentToolCallId = nonEmpty(row.parentToolCallId);
        const childSessionId = nonEmpty(row.childSessionId);
        if (parentToolCallId && childSessionId) {
          children.delete(parentToolCallId);
          children.set(parentToolCallId, { childSessionId, agentType: nonEmpty(row.subagentType) });
          if (children.size > SUBAGENTS_KEPT) children.delete(children.keys().next().value!);
        }
        break;
      }
      case "timelineMarker":
        // a compaction (GUESS: the row's fields, projection.ts `compactionPart`)
        if (row.marker === "compact") {
          messages.push({
            info: { role: "assistant", messageId },
            parts: [compactionPart(row, MESSAGE_STRING_BYTES) as SnapshotMessage["parts"][number]],
          });
        }
        break;
      default:
        break;
    }
  }
  return messages;
}
