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
  it("pages back 200 rows at a time with beforeRowId and hands the history out oldest first", async () => {
    const host = pagedHost(450);
    const texts = await collect(host);
    expect(texts).toHaveLength(450);
    expect(texts[0]).toBe("m1");
    expect(texts.at(-1)).toBe("m450");
    expect(host.callsOf("conversationRowsRangeV4")).toEqual([
      { workspacePath: "/w", sessionId: "S1", limit: 200 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 251 },
      { workspacePath: "/w", sessionId: "S1", limit: 200, beforeRowId: 51 },
    ]);
  });

  it("reads again when the conversation changed between pages, and gives up after three attempts", async () => {
    let n = 0;
    const host = pagedHost(300, () => ({ atSeq: n++ < 1 ? 1 : 2, atRevision: 1, atLogEpoch: "E" }));
    expect(await collect(host)).toHaveLength(300);
    expect(host.callsOf("conversationRowsRangeV4")).toHaveLength(4);
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
        { rowId: 8, kind: "timelineMarker", marker: "compact", entityId: "cmp1", status: "completed", summaryText: "so far", auto: true },
        { rowId: 9, kind: "hologram" },
        { rowId: 10, kind: "timelineMarker", marker: "modelChange" },
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
        parts: [{ type: "compaction", partId: "cmp1", status: "completed", summary: "so far", auto: true }],
      },
    ]);
  });
});
