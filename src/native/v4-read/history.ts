/**
 * A session's history through `conversationRowsRangeV4` (zcode-v4.md §3.5, docs/history.md): pages
 * of at most 200 rows (after a page the bootstrap cut to its frame, twice the rows that page
 * held), newest page first, each `beforeRowId` = the first rowId of the previous page, until
 * `hasMore` is false. Every page must be of the same conversation state (`atLogEpoch`,
 * `atRevision`, `atSeq`): when they change meanwhile the whole read is discarded and done again
 * (three attempts); a cursor that does not advance is a protocol error.
 *
 * The history goes out oldest first, but ZCode pages newest first. So that a long history is not
 * held whole (bounded memory: at most two pages), the read is done twice: the first pass keeps of
 * each page only where it starts (its `beforeRowId`, limit, first row, row count and a CRC-32 of
 * its rows) and the newest page itself; the second pass reads the older pages again, oldest first,
 * hands each out as it comes and the newest page last. A page read again must be the same rows
 * (same count, first row and CRC-32; appends since only touch the newest page, which is not read
 * again): a differing one before anything went out starts the read over (within the three
 * attempts), after that it ends the replay with HOST_CALL_FAILED (the client has part of the
 * history; loading again once the session is idle gives all of it). Each page goes out as the legacy
 * snapshot messages `history-replay.ts` reads (one message per row; the bootstrap has bounded every
 * row, and cut a page to its frame).
 *
 * Subagents (zcode-3.15.1-source.md §2.4): a child's rows are not in the parent's; the parent's
 * `subagent` row names the child session (`childSessionId?`; where ZCode left it out, the session's
 * subagent directory `listSessionSubagents` does, by the Agent call's id, where the install allows
 * it). Right after that row, the child's own history is read the same way and its tool rows go out
 * as tool parts whose `metadata` names the subagent (`source: "subagent"`, `childSessionId`,
 * `parentToolCallId`, `agentType`), which history-replay.ts shows under the child for a client with
 * subagents. At most MAX_CHILDREN_REPLAYED children per read; a child whose history cannot be read
 * is left out (`onChildSkipped`), the parent's history goes on.
 */
import type { HostClient } from "../../host/types.js";
import type { SnapshotMessage } from "../../protocol/native-types.js";
import { BridgeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";
import { MESSAGE_STRING_BYTES } from "./bounded-text.js";
import { crc32Hex } from "./crc32.js";
import { compactionPart, isCompactMarker, toolResult } from "./projection.js";
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
  /** the CRC-32 of the page's rows as they came (the bootstrap bounds them the same way each time) */
  crc: string;
}

/** where one page of the first pass starts, and what it held */
interface PageMark {
  before: string | number | undefined;
  limit: number;
  first: string;
  count: number;
  crc: string;
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
  return {
    rows,
    at: JSON.stringify([raw.atLogEpoch ?? null, raw.atRevision ?? null, raw.atSeq ?? null]),
    hasMore: raw.hasMore,
    crc: crc32Hex(Buffer.from(JSON.stringify(raw.rows), "utf8")),
  };
}

/**
 * The first pass: every page of one consistent read, newest first, kept as its mark; the newest
 * page whole. Undefined when the conversation changed meanwhile.
 */
async function readMarks(host: HostClient, ref: SessionRef): Promise<{ marks: PageMark[]; newest: Row[] } | undefined> {
  const marks: PageMark[] = [];
  let newest: Row[] = [];
  let at: string | undefined;
  let before: string | number | undefined;
  let limit = ROWS_PAGE_LIMIT;
  for (let n = 0; n < MAX_PAGES; n++) {
    const asked = limit;
    const page = await readPage(host, ref, before, asked);
    // a page the bootstrap cut to its frame (rows of several MB) says how many such rows fit: the
    // next one asks for twice that, not for 200 rows of which most would be read and left out again
    limit = page.rows.length < limit ? Math.min(ROWS_PAGE_LIMIT, Math.max(1, page.rows.length * 2)) : limit;
    if (at !== undefined && page.at !== at) return undefined;
    at = page.at;
    if (n === 0) newest = page.rows;
    marks.push({ before, limit: asked, first: String(page.rows[0]?.rowId ?? ""), count: page.rows.length, crc: page.crc });
    if (!page.hasMore) return { marks, newest };
    const first = page.rows[0]?.rowId;
    if (first === undefined || (before !== undefined && String(first) === String(before))) {
      throw protocolError("ZCode's history pages did not advance (the same rows again).", { beforeRowId: before });
    }
    before = first;
  }
  throw protocolError(`ZCode's history has more than ${MAX_PAGES} pages.`);
}

/** the history changed between the two passes (see the header); `started`: part of it went out */
class ChangedError extends Error {
  constructor(readonly started: boolean) {
    super("the history changed between its two reads");
  }
}

/** how a read treats subagents: the directory's children by Agent call, and the bound */
export interface ChildReplay {
  /** the child session of an Agent call whose `subagent` row does not name it (listSessionSubagents) */
  directory: ReadonlyMap<string, { childSessionId: string; subagentType: string | undefined }>;
  /** a child's history could not be read: it is left out */
  onChildSkipped(childSessionId: string, error: unknown): void;
}

/** children whose history one read replays (a parent with more has the rest left out) */
export const MAX_CHILDREN_REPLAYED = 64;

async function* replayPages(
  host: HostClient,
  ref: SessionRef,
  marks: PageMark[],
  newest: Row[],
  childReplay: ChildReplay | undefined,
): AsyncGenerator<SnapshotMessage[]> {
  let started = false;
  const replayed = new Set<string>();
  for (let index = marks.length - 1; index >= 0; index--) {
    let rows: Row[];
    if (index === 0) rows = newest;
    else {
      const mark = marks[index]!;
      const page = await readPage(host, ref, mark.before, mark.limit);
      if (page.crc !== mark.crc || page.rows.length !== mark.count || String(page.rows[0]?.rowId ?? "") !== mark.first) {
        throw new ChangedError(started);
      }
      rows = page.rows;
    }
    if (!childReplay) {
      const messages = rowsToMessages(rows);
      if (messages.length === 0) continue;
      started = true;
      yield messages;
      continue;
    }
    // the page cut after each subagent row, the child's history between the pieces
    let from = 0;
    for (let at = 0; at <= rows.length; at++) {
      const row = rows[at];
      const child = row?.kind === "subagent" ? childOf(row, childReplay) : undefined;
      if (row && !child) continue;
      const messages = rowsToMessages(rows.slice(from, at + 1));
      from = at + 1;
      if (messages.length > 0) {
        started = true;
        yield messages;
      }
      if (!child || replayed.has(child.childSessionId) || replayed.size >= MAX_CHILDREN_REPLAYED) continue;
      replayed.add(child.childSessionId);
      try {
        for await (const piece of rowsHistory(host, { workspacePath: ref.workspacePath, sessionId: child.childSessionId })) {
          const tools = piece.filter((message) => message.parts.some((part) => part.type === "tool"));
          for (const message of tools)
            for (const part of message.parts) part.metadata = { ...(isRecord(part.metadata) ? part.metadata : {}), ...child.metadata };
          if (tools.length === 0) continue;
          started = true;
          yield tools;
        }
      } catch (error) {
        if (error instanceof ChangedError) throw error;
        childReplay.onChildSkipped(child.childSessionId, error);
      }
    }
  }
}

/** the child a `subagent` row names (or the directory, by its Agent call), and what its tool parts say of it */
function childOf(row: Row, replay: ChildReplay): { childSessionId: string; metadata: Record<string, unknown> } | undefined {
  const parentToolCallId = nonEmpty(row.parentToolCallId);
  const listed = parentToolCallId ? replay.directory.get(parentToolCallId) : undefined;
  const childSessionId = nonEmpty(row.childSessionId) ?? listed?.childSessionId;
  if (!childSessionId) return undefined;
  const agentType = nonEmpty(row.subagentType) ?? listed?.subagentType;
  return {
    childSessionId,
    metadata: {
      source: "subagent",
      childSessionId,
      ...(parentToolCallId ? { parentToolCallId } : {}),
      ...(agentType ? { agentType } : {}),
    },
  };
}

/**
 * The session's history (see the header). `childReplay`: a parent session's read, whose subagents'
 * tools are read from their own conversations; without it (a child's own read) none are.
 */
export async function* rowsHistory(host: HostClient, ref: SessionRef, childReplay?: ChildReplay): AsyncGenerator<SnapshotMessage[]> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const read = await readMarks(host, ref);
    if (!read) continue;
    try {
      yield* replayPages(host, ref, read.marks, read.newest, childReplay);
      return;
    } catch (error) {
      if (!(error instanceof ChangedError)) throw error;
      if (error.started) {
        throw new BridgeError(
          "HOST_CALL_FAILED",
          "ZCode's conversation changed while its history was replayed (older rows differ from the first read). Load the session again once it is idle.",
        );
      }
    }
  }
  throw new BridgeError(
    "HOST_CALL_FAILED",
    `ZCode's conversation kept changing while its history was read (${ATTEMPTS} attempts). Load the session again once it is idle.`,
  );
}

const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** rows (oldest first) → legacy snapshot messages; rows without a history equivalent are skipped */
export function rowsToMessages(rows: readonly Row[]): SnapshotMessage[] {
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
        messages.push({ info: { role: "assistant", messageId }, parts: [part as SnapshotMessage["parts"][number]] });
        break;
      }
      case "timelineMarker":
        // a compaction (marker `{type:"compact", …}`: projection.ts `compactionPart`); other markers have no ACP equivalent
        if (isCompactMarker(row)) {
          messages.push({
            info: { role: "assistant", messageId },
            parts: [compactionPart(row) as SnapshotMessage["parts"][number]],
          });
        }
        break;
      default:
        break;
    }
  }
  return messages;
}
