/**
 * A session's subagent directory (`listSessionSubagents`, zcode-3.15.1-source.md §2.4), read for
 * session/load where the install's manifest allows it: `{workspacePath, sessionId, endedCursor?,
 * endedLimit?}` → `{revision, childSessionIds[], running:[…], ended:{total, items:[…],
 * nextCursor?}}`; items carry `childSessionId`, `toolCallId?` (the Agent call), `subagentType`.
 * The bridge keeps, by Agent call, the child it names: what a parent's `subagent` row without a
 * `childSessionId` cannot tell (./history.ts).
 *
 * Bounded: pages of ENDED_PAGE ended items, at most MAX_PAGES pages, at most MAX_ENTRIES entries
 * kept. Fail-soft: any failure or malformed answer leaves what was read (the rows suffice), logged.
 */
import type { HostClient } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import { SUBAGENT_DIRECTORY_METHOD } from "../../manifest/release-lines.js";
import { describeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";

export const ENDED_PAGE = 100;
const MAX_PAGES = 20;
const MAX_ENTRIES = 2048;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

export type SubagentDirectory = Map<string, { childSessionId: string; subagentType: string | undefined }>;

/** the directory by Agent call; empty where the manifest does not allow the call, or it failed */
export async function readSubagentDirectory(host: HostClient, ref: SessionRef, logger: Logger): Promise<SubagentDirectory> {
  const directory: SubagentDirectory = new Map();
  if (!(await host.allows("agent", SUBAGENT_DIRECTORY_METHOD))) return directory;
  const add = (items: unknown): void => {
    if (!Array.isArray(items)) return;
    for (const item of items) {
      if (directory.size >= MAX_ENTRIES || !isRecord(item)) continue;
      const childSessionId = str(item.childSessionId);
      const toolCallId = str(item.toolCallId);
      if (childSessionId && toolCallId) directory.set(toolCallId, { childSessionId, subagentType: str(item.subagentType) });
    }
  };
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const params: Record<string, unknown> = { workspacePath: ref.workspacePath, sessionId: ref.sessionId, endedLimit: ENDED_PAGE };
      if (cursor !== undefined) params.endedCursor = cursor;
      const raw = await host.call<unknown>("agent", SUBAGENT_DIRECTORY_METHOD, params, { timeout: "listSessionSubagents" });
      if (!isRecord(raw) || !isRecord(raw.ended)) {
        logger.warn("ZCode's subagent directory has an unexpected shape; the history's own rows are used", {});
        return directory;
      }
      if (page === 0) add(raw.running);
      add(raw.ended.items);
      const next = str(raw.ended.nextCursor);
      if (!next || next === cursor || directory.size >= MAX_ENTRIES) return directory;
      cursor = next;
    }
  } catch (error) {
    logger.warn("ZCode's subagent directory could not be read; the history's own rows are used", { error: describeError(error) });
  }
  return directory;
}
