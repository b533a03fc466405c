/**
 * The row store's bound (src/native/v4-read/row-store.ts "Bound"): finished rows of ended turns go
 * first, running turns stay, every index stays consistent, and each later reference to a let-go row
 * is either applied exactly (upsert, removal, lookups) or fails closed (a delta, a forgotten row).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { ConversationProjection } from "../../../../src/native/v4-read/projection.js";
import {
  EvictedRowError,
  HeldRowsError,
  heldRowsDiagnostics,
  MAX_HELD_ROWS,
  MAX_HELD_ROW_BYTES,
  RowStore,
  type Touched,
} from "../../../../src/native/v4-read/row-store.js";
import { resetRows, row, SESSION, snapshot } from "./frames.js";

const BOUNDS = { rows: 8, bytes: 1 << 30, remembered: 12 };

type Ev = { type: string; event?: { type: string; payload: Record<string, any>; turnId?: string }; request?: Record<string, any> };

function setup(bounds = BOUNDS) {
  const store = new RowStore(bounds);
  const projection = new ConversationProjection({ workspacePath: "/w", sessionId: SESSION }, silentLogger, 0, () => 1);
  store.replace(snapshot(1));
  projection.snapshot(store, true);
  /** one frame: apply, project, evict (as the reader does); returns its events */
  const frame = (...list: unknown[]): Ev[] => {
    const touched: Touched = { rows: [], removed: [], zone: false };
    for (const delta of list) store.apply(delta, touched);
    const events = projection.changed(store, touched) as Ev[];
    projection.forget(store.evict());
    return events;
  };
  /** a whole turn: header, input, a tool and an answer, ended */
  const turn = (n: number): Record<string, any> => {
    const turnId = `T${n}`;
    const header = row("turnHeader", { turnId, state: "running", sourceCommandId: `c${n}` });
    const tool = row("toolCall", {
      turnId,
      toolCallId: `tool-${n}`,
      toolName: "Read",
      status: "success",
      input: { n },
      output: { text: "x" },
    });
    const text = row("assistantText", { turnId, text: `answer ${n}`, state: "complete", assistantResponseId: `m${n}` });
    frame(
      { op: "row.appended", row: header },
      { op: "row.appended", row: row("userInput", { turnId, text: `q${n}` }) },
      { op: "row.appended", row: tool },
      { op: "row.appended", row: text },
    );
    frame({ op: "row.upserted", row: { ...header, state: "completedSuccess" } });
    return { header: { ...header, state: "completedSuccess" }, tool, text };
  };
  const inner = (events: Ev[]) => events.filter((e) => e.type === "session.event").map((e) => [e.event!.type, e.event!.payload] as const);
  return { store, projection, frame, turn, inner };
}

describe("V4 row store: the bound", () => {
  beforeEach(() => resetRows());

  it("names its bounds", () => {
    expect(MAX_HELD_ROWS).toBe(512);
    expect(MAX_HELD_ROW_BYTES).toBe(32 * 1024 * 1024);
  });

  it("lets go of the oldest rows of ended turns past the bound and keeps the newest; the projection's memory is bounded too", () => {
    const { store, projection, turn } = setup();
    const turns = Array.from({ length: 30 }, (_, i) => turn(i + 1));
    expect(store.rows.size).toBeLessThanOrEqual(BOUNDS.rows);
    expect(store.remembered).toBeLessThanOrEqual(BOUNDS.remembered);
    expect(projection.remembered).toBeLessThanOrEqual(BOUNDS.rows + BOUNDS.remembered);
    // the newest turn is held whole
    const last = turns.at(-1)!;
    expect(store.rows.has(String(last.text.rowId))).toBe(true);
    expect(store.rows.has(String(last.header.rowId))).toBe(true);
    // the first turn is gone entirely (forgotten), the indexes with it
    expect(store.toolRow("tool-1")).toBeUndefined();
    expect(store.endedTurns.has("T1")).toBe(false);
    // a let-go but remembered tool row still answers its lookups from its remembered fields
    const remembered = turns.find((t) => store.wasEvicted(String(t.header.rowId)))!;
    expect(store.toolRow(remembered.tool.toolCallId)).toMatchObject({ kind: "toolCall", turnId: remembered.header.turnId });
    expect(store.toolRow(remembered.tool.toolCallId)).not.toHaveProperty("output");
    expect(store.endedTurns.has(remembered.header.turnId)).toBe(true);
  });

  it("never lets go of a running turn's header or a row that can still grow, even when they are the oldest", () => {
    const { store, frame, turn } = setup();
    const header = row("turnHeader", { turnId: "R", state: "running" });
    const streaming = row("assistantText", { turnId: "R", text: "so far", state: "streaming" });
    const waiting = row("toolCall", {
      turnId: "R",
      toolCallId: "w",
      toolName: "Bash",
      status: "pendingApproval",
      approvalInteractionId: "i",
    });
    const done = row("toolCall", { turnId: "R", toolCallId: "d", toolName: "Read", status: "success" });
    frame(
      { op: "row.appended", row: header },
      { op: "row.appended", row: streaming },
      { op: "row.appended", row: waiting },
      { op: "row.appended", row: done },
    );
    for (let i = 0; i < 20; i++) turn(100 + i);
    for (const kept of [header, streaming, waiting]) expect(store.rows.has(String(kept.rowId))).toBe(true);
    expect(store.runningTurn()).toBe("R");
    expect(store.toolRow(undefined, "i")).toBe(store.rows.get(String(waiting.rowId)));
    // the running turn's finished tool was let go of once the ended turns' rows were not enough
    expect(store.rows.size).toBeLessThanOrEqual(BOUNDS.rows);
  });

  it("an upsert of a let-go row takes it back and says exactly what changed; of a never-held row it does nothing", () => {
    const { store, frame, turn, inner } = setup();
    const first = turn(1);
    for (let i = 2; i <= 4; i++) turn(i);
    expect(store.wasEvicted(String(first.text.rowId))).toBe(true);
    expect(store.wasEvicted(String(first.header.rowId))).toBe(true);
    const events = frame(
      { op: "row.upserted", row: { ...first.text, text: "answer 1 and more" } },
      { op: "row.upserted", row: first.header },
      { op: "row.upserted", row: { ...first.tool, status: "error", error: { message: "late failure" } } },
    );
    expect(inner(events)).toEqual([
      ["model.streaming", { kind: "text_delta", delta: " and more", assistantMessageId: "m1" }],
      ["tool.updated", { kind: "error", toolCallId: "tool-1", toolName: "Read", error: { message: "late failure" } }],
    ]);
    expect(inner(frame({ op: "row.upserted", row: { rowId: 10_000, kind: "assistantText", turnId: "Tx", text: "nobody" } }))).toEqual([]);
  });

  it("row.removed of a let-go row removes it and every later row, held or let go; earlier rows stay", () => {
    const { store, frame, turn } = setup();
    const turns = Array.from({ length: 4 }, (_, i) => turn(i + 1));
    const from = turns[1]!.text; // let go of by now
    expect(store.rows.has(String(from.rowId))).toBe(false);
    const kept = [...store.rows.keys()];
    const touched: Touched = { rows: [], removed: [], zone: false };
    store.apply({ op: "row.removed", fromRowId: from.rowId }, touched);
    const removedIds = touched.removed.map(Number);
    expect(Math.min(...removedIds)).toBe(from.rowId);
    expect(kept.every((key) => !store.rows.has(key))).toBe(true); // all held rows were later ones
    expect(store.wasEvicted(String(turns[0]!.text.rowId))).toBe(true);
    expect(store.toolRow("tool-2")).toMatchObject({ turnId: "T2" }); // before the removed row
    expect(store.toolRow("tool-3")).toBeUndefined();
    expect(store.toolRow("tool-4")).toBeUndefined();
    expect(store.endedTurns.has("T4")).toBe(false);
    // no row is held: what is left are the remembered rows' fields, counted too
    expect(store.heldBytes).toBe(store.rememberedBytes);
    expect(store.rememberedBytes).toBeGreaterThan(0);
    void frame;
  });

  it("a row.delta of a let-go row fails closed; of a forgotten one too; of a row outside the window it does nothing", () => {
    const { store, turn } = setup();
    const turns = Array.from({ length: 30 }, (_, i) => turn(i + 1));
    const touched: Touched = { rows: [], removed: [], zone: false };
    const remembered = turns.find((t) => store.wasEvicted(String(t.text.rowId)))!;
    expect(() => store.apply({ op: "row.delta", rowId: remembered.text.rowId, path: "text", append: "x" }, touched)).toThrow(
      EvictedRowError,
    );
    expect(store.wasEvicted(String(turns[0]!.text.rowId))).toBe(false);
    expect(() => store.apply({ op: "row.delta", rowId: turns[0]!.text.rowId, path: "text", append: "x" }, touched)).toThrow(
      EvictedRowError,
    );
    expect(() => store.apply({ op: "row.upserted", row: turns[0]!.text }, touched)).toThrow(EvictedRowError);
    expect(() => store.apply({ op: "row.removed", fromRowId: turns[0]!.text.rowId }, touched)).toThrow(EvictedRowError);
    // below the first row ever held: outside the window, as before
    store.apply({ op: "row.delta", rowId: -5, path: "text", append: "x" }, touched);
    store.apply({ op: "row.removed", fromRowId: -5 }, touched);
    expect(touched.removed).toEqual([]);
  });

  it("a permission naming a let-go tool row is announced once, with the turn remembered for it", () => {
    const { store, frame, turn } = setup();
    const first = turn(1);
    for (let i = 2; i <= 4; i++) turn(i);
    expect(store.wasEvicted(String(first.tool.rowId))).toBe(true);
    const pending = [
      {
        interactionId: "late",
        kind: "permission",
        anchorRowId: first.text.rowId,
        payload: { toolCallId: "tool-1", toolName: "Read", options: [{ optionId: "deny", label: "Deny", kind: "deny" }] },
      },
    ];
    const events = frame({ op: "state.updated", patch: { pendingInteractions: pending } });
    const requests = events.filter((e) => e.type === "permission.request");
    expect(requests).toHaveLength(1);
    expect(requests[0]!.request).toMatchObject({ requestId: "late", turnId: "T1", toolCallId: "tool-1" });
    expect(requests[0]!.request!.options).toEqual([{ optionId: "deny", name: "Deny", kind: "deny", response: { decision: "deny" } }]);
    expect(frame({ op: "state.updated", patch: { revision: 9 } }).filter((e) => e.type === "permission.request")).toEqual([]);
  });

  it("a replacement snapshot takes let-go rows back without saying them again and leaves forgotten ones out", () => {
    const { store, projection, turn } = setup();
    const turns = Array.from({ length: 30 }, (_, i) => turn(i + 1));
    const remembered = turns.filter((t) => store.wasEvicted(String(t.text.rowId))).slice(-2);
    const window = [turns[0]!.header, turns[0]!.text, ...remembered.flatMap((t) => [t.header, t.text]), turns.at(-1)!.text];
    store.replace(snapshot(50, {}, window));
    const events = projection.snapshot(store, false) as Ev[];
    expect(events.filter((e) => e.type === "session.event")).toEqual([]);
    expect(store.rows.has(String(turns[0]!.text.rowId))).toBe(false);
    expect(store.rows.has(String(remembered[0]!.text.rowId))).toBe(true);
  });

  it("counts bytes: large finished rows go by the byte bound", () => {
    const { store, frame } = setup({ rows: 1000, bytes: 10_000, remembered: 100 });
    for (let i = 0; i < 20; i++) {
      const header = row("turnHeader", { turnId: `B${i}`, state: "running" });
      const text = row("assistantText", { turnId: `B${i}`, text: "", state: "streaming" });
      frame({ op: "row.appended", row: header }, { op: "row.appended", row: text });
      frame({ op: "row.delta", rowId: text.rowId, path: "text", append: "y".repeat(2000) });
      frame(
        { op: "row.upserted", row: { ...text, text: "y".repeat(2000), state: "complete" } },
        { op: "row.upserted", row: { ...header, state: "failed" } },
      );
      expect(store.heldBytes).toBeLessThanOrEqual(10_000);
    }
    expect(store.rows.size).toBeLessThan(20);
  });

  it("ends when the unfinished rows alone are past four times the bound", () => {
    const { frame } = setup();
    const header = row("turnHeader", { turnId: "R", state: "running" });
    frame({ op: "row.appended", row: header });
    expect(() => {
      for (let i = 0; i < 40; i++) frame({ op: "row.appended", row: row("assistantText", { turnId: "R", text: "", state: "streaming" }) });
    }).toThrow(HeldRowsError);
  });

  it("reports held rows in the process diagnostics until disposed", () => {
    const before = heldRowsDiagnostics();
    const { store, turn } = setup();
    for (let i = 0; i < 5; i++) turn(i);
    const during = heldRowsDiagnostics();
    expect(during.stores).toBe(before.stores! + 1);
    expect(during.heldRows).toBe(before.heldRows! + store.rows.size);
    expect(during.evictedRows).toBeGreaterThan(before.evictedRows!);
    store.dispose();
    expect(heldRowsDiagnostics().stores).toBe(before.stores);
  });
});
