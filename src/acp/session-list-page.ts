/**
 * `session/list` in pages (docs/acp.md §2.3): the session service returns every session of the
 * workspace (ZCode lists them newest first); this cuts one page of SESSION_LIST_PAGE_SIZE and a
 * `nextCursor` when more follow.
 *
 * The cursor is opaque to clients (base64url of a small JSON object) and stateless: it names the
 * last session of the page it ends, its position, and the `cwd` filter it was made for. The next
 * page starts after that session where it is now, so sessions created in between do not repeat
 * the page; if it is gone, the page starts where it was. A cursor that is not one of ours,
 * or is used with another `cwd`, is refused with -32602 (invalid params).
 */
import type { SessionInfo } from "@agentclientprotocol/sdk";
import { BridgeError } from "../util/errors.js";

export const SESSION_LIST_PAGE_SIZE = 50;

interface Cursor {
  v: 1;
  /** the cwd filter of the listing, null for none */
  cwd: string | null;
  /** sessionId of the last session of the previous page */
  after: string;
  /** how many sessions the previous pages held */
  offset: number;
}

function invalidCursor(why: string): BridgeError {
  return new BridgeError(
    "INVALID_PARAMS",
    `Invalid session/list cursor (${why}): pass the nextCursor of the previous page unchanged, ` +
      `with the same cwd, or leave it out to start from the first page.`,
  );
}

export function encodeCursor(cursor: Omit<Cursor, "v">): string {
  return Buffer.from(JSON.stringify({ v: 1, ...cursor })).toString("base64url");
}

export function decodeCursor(raw: string, cwd: string | undefined): Cursor {
  if (raw.length === 0 || raw.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalidCursor("not a zcode-acp cursor");
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor("not a zcode-acp cursor");
  }
  const c = value as Partial<Cursor> | null;
  if (
    typeof c !== "object" ||
    c === null ||
    c.v !== 1 ||
    typeof c.after !== "string" ||
    !Number.isSafeInteger(c.offset) ||
    (c.offset as number) < 1 ||
    !(typeof c.cwd === "string" || c.cwd === null)
  ) {
    throw invalidCursor("not a zcode-acp cursor");
  }
  if (c.cwd !== (cwd ?? null)) throw invalidCursor("made for another cwd");
  return c as Cursor;
}

/** one page of `sessions` (the full list, in the service's order) after `cursor` */
export function listPage(
  sessions: readonly SessionInfo[],
  cwd: string | undefined,
  cursor: string | null | undefined,
  pageSize = SESSION_LIST_PAGE_SIZE,
): { sessions: SessionInfo[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined && cursor !== null) {
    const c = decodeCursor(cursor, cwd);
    const at = sessions.findIndex((s) => s.sessionId === c.after);
    // gone (closed, archived): the sessions after it moved up by one
    start = at >= 0 ? at + 1 : Math.min(c.offset - 1, sessions.length);
  }
  const page = sessions.slice(start, start + pageSize);
  const end = start + page.length;
  const last = page.at(-1);
  if (end >= sessions.length || last === undefined) return { sessions: page };
  return { sessions: page, nextCursor: encodeCursor({ cwd: cwd ?? null, after: last.sessionId, offset: end }) };
}
