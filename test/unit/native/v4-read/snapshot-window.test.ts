/**
 * A snapshot in the middle of a long turn (ZCode's unsolicited online snapshot, or a resync's
 * answer) carries only the conversation's last 60 rows (zcode-v4.md §3.5): the rows that left with
 * the window stay known (row-store.ts `replace`), so the turn's end and its tools' results are still
 * said; a snapshot whose A zone is idle ends a turn whose header it no longer shows. Also the bound's
 * leftovers (review 2026-12-07 #15): rows of an ended turn go even when their own status is not
 * terminal.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { openConversation } from "../../../../src/native/v4-read/conversation-reader.js";
import { ConversationProjection } from "../../../../src/native/v4-read/projection.js";
import { RowStore, type Touched } from "../../../../src/native/v4-read/row-store.js";
import type { BridgeError } from "../../../../src/util/errors.js";
import { complete, deltas, logical, resetRows, row, SESSION, snapshot, snapshotPayload } from "./frames.js";
import { StubHost } from "./stub-host.js";

type Ev = { type: string; event?: { type: string; seq: number; turnId?: string; payload: Record<string, any> } };

/** ZCode's wire snapshot window (snapshotTailWindowRows) */
const WINDOW = 60;
const RUNNING = { phase: "running", canStop: true, activeWorks: [{ kind: "turn", foregroundExecutionId: "x" }], lastError: null };

async function open(host: StubHost) {
  const events: Ev[] = [];
  const ends: Array<BridgeError | null> = [];
  await openConversation(
    { workspacePath: "/w", sessionId: SESSION },
    { onEvent: (e) => void events.push(e as Ev), onEnd: (e) => void ends.push(e) },
    { host, logger: silentLogger, startSeq: 0, onSeq: () => undefined, normalise: (e) => e, now: () => 5 },
  );
  const inner = () => events.filter((e) => e.type === "session.event").map((e) => [e.event!.type, e.event!.payload] as const);
  return { events, ends, inner };
}

/** a running turn of `tools` finished Read tools and one still running at the start, as rows */
function longTurn(tools: number) {
  const header = row("turnHeader", { state: "running", sourceCommandId: "c1" });
  const input = row("userInput", { text: "read them all" });
  const slow = row("toolCall", { toolCallId: "slow", toolName: "Bash", status: "running", input: { command: "make" } });
  const reads = Array.from({ length: tools }, (_, i) =>
    row("toolCall", { toolCallId: `read-${i}`, toolName: "Read", status: "success", input: { i }, output: { text: `file ${i}` } }),
  );
  return { header, input, slow, reads, all: [header, input, slow, ...reads] };
}

describe("V4 reader: a snapshot in the middle of a long turn", () => {
  beforeEach(() => resetRows());

  it("a running header outside an online snapshot's window still ends its turn when ZCode upserts it", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    const turn = longTurn(70);
    host.frame(complete(2, logical(10, 11, deltas(...turn.all.map((item) => ({ op: "row.appended", row: item }))))));
    expect(r.inner().filter(([type]) => type === "turn.started")).toHaveLength(1);
    // ZCode's slow-subscriber fallback: an online snapshot of the last 60 rows (the header is not among them)
    const window = turn.all.slice(-WINDOW);
    expect(window).not.toContain(turn.header);
    host.frame(complete(3, logical(0, 20, snapshotPayload(snapshot(20, { control: RUNNING }, window)))));
    expect(host.callsOf("resyncConversationV4")).toEqual([]);
    const said = r.inner().length;
    // the tool that started before the window finishes, then the turn
    host.frame(
      complete(4, logical(20, 21, deltas({ op: "row.upserted", row: { ...turn.slow, status: "success", output: { text: "built" } } }))),
    );
    host.frame(complete(5, logical(21, 22, deltas({ op: "row.upserted", row: { ...turn.header, state: "completedSuccess" } }))));
    expect(r.inner().slice(said)).toEqual([
      ["tool.updated", { kind: "result", toolCallId: "slow", toolName: "Bash", result: { success: true, content: "built" } }],
      ["turn.completed", { resultType: "success", inputId: "c1" }],
    ]);
    expect(r.ends).toEqual([]);
  });

  it("a snapshot taken after the turn ended (its header outside the window, the A zone idle) ends the turn as the phase says", async () => {
    for (const [phase, expected] of [
      ["completedSuccess", ["turn.completed", { resultType: "success", inputId: "c1" }]],
      ["completedInterrupted", ["turn.completed", { resultType: "cancelled", inputId: "c1" }]],
      ["error", ["turn.failed", { error: { message: "quota", code: "Q" }, inputId: "c1" }]],
    ] as const) {
      resetRows();
      const host = new StubHost();
      const r = await open(host);
      host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
      const turn = longTurn(70);
      host.frame(complete(2, logical(10, 11, deltas(...turn.all.map((item) => ({ op: "row.appended", row: item }))))));
      const control = { phase, canStop: false, activeWorks: [], lastError: phase === "error" ? { code: "Q", message: "quota" } : null };
      host.frame(complete(3, logical(0, 30, snapshotPayload(snapshot(30, { control }, turn.all.slice(-WINDOW))))));
      const ends = r.inner().filter(([type]) => type === "turn.completed" || type === "turn.failed");
      expect(ends).toEqual([expected]);
      // the header's own upsert (a late delta) says nothing twice
      host.frame(complete(4, logical(30, 31, deltas({ op: "row.upserted", row: { ...turn.header, state: "completedSuccess" } }))));
      expect(r.inner().filter(([type]) => type === "turn.completed" || type === "turn.failed")).toHaveLength(1);
    }
  });

  it("a running session's snapshot ends nothing, and a header held in the window is never ended by the phase", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    const turn = longTurn(70);
    host.frame(complete(2, logical(10, 11, deltas(...turn.all.map((item) => ({ op: "row.appended", row: item }))))));
    host.frame(complete(3, logical(0, 20, snapshotPayload(snapshot(20, { control: RUNNING }, turn.all.slice(-WINDOW))))));
    expect(r.inner().filter(([type]) => type === "turn.completed")).toEqual([]);
    // a short turn whose header is in the window: its own state counts, not the phase
    resetRows();
    const other = new StubHost();
    const o = await open(other);
    other.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    const short = longTurn(3);
    other.frame(complete(2, logical(10, 11, deltas(...short.all.map((item) => ({ op: "row.appended", row: item }))))));
    const idle = { phase: "completedSuccess", canStop: false, activeWorks: [], lastError: null };
    other.frame(complete(3, logical(0, 20, snapshotPayload(snapshot(20, { control: idle }, short.all)))));
    expect(o.inner().filter(([type]) => type === "turn.completed")).toEqual([]);
  });
});

describe("V4 row store: the window and the bound's leftovers", () => {
  beforeEach(() => resetRows());

  function setup(bounds = { rows: 8, bytes: 1 << 30, remembered: 64 }) {
    const store = new RowStore(bounds);
    const projection = new ConversationProjection({ workspacePath: "/w", sessionId: SESSION }, silentLogger, 0, () => 1);
    store.replace(snapshot(1));
    projection.snapshot(store, true);
    const frame = (...list: unknown[]) => {
      const touched: Touched = { rows: [], removed: [], zone: false };
      for (const delta of list) store.apply(delta, touched);
      const events = projection.changed(store, touched);
      projection.forget(store.evict());
      return events;
    };
    return { store, projection, frame };
  }

  it("rows before the window are remembered; rows after the window's start that it lacks were removed", () => {
    const { store } = setup({ rows: 1000, bytes: 1 << 30, remembered: 64 });
    const rows = Array.from({ length: 10 }, (_, i) => row("assistantText", { turnId: "T1", text: `t${i}`, state: "complete" }));
    const touched: Touched = { rows: [], removed: [], zone: false };
    for (const item of rows) store.apply({ op: "row.appended", row: item }, touched);
    // the window starts at row 5; row 7 is gone
    const window = rows.slice(5).filter((_, i) => i !== 2);
    const outside = store.replace(snapshot(5, {}, window));
    expect(outside.map(Number)).toEqual(rows.slice(0, 5).map((item) => item.rowId));
    for (const item of rows.slice(0, 5)) expect(store.wasEvicted(String(item.rowId))).toBe(true);
    expect(store.wasEvicted(String(rows[7]!.rowId))).toBe(false);
    expect(store.rows.has(String(rows[7]!.rowId))).toBe(false);
    // a row.delta of a row outside the window does nothing (ZCode's reducer does the same)
    store.apply({ op: "row.delta", rowId: rows[0]!.rowId, path: "text", append: "x" }, touched);
  });

  it("a tool left running in a turn whose header is terminal is let go; a late delta of it changes nothing", () => {
    const { store, frame } = setup();
    const header = row("turnHeader", { turnId: "L", state: "running" });
    const tool = row("toolCall", { turnId: "L", toolCallId: "left", toolName: "Bash", status: "running", input: {} });
    const text = row("assistantText", { turnId: "L", text: "", state: "streaming" });
    frame({ op: "row.appended", row: header }, { op: "row.appended", row: tool }, { op: "row.appended", row: text });
    frame({ op: "row.upserted", row: { ...header, state: "completedInterrupted" } });
    // enough later turns to pass the bound many times over
    for (let i = 0; i < 20; i++) {
      const h = row("turnHeader", { turnId: `N${i}`, state: "running" });
      frame(
        { op: "row.appended", row: h },
        { op: "row.appended", row: row("assistantText", { turnId: `N${i}`, text: "a", state: "complete" }) },
      );
      frame({ op: "row.upserted", row: { ...h, state: "completedSuccess" } });
    }
    expect(store.rows.has(String(tool.rowId))).toBe(false);
    expect(store.rows.has(String(text.rowId))).toBe(false);
    expect(store.wasEvicted(String(tool.rowId))).toBe(true);
    expect(() => frame({ op: "row.delta", rowId: tool.rowId, path: "output.text", append: "late" })).not.toThrow();
  });

  it("the remembered rows' fields are counted in the held bytes", () => {
    const { store, frame } = setup({ rows: 2, bytes: 1 << 30, remembered: 64 });
    const long = "t".repeat(5000);
    for (let i = 0; i < 6; i++) {
      const h = row("turnHeader", { turnId: `${long}${i}`, state: "running" });
      frame({ op: "row.appended", row: h });
      frame({ op: "row.upserted", row: { ...h, state: "completedSuccess" } });
    }
    expect(store.remembered).toBeGreaterThan(0);
    expect(store.rememberedBytes).toBeGreaterThan(5000 * store.remembered);
    expect(store.heldBytes).toBeGreaterThanOrEqual(store.rememberedBytes);
  });
});
