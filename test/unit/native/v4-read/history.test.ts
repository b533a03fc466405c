import { describe, expect, it } from "vitest";
import { rowsHistory, rowsToMessages } from "../../../../src/native/v4-read/history.js";
import { StubHost } from "./stub-host.js";

const REF = { workspacePath: "/w", sessionId: "S1" };

function rows(from: number, to: number): Array<Record<string, unknown>> {
  const out = [];
  for (let id = from; id <= to; id++) out.push({ rowId: id, kind: "userInput", turnId: `T${id}`, text: `m${id}`, createdAt: id });
  return out;
}

async function collect(host: StubHost): Promise<string[]> {
  const texts: string[] = [];
  for await (const piece of rowsHistory(host, REF)) for (const m of piece) texts.push(String(m.parts[0]!.text));
  return texts;
}

/** a history of `total` rows, paged newest first by beforeRowId (ids 1..total) */
function pagedHost(total: number, at: () => Record<string, unknown> = () => ({ atSeq: 9, atRevision: 9, atLogEpoch: "E" })) {
  const host = new StubHost();
  host.handlers.set("conversationRowsRangeV4", (params) => {
    const before = typeof params.beforeRowId === "number" ? params.beforeRowId : total + 1;
    const limit = params.limit as number;
    const first = Math.max(1, before - limit);
    return { rows: rows(first, before - 1), hasMore: first > 1, ...at() };
  });
  return host;
}

describe("V4 history from rows pages", () => {
  it("pages back 200 rows at a time with beforeRowId, then reads the older pages again oldest first and hands each out as it comes", async () => {
    const host = pagedHost(450);
    const calls = () => host.callsOf("conversationRowsRangeV4").length;
    const pieces: Array<{ first: string; count: number; callsSoFar: number }> = [];
    for await (const piece of rowsHistory(host, REF)) {
      pieces.push({ first: String(piece[0]!.parts[0]!.text), count: piece.length, callsSoFar: calls() });
    }
    // oldest first, one page per piece; each older page read again just before it goes out (never all held)
    expect(pieces).toEqual([
      { first: "m1", count: 50, callsSoFar: 4 },
      { first: "m51", count: 200, callsSoFar: 5 },
      { first: "m251", count: 200, callsSoFar: 5 },
    ]);
    expect(host.callsOf("conversationRowsRangeV4")).toEqual([
      { workspacePath: "/w", sessionId: "S1", limit: 200 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 251 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 51 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 51 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 251 },
    ]);
  });

  it("a history of one page is read once", async () => {
    const host = pagedHost(120);
    expect(await collect(host)).toHaveLength(120);
    expect(host.callsOf("conversationRowsRangeV4")).toHaveLength(1);
  });

  it("an older page that differs on its second read starts over before anything went out, and fails closed after", async () => {
    // the oldest page (rows 1..50) differs on its second read only, once: the read starts over
    let changed = 0;
    const host = new StubHost();
    host.handlers.set("conversationRowsRangeV4", (params) => {
      const before = typeof params.beforeRowId === "number" ? params.beforeRowId : 451;
      const first = Math.max(1, before - (params.limit as number));
      const page = rows(first, before - 1);
      const reads = host.callsOf("conversationRowsRangeV4").filter((c) => c.beforeRowId === 51).length;
      if (before === 51 && reads === 2 && changed++ === 0) page[0]!.text = "edited";
      return { rows: page, hasMore: first > 1, atSeq: 9, atRevision: 9, atLogEpoch: "E" };
    });
    const texts = await collect(host);
    expect(texts).toHaveLength(450);
    expect(texts[0]).toBe("m1");
    expect(host.callsOf("conversationRowsRangeV4")).toHaveLength(4 + 5);
    // the middle page differs on its second read, after the oldest went out: HOST_CALL_FAILED, not a repeat
    const late = new StubHost();
    late.handlers.set("conversationRowsRangeV4", (params) => {
      const before = typeof params.beforeRowId === "number" ? params.beforeRowId : 451;
      const first = Math.max(1, before - (params.limit as number));
      const page = rows(first, before - 1);
      if (before === 251 && late.callsOf("conversationRowsRangeV4").filter((c) => c.beforeRowId === 251).length > 1) page.pop();
      return { rows: page, hasMore: first > 1, atSeq: 9, atRevision: 9, atLogEpoch: "E" };
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const piece of rowsHistory(late, REF)) for (const m of piece) seen.push(String(m.parts[0]!.text));
      })(),
    ).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => `m${i + 1}`));
  });

  it("reads again when the conversation changed between pages, and gives up after three attempts", async () => {
    let n = 0;
    const host = pagedHost(300, () => ({ atSeq: n++ < 1 ? 1 : 2, atRevision: 1, atLogEpoch: "E" }));
    expect(await collect(host)).toHaveLength(300);
    // two pages read, read again (the first pass changed), the older one a third time to go out
    expect(host.callsOf("conversationRowsRangeV4")).toHaveLength(5);
    const changing = pagedHost(300, () => ({ atSeq: n++, atRevision: 1, atLogEpoch: "E" }));
    await expect(collect(changing)).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    expect(changing.callsOf("conversationRowsRangeV4")).toHaveLength(6);
  });

  it("refuses pages that do not advance and answers without rows", async () => {
    const stuck = new StubHost();
    stuck.handlers.set("conversationRowsRangeV4", () => ({ rows: rows(5, 6), hasMore: true, atSeq: 1 }));
    await expect(collect(stuck)).rejects.toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    const empty = new StubHost();
    empty.handlers.set("conversationRowsRangeV4", () => ({ hasMore: false }));
    await expect(collect(empty)).rejects.toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
  });

  it("rows become the snapshot messages history replay reads", () => {
    expect(
      rowsToMessages([
        { rowId: 1, kind: "turnHeader", state: "completedSuccess" },
        { rowId: 2, kind: "userInput", text: "do it" },
        { rowId: 3, kind: "reasoning", text: "hmm" },
        { rowId: 4, kind: "assistantText", text: "done", assistantResponseId: "m1" },
        {
          rowId: 5,
          kind: "toolCall",
          toolCallId: "c1",
          toolName: "Bash",
          status: "success",
          input: { command: "ls" },
          output: { text: "a\n" },
        },
        { rowId: 6, kind: "toolCall", toolCallId: "c2", toolName: "Edit", status: "error", input: {}, error: { message: "no match" } },
        { rowId: 7, kind: "toolCall", toolCallId: "c3", toolName: "Read", status: "cancelled" },
        {
          rowId: 8,
          kind: "timelineMarker",
          entityId: "cmp1",
          lane: "assistantWork",
          marker: { type: "compact", origin: "auto", status: "success", tokensBefore: 9000, tokensAfter: 2000, summaryRef: "42" },
        },
        { rowId: 9, kind: "hologram" },
        // the other marker types have no ACP equivalent (and the old guess, a string marker, is no compaction)
        { rowId: 10, kind: "timelineMarker", marker: { type: "modelChange", toProvider: "p", toModel: "m", toThought: "high" } },
        { rowId: 11, kind: "timelineMarker", marker: { type: "forkNotice", parentSessionId: "s0", parentRowId: 3 } },
        { rowId: 12, kind: "timelineMarker", marker: "compact", entityId: "old", status: "completed" },
      ]),
    ).toEqual([
      { info: { role: "user", messageId: "row-2" }, parts: [{ type: "text", text: "do it" }] },
      { info: { role: "assistant", messageId: "row-3" }, parts: [{ type: "reasoning", text: "hmm" }] },
      { info: { role: "assistant", messageId: "m1" }, parts: [{ type: "text", text: "done" }] },
      {
        info: { role: "assistant", messageId: "row-5" },
        parts: [
          {
            type: "tool",
            callId: "c1",
            tool: "Bash",
            state: { status: "completed", input: { command: "ls" }, output: { success: true, content: "a\n" } },
          },
        ],
      },
      {
        info: { role: "assistant", messageId: "row-6" },
        parts: [{ type: "tool", callId: "c2", tool: "Edit", state: { status: "error", input: {}, error: "no match" } }],
      },
      {
        info: { role: "assistant", messageId: "row-7" },
        parts: [{ type: "tool", callId: "c3", tool: "Read", state: { status: "error", error: "cancelled" } }],
      },
      // a compaction marker is the legacy compaction part (replayed only to a client with session.compaction)
      {
        info: { role: "assistant", messageId: "row-8" },
        parts: [
          {
            type: "compaction",
            partId: "cmp1",
            status: "success",
            origin: "auto",
            tokensBefore: 9000,
            tokensAfter: 2000,
            summaryRef: "42",
          },
        ],
      },
    ]);
  });
});
