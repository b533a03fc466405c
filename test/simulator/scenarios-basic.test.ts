import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { promptToEnd, sessionRig, waitForCallLog, WS } from "./support/session-helpers.js";
import { expectIncreasingSeq, expectWellFormed, streamingKinds, terminals } from "./support/envelopes.js";

describe("plain and streaming scenarios", () => {
  it("plain: state.updated → turn.started → title → text deltas → exactly one turn.completed, seq increasing with gaps", async () => {
    const rig = await sessionRig();
    const { ack, terminal, turn } = await promptToEnd(rig, "hello simulator");
    expect(ack).toMatchObject({ sessionId: rig.sessionId, accepted: true });
    const tops = rig.events.events.map((e) => (e.type === "session.event" ? e.event.type : e.type));
    expect(tops.slice(0, 3)).toEqual(["snapshot", "state.updated", "turn.started"]);
    expect(turn.map((e) => e.type)).toEqual([
      "turn.started",
      "session.titleUpdated",
      "session.updated",
      "model.streaming",
      "model.streaming",
      "model.streaming",
      "turn.completed",
    ]);
    expectWellFormed(turn, rig.sessionId);
    const all = rig.events.sessionEvents();
    expect(expectIncreasingSeq(all)).toBe(true);
    expect(terminals(all)).toHaveLength(1);
    const deltas = turn.filter((e) => e.type === "model.streaming");
    expect(new Set(deltas.map((e) => e.payload.assistantMessageId)).size).toBe(1);
    expect(deltas.map((e) => e.payload.delta).join("")).toBe("You said: hello simulator");
    expect(turn[1].payload).toMatchObject({ title: "hello simulator", previousTitle: "", source: "first_input" });
    expect(terminal.payload).toMatchObject({ resultType: "success", response: "You said: hello simulator", toolCallCount: 0 });
    expect(terminal.payload.tokenCount).toBeGreaterThan(0);
    expect(typeof terminal.payload.duration).toBe("number");
    await rig.events.waitFor((e) => e.type === "state.updated" && e.notification.patch.status === "idle");
    const log = await waitForCallLog(
      rig.install,
      (entries) => entries.some((e) => e.kind === "fire" && e.type === "turn.completed"),
      "the terminal's fire entry",
    );
    expect(log.filter((e) => e.kind === "call" && e.method === "sendPrompt")).toHaveLength(1);
    expect(log.filter((e) => e.kind === "fire" && e.top === "session.event").map((e) => e.eventSeq)).toEqual(all.map((e) => e.seq));
  });

  it("sim:plain with chunks=N: the echo without the token, in N deltas", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:plain chunks=5 echo this back");
    const deltas = turn.filter((e) => e.type === "model.streaming");
    expect(deltas).toHaveLength(5);
    expect(deltas.map((e) => e.payload.delta).join("")).toBe("You said: echo this back");
  });

  it("reasoning: reasoning deltas before text deltas", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:reasoning");
    const kinds = streamingKinds(turn);
    expect(kinds.lastIndexOf("reasoning_delta")).toBeLessThan(kinds.indexOf("text_delta"));
    expect(kinds.filter((k) => k === "reasoning_delta")).toHaveLength(3);
  });

  it("stream n=N bytes=B: N text deltas of B bytes", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:stream n=2000 bytes=16", 20000);
    const deltas = turn.filter((e) => e.type === "model.streaming");
    expect(deltas).toHaveLength(2000);
    expect(deltas.every((e) => e.payload.delta.length === 16)).toBe(true);
    expect(terminal.payload.resultType).toBe("success");
    expectIncreasingSeq(turn);
  });

  it("bench n=N bytes=B rate=R: N deltas of exactly B bytes stamped with their index and emit time", async () => {
    const rig = await sessionRig();
    const before = Date.now();
    const { turn, terminal } = await promptToEnd(rig, "sim:bench n=300 bytes=40");
    const deltas = turn.filter((e) => e.type === "model.streaming").map((e) => e.payload.delta as string);
    expect(deltas).toHaveLength(300);
    expect(deltas.every((d) => d.length === 40)).toBe(true);
    const stamps = deltas.map((d) => /^@(\d+):(\d+\.\d{3});x*$/.exec(d));
    expect(stamps.map((m) => Number(m?.[1]))).toEqual([...Array(300).keys()]);
    expect(Number(stamps[0]?.[2])).toBeGreaterThanOrEqual(before - 1);
    expect(terminal.payload.response).toBe("[bench: 300 deltas of 40 bytes]");
    const paced = await promptToEnd(rig, "sim:bench n=6 bytes=16 rate=100");
    const times = paced.turn.filter((e) => e.type === "model.streaming").map((e) => Number(/^@\d+:(\d+\.\d+);/.exec(e.payload.delta)?.[1]));
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(45); // 6 events at 100/s span >= 50 ms
  });

  it("title: a generated title arrives after turn.completed, while idle, without a turnId", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:title title=Fix_the_tests");
    const title = await rig.events.waitFor(
      (e) => e.type === "session.event" && e.event.type === "session.titleUpdated" && e.event.payload.source === "generated",
    );
    expect(title.event.seq).toBeGreaterThan(terminal.seq);
    expect(title.event.turnId).toBeUndefined();
    expect(title.event.payload).toMatchObject({ title: "Fix the tests", previousTitle: "" });
    expect((await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId })).session.title).toBe("Fix the tests");
  });

  it("todos: three snapshots with changing todos, the last one empty", async () => {
    const rig = await sessionRig();
    await promptToEnd(rig, "sim:todos");
    const todoLists = rig.events.events
      .filter((e) => e.type === "snapshot")
      .slice(1)
      .map((e) => e.snapshot.todos);
    expect(todoLists).toHaveLength(3);
    expect(todoLists[0].map((t: Any) => t.status)).toEqual(["in_progress", "pending", "pending"]);
    expect(todoLists[1].map((t: Any) => t.status)).toEqual(["completed", "completed", "in_progress"]);
    expect(todoLists[2]).toEqual([]);
  });

  it.each(["sim:compact", "/compact"])(
    "%s: ZCode's compaction lifecycle as a context_compaction timeline part (started, completed with counts and summary id); summary model-only",
    async (text) => {
      const rig = await sessionRig();
      const { turn, terminal } = await promptToEnd(rig, text);
      const parts = turn.filter((e) => e.type === "part.upserted").map((e) => e.payload.part);
      expect(parts.map((p: Any) => p.status)).toEqual(["started", "completed"]);
      expect(parts[1]).toMatchObject({
        type: "timeline",
        timelineType: "context_compaction",
        display: "separator",
        partId: parts[0].partId,
        operationId: parts[0].operationId,
        trigger: "manual",
        summaryMessageId: expect.any(String),
        postCompactTokenCount: expect.any(Number),
      });
      // no summary text in the lifecycle (the strict timeline part has no such field)
      expect(parts.some((p: Any) => "summary" in p)).toBe(false);
      expect(terminal.payload).toMatchObject({ resultType: "success" });
      const read = await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId });
      const messages = read.messages as Any[];
      const stored = messages.flatMap((m: Any) => m.parts).filter((p: Any) => p.type === "timeline");
      expect(stored).toEqual([expect.objectContaining({ operationId: parts[0].operationId, status: "completed" })]);
      const summary = messages.find((m: Any) => m.info.messageId === parts[1].summaryMessageId);
      expect(summary.info).toMatchObject({
        role: "user",
        visibility: "model-only",
        semantics: { kind: "compact_summary", uiVisibility: "hidden" },
      });
      // the /compact itself is no user message
      expect(messages.filter((m: Any) => m.info.role === "user" && m.info.visibility !== "model-only")).toEqual([]);
    },
  );

  it("usage: per-request session.updated, per-turn turn.completed.usage, a fresh snapshot and getTaskTokenUsage", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:usage");
    const perRequest = turn.filter((e) => e.type === "session.updated" && e.payload.usage);
    expect(perRequest).toHaveLength(2);
    expect(terminal.payload.usage).toMatchObject({ modelRequestCount: 1 });
    const after = await rig.events.waitFor((e) => e.type === "snapshot" && e.snapshot.runtime.contextUsage.used > 0);
    expect(after.snapshot.runtime.contextUsage).toMatchObject({ size: 200000, cost: { currency: "USD" } });
    const usage = await rig.conn.agent.getTaskTokenUsage({ workspacePath: WS, sessionId: rig.sessionId });
    expect(usage.totalTokens).toBe(terminal.payload.usage.totalTokens);
    expect(usage.cacheCreationTokens).toBe(terminal.payload.usage.cacheWriteTokens);
    await waitForCallLog(rig.install, (log) => log.some((e) => e.kind === "call" && e.method === "getTaskTokenUsage"), "getTaskTokenUsage");
  });

  it.each(["error_max_turns", "error_max_tool_calls", "error_max_budget", "error_during_execution"])("limit result=%s", async (result) => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, `sim:limit result=${result}`);
    expect(terminal).toMatchObject({ type: "turn.completed", payload: { resultType: result } });
  });

  it("turn-failed: turn.failed with error and turnPhase", async () => {
    const rig = await sessionRig();
    const { terminal, turn } = await promptToEnd(rig, "sim:turn-failed");
    expect(terminal).toMatchObject({
      type: "turn.failed",
      payload: { error: { type: "api_error", message: "Model request failed" }, turnPhase: "model_request" },
    });
    expect(terminals(turn)).toHaveLength(1);
  });

  it("an unknown scenario name fails the turn with a readable message", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:no-such-thing");
    expect(terminal).toMatchObject({
      type: "turn.failed",
      payload: { error: { type: "sim_error", message: "Unknown simulator scenario: no-such-thing" } },
    });
  });
});

describe("stream-until-cancel and the cancel variants (docs/zcode-host.md §8, §12.1 item 9)", () => {
  async function cancelled(profile: Record<string, unknown> = {}) {
    const rig = await sessionRig({ profile });
    await rig.prompt("sim:stream-until-cancel interval=20");
    await rig.events.waitForCount((e) => e.type === "session.event" && e.event.type === "model.streaming", 3);
    const stoppedAt = Date.now();
    expect(await rig.conn.task.stopGeneration({ taskId: rig.sessionId, workspacePath: WS })).toBeUndefined();
    return { rig, stoppedAt };
  }

  it("default: turn.completed resultType cancelled; stopGeneration recorded once", async () => {
    const { rig } = await cancelled();
    const terminal = await rig.events.terminal(1);
    expect(terminal.payload.resultType).toBe("cancelled");
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "call" && e.method === "stopGeneration")).toEqual([
      expect.objectContaining({ service: "zcode-task", params: { taskId: rig.sessionId, workspacePath: WS } }),
    ]);
  });

  it("cancelTerminal failed: turn.failed", async () => {
    const { rig } = await cancelled({ cancelTerminal: "failed" });
    expect(await rig.events.terminal(1)).toMatchObject({ type: "turn.failed", payload: { error: { type: "aborted" } } });
  });

  it("cancelTerminal late: the terminal arrives after cancelLateMs and the lock is held until then", async () => {
    const { rig, stoppedAt } = await cancelled({ cancelTerminal: "late", cancelLateMs: 300 });
    await expect(rig.prompt("too early")).rejects.toMatchObject({ code: 1308 });
    const terminal = await rig.events.terminal(1);
    expect(terminal.payload.resultType).toBe("cancelled");
    expect(terminal.timestamp - stoppedAt).toBeGreaterThanOrEqual(250);
  });

  it("cancelTerminal none: no terminal at all, the session becomes idle", async () => {
    const { rig } = await cancelled({ cancelTerminal: "none" });
    await rig.events.waitFor((e) => e.type === "state.updated" && e.notification.patch.status === "idle");
    expect(terminals(rig.events.sessionEvents())).toEqual([]);
    await expect(rig.prompt("next")).resolves.toMatchObject({ accepted: true });
  });
});
