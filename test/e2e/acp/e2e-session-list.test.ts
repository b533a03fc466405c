/**
 * session/list in pages through the built CLI: a workspace with more sessions than a page, all
 * created through the bridge; every session listed once across the pages; an invalid cursor
 * is -32602. Raw transcript validated (ListSessionsResponse).
 */
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { SESSION_LIST_PAGE_SIZE } from "../../../src/acp/session-list-page.js";
import { e2e } from "../../support/e2e-harness.js";

const t = e2e();

describe("e2e: session/list pages", () => {
  it(`${2 * SESSION_LIST_PAGE_SIZE + 3} sessions in one workspace: three pages with nextCursor, every session once`, async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const other = await t.workspace();
    const created: string[] = [];
    // ZCode keeps a session from its first prompt on (deferred persistence): prompt each once
    const keep = async (cwd: string): Promise<string> => {
      const { sessionId } = await client.newSession(cwd);
      await client.prompt(sessionId, "keep");
      return sessionId;
    };
    for (let i = 0; i < 2 * SESSION_LIST_PAGE_SIZE + 3; i += 1) created.push(await keep(ws));
    const elsewhere = await keep(other);

    const pages: acp.ListSessionsResponse[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.agent.request(acp.methods.agent.session.list, cursor ? { cwd: ws, cursor } : { cwd: ws });
      pages.push(page);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && pages.length < 10);

    expect(pages.map((p) => p.sessions.length)).toEqual([SESSION_LIST_PAGE_SIZE, SESSION_LIST_PAGE_SIZE, 3]);
    expect(pages.slice(0, 2).every((p) => typeof p.nextCursor === "string" && p.nextCursor.length > 0)).toBe(true);
    expect(pages[2]!.nextCursor ?? undefined).toBeUndefined();
    const listed = pages.flatMap((p) => p.sessions.map((s) => s.sessionId));
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...created].sort());
    expect(listed).not.toContain(elsewhere);
    expect(pages.flatMap((p) => p.sessions).every((s) => s.cwd === ws)).toBe(true);

    // a cursor is bound to its cwd, and a made-up one is refused
    const second = pages[0]!.nextCursor!;
    await expect(client.agent.request(acp.methods.agent.session.list, { cwd: other, cursor: second })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(client.agent.request(acp.methods.agent.session.list, { cwd: ws, cursor: "page-2" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("nextCursor"),
    });
    // the same cursor again gives the same page
    const again = await client.agent.request(acp.methods.agent.session.list, { cwd: ws, cursor: second });
    expect(again.sessions.map((s) => s.sessionId)).toEqual(pages[1]!.sessions.map((s) => s.sessionId));
    client.expectValid();
  }, 120_000);
});
