/** session/list pages (src/acp/session-list-page.ts): page size, opaque cursor, invalid cursors. */
import type { SessionInfo } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { SESSION_LIST_PAGE_SIZE, decodeCursor, encodeCursor, listPage } from "../../../src/acp/session-list-page.js";
import { isBridgeError } from "../../../src/util/errors.js";

const list = (n: number, prefix = "ses_"): SessionInfo[] =>
  Array.from({ length: n }, (_, i) => ({ sessionId: `${prefix}${i}`, cwd: "/w" }));

function pages(sessions: SessionInfo[], cwd: string | undefined, size: number): SessionInfo[][] {
  const out: SessionInfo[][] = [];
  let cursor: string | undefined;
  do {
    const page = listPage(sessions, cwd, cursor, size);
    out.push(page.sessions);
    cursor = page.nextCursor;
  } while (cursor !== undefined && out.length < 100);
  return out;
}

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isBridgeError(error, "INVALID_PARAMS")).toBe(true);
    return (error as Error).message;
  }
  throw new Error("not refused");
}

describe("session/list pages", () => {
  it("a page size between 20 and 200", () => {
    expect(SESSION_LIST_PAGE_SIZE).toBeGreaterThanOrEqual(20);
    expect(SESSION_LIST_PAGE_SIZE).toBeLessThanOrEqual(200);
  });

  it.each([0, 1, 49, 50, 51, 100, 101, 250])("%i sessions: every one once, in order, full pages, no cursor after the last", (n) => {
    const all = list(n);
    const got = pages(all, "/w", 50);
    expect(got.flat()).toEqual(all);
    expect(got.slice(0, -1).every((p) => p.length === 50)).toBe(true);
    expect(got.length).toBe(Math.max(1, Math.ceil(n / 50)));
  });

  it("sessions created between pages do not repeat a page", () => {
    const all = list(120);
    const first = listPage(all, "/w", undefined, 50);
    const newer = [...list(7, "new_"), ...all];
    const second = listPage(newer, "/w", first.nextCursor, 50);
    expect(second.sessions.map((s) => s.sessionId)).toEqual(all.slice(50, 100).map((s) => s.sessionId));
  });

  it("the last session of the page gone: the next page starts at its old position", () => {
    const all = list(120);
    const first = listPage(all, "/w", undefined, 50);
    const without = all.filter((s) => s.sessionId !== "ses_49");
    expect(listPage(without, "/w", first.nextCursor, 50).sessions[0]!.sessionId).toBe("ses_50");
  });

  it("a cursor for another cwd, or for no cwd, is refused", () => {
    const first = listPage(list(60), "/w", undefined, 50);
    expect(refused(() => listPage(list(60), "/other", first.nextCursor, 50))).toContain("another cwd");
    expect(refused(() => listPage(list(60), undefined, first.nextCursor, 50))).toContain("another cwd");
  });

  it.each([
    ["not base64url", "not a cursor!"],
    ["base64 of garbage", Buffer.from("hello").toString("base64url")],
    ["another version", Buffer.from(JSON.stringify({ v: 2, cwd: "/w", after: "x", offset: 1 })).toString("base64url")],
    ["a negative offset", Buffer.from(JSON.stringify({ v: 1, cwd: "/w", after: "x", offset: -5 })).toString("base64url")],
    ["a missing session id", Buffer.from(JSON.stringify({ v: 1, cwd: "/w", offset: 3 })).toString("base64url")],
    ["empty", ""],
    ["huge", "A".repeat(10_000)],
  ])("%s → INVALID_PARAMS with what to do", (_name, cursor) => {
    expect(refused(() => decodeCursor(cursor, "/w"))).toContain("pass the nextCursor of the previous page unchanged");
  });

  it("round trip", () => {
    const cursor = encodeCursor({ cwd: null, after: "ses_1", offset: 50 });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, undefined)).toEqual({ v: 1, cwd: null, after: "ses_1", offset: 50 });
  });
});
