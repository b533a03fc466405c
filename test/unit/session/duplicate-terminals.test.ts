/**
 * Duplicate terminal events. The simulated host never repeats a terminal, so these
 * run on the real session engine with the in-memory fake host: a second turn.completed or
 * turn.failed for the same native turn, right away or while the next prompt runs, and an exact
 * replay (same seq). The prompt is answered once, usage is reported once, a later prompt is never
 * ended by an old terminal, and a replayed seq only makes the next prompt resynchronise.
 */
import { describe, expect, it } from "vitest";
import { joined, openSession, setup, updatesWritten } from "./harness.js";

describe("faults: duplicate terminal events", () => {
  it("a second terminal of the same turn is dropped: one answer, one usage report, nothing after it", async () => {
    const h = setup();
    const { engine, opened } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      const turnId = s.startTurn();
      s.text("once", "m1");
      s.complete("success");
      s.event("turn.completed", { resultType: "success" }, { turnId });
      s.event("turn.failed", { error: { message: "late failure" } }, { turnId });
      s.event("model.streaming", { kind: "text_delta", assistantMessageId: "m1", delta: " LATE" }, { turnId });
    };
    await expect(engine.prompt([{ type: "text", text: "one" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    await updatesWritten(h);
    expect(h.host.callsOf("getTaskTokenUsage")).toHaveLength(1);
    expect(joined(h.client.updates(opened.sessionId), "agent_message_chunk")).toBe("once");
    expect(h.client.kinds(opened.sessionId).filter((k) => k === "usage_update")).toHaveLength(1);
    expect(h.host.operations).toEqual([]); // no stop: nothing was wrong with the turn
  });

  it("an old turn's duplicate terminal arriving during the next prompt does not end it", async () => {
    const h = setup();
    const { engine, opened } = await openSession(h);
    let firstTurn = "";
    h.host.script.onPrompt = (s) => {
      firstTurn = s.startTurn();
      s.complete("success");
    };
    await expect(engine.prompt([{ type: "text", text: "first" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    let finish!: () => void;
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("second turn", "m2");
      s.event("turn.completed", { resultType: "error_max_turns" }, { turnId: firstTurn }); // the old turn's, again
      s.event("turn.failed", { error: { message: "old failure" } }, { turnId: firstTurn });
      finish = () => s.complete("success");
    };
    let settled = false;
    const second = engine.prompt([{ type: "text", text: "second" }]).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finish();
    await expect(second).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(joined(h.client.updates(opened.sessionId), "agent_message_chunk")).toBe("second turn");
  });

  it("an exact replay of a terminal (same seq) is a protocol error outside a prompt: the next prompt resynchronises and works", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      const turnId = s.startTurn();
      s.complete("success");
      s.event("turn.completed", { resultType: "success" }, { turnId, seq: s.seq });
    };
    await expect(engine.prompt([{ type: "text", text: "one" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    const reads = h.host.callsOf("readSession").length;
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("fine", "m3");
      s.complete("success");
    };
    await expect(engine.prompt([{ type: "text", text: "two" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("readSession").length).toBeGreaterThan(reads + 1); // the resync read + the usage read
  });
});
