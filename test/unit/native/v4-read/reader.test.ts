import { describe, expect, it, beforeEach } from "vitest";
import { openConversation } from "../../../../src/native/v4-read/conversation-reader.js";
import { heldRowsDiagnostics, MAX_HELD_ROWS } from "../../../../src/native/v4-read/row-store.js";
import { silentLogger } from "../../../../src/log/logger.js";
import type { BridgeError } from "../../../../src/util/errors.js";
import { complete, deltas, fragments, logical, resetRows, row, SESSION, snapshot, snapshotPayload } from "./frames.js";
import { StubHost } from "./stub-host.js";

const REF = { workspacePath: "/w", sessionId: SESSION };

type Ev = { type: string; event?: { type: string; seq: number; turnId?: string; payload: Record<string, any> }; [k: string]: any };

async function open(host: StubHost, startSeq = 0) {
  const events: Ev[] = [];
  const ends: Array<BridgeError | null> = [];
  const seqs: number[] = [];
  const subscription = await openConversation(
    REF,
    { onEvent: (e) => void events.push(e as Ev), onEnd: (e) => void ends.push(e) },
    { host, logger: silentLogger, startSeq, onSeq: (s) => void seqs.push(s), normalise: (e) => e, now: () => 5 },
  );
  /** the inner session.event types and payloads, in order */
  const inner = () => events.filter((e) => e.type === "session.event").map((e) => [e.event!.type, e.event!.payload] as const);
  return { events, ends, seqs, subscription, inner };
}

const base = snapshot(10);

describe("V4 conversation reader: subscription and sequencing", () => {
  beforeEach(() => resetRows());

  it("listens before it subscribes, applies frames sent before the ack, and drops other subscriptions' frames", async () => {
    const host = new StubHost();
    host.early = [complete(1, logical(0, 10, snapshotPayload(base)), "initial")];
    const r = await open(host);
    expect(host.listenerTarget).toEqual({ event: "onDynamicConversationFrame", workspacePath: "/w" });
    expect(host.callsOf("subscribeConversationV4")).toEqual([{ workspacePath: "/w", sessionId: SESSION }]);
    expect(r.events.map((e) => e.type)).toEqual(["snapshot"]);
    host.frame(
      complete(2, logical(10, 11, deltas({ op: "row.appended", row: row("turnHeader", { state: "running" }) })), "online", "sub-other"),
    );
    expect(r.events).toHaveLength(1);
  });

  it("turns the snapshot A zone into the session snapshot", async () => {
    const host = new StubHost();
    const r = await open(host, 7);
    const zone = {
      meta: { title: "Fix it", titleSource: "generated" },
      config: { modelSelection: { providerId: "p", modelId: "m", options: { reasoningLevel: "low" } }, mode: "edit", planEnabled: true },
      usage: { contextWindow: { usedTokens: 1200, maxTokens: 200000 }, cumulative: {} },
      plan: { items: [{ id: "1", content: "step", status: "inProgress" }], updatedAt: 1 },
      control: { phase: "running", activeWorks: [] },
    };
    host.frame(complete(1, logical(0, 3, snapshotPayload(snapshot(3, zone, [row("turnHeader", { state: "running" })]))), "initial"));
    expect(r.events[0]).toEqual({
      type: "snapshot",
      snapshot: {
        session: {
          sessionId: SESSION,
          workspace: { workspacePath: "/w" },
          title: "Fix it",
          status: "running",
          mode: "edit",
          planEnabled: true,
        },
        settings: {
          model: { current: { providerId: "p", modelId: "m", options: { reasoningLevel: "low" } } },
          mode: { current: "edit", planEnabled: true },
        },
        runtime: { eventSeq: 7, activeTurnId: "T1", contextUsage: { used: 1200, size: 200000 }, queueHeld: false },
        todos: [{ content: "step", status: "in_progress" }],
      },
    });
    // the rows of the first snapshot are history: no event for them
    expect(r.events).toHaveLength(1);
  });

  it("asks for a recovery on a gap, ignores live frames until it comes, then continues from it", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    host.frame(complete(2, logical(12, 13, deltas({ op: "row.appended", row: row("turnHeader", { state: "running" }) }))));
    expect(host.callsOf("resyncConversationV4")).toEqual([
      { workspacePath: "/w", subscriptionId: "sub-1", base: { logEpoch: "E1", seq: 10 } },
    ]);
    host.frame(complete(3, logical(13, 14, deltas({ op: "row.appended", row: row("turnHeader", { state: "running" }) }))));
    expect(r.inner()).toEqual([]);
    const header = row("turnHeader", { state: "running", sourceCommandId: "cmd-1" });
    host.frame(complete(4, logical(10, 13, deltas({ op: "row.appended", row: header })), "recovery"));
    expect(r.inner()).toEqual([["turn.started", { inputId: "cmd-1" }]]);
    host.frame(complete(5, logical(13, 14, deltas({ op: "row.upserted", row: { ...header, state: "completedSuccess" } }))));
    expect(r.inner().at(-1)).toEqual(["turn.completed", { resultType: "success", inputId: "cmd-1" }]);
    expect(r.ends).toEqual([]);
  });

  it("resynchronises on a fragment with a bad checksum, and asks for a snapshot on deltas before any", async () => {
    const host = new StubHost();
    await open(host);
    host.frame(complete(1, logical(0, 1, deltas()), "initial"));
    expect(host.callsOf("resyncConversationV4")).toEqual([
      { workspacePath: "/w", subscriptionId: "sub-1", base: null, forceSnapshot: true },
    ]);
    const other = new StubHost();
    await open(other);
    other.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    for (const part of fragments(2, logical(10, 11, deltas()), 2, { badChecksum: true })) other.frame(part);
    expect(other.callsOf("resyncConversationV4")).toHaveLength(1);
  });

  it("takes an unsolicited online snapshot as the new state and says what changed in it", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    const header = row("turnHeader", { state: "running", sourceCommandId: "c1" });
    host.frame(complete(2, logical(10, 11, deltas({ op: "row.appended", row: header }))));
    // ZCode closes a turn's rows when it ends (a row still streaming under a finished turn is late output)
    const text = row("assistantText", { text: "Hello", state: "complete", assistantResponseId: "m1" });
    host.frame(complete(3, logical(0, 40, snapshotPayload(snapshot(40, {}, [{ ...header, state: "completedSuccess" }, text])))));
    expect(host.callsOf("resyncConversationV4")).toEqual([]);
    expect(r.events.map((e) => e.type)).toEqual(["snapshot", "session.event", "snapshot", "session.event", "session.event"]);
    expect(r.inner()).toEqual([
      ["turn.started", { inputId: "c1" }],
      ["model.streaming", { kind: "text_delta", delta: "Hello", assistantMessageId: "m1" }],
      ["turn.completed", { resultType: "success", inputId: "c1" }],
    ]);
    // a snapshot of another log epoch is not taken as it is: a forced snapshot is asked for
    host.frame(complete(4, logical(0, 50, snapshotPayload(snapshot(50, {}, [], "E2")))));
    expect(host.callsOf("resyncConversationV4")).toEqual([
      { workspacePath: "/w", subscriptionId: "sub-1", base: null, forceSnapshot: true },
    ]);
  });

  it("ends the subscription on a delta of an unknown kind (fail closed) and unsubscribes in ZCode", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    host.frame(complete(2, logical(10, 11, deltas({ op: "row.mutated", rowId: 1 }))));
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR", details: { deltaKind: "row.mutated" } });
    await Promise.resolve();
    expect(host.callsOf("unsubscribeConversationV4")).toEqual([{ workspacePath: "/w", subscriptionId: "sub-1" }]);
    // the live-only kinds change nothing and are no fault
    const other = new StubHost();
    const o = await open(other);
    other.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    other.frame(complete(2, logical(10, 11, deltas({ op: "pluginUi.updated", ui: {} }, { op: "workflowRun.removed", id: "w" }))));
    expect(o.ends).toEqual([]);
  });

  it("past its bound the reader lets go of finished rows, still applies an upsert of one, and ends on a delta to one", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    const rows = Array.from({ length: MAX_HELD_ROWS + 100 }, (_, i) =>
      row("assistantText", { turnId: `T${i}`, text: `a${i}`, state: "complete", assistantResponseId: `m${i}` }),
    );
    const ended = rows.map((text) => row("turnHeader", { turnId: text.turnId, state: "completedSuccess" }));
    host.frame(
      complete(
        2,
        logical(
          10,
          11,
          deltas(
            ...rows
              .map((item, i) => [item, ended[i]])
              .flat()
              .map((item) => ({ op: "row.appended", row: item })),
          ),
        ),
      ),
    );
    expect(r.ends).toEqual([]);
    expect(heldRowsDiagnostics().peakHeldRows).toBeLessThanOrEqual(MAX_HELD_ROWS);
    const first = rows[0]!;
    const said = r.events.length;
    host.frame(complete(3, logical(11, 12, deltas({ op: "row.upserted", row: { ...first, text: "a0 and more" } }))));
    expect(r.inner().slice(-1)).toEqual([["model.streaming", { kind: "text_delta", delta: " and more", assistantMessageId: "m0" }]]);
    expect(r.events.length).toBe(said + 1);
    host.frame(complete(4, logical(12, 13, deltas({ op: "row.delta", rowId: rows[1]!.rowId, path: "text", append: "x" }))));
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    expect(r.ends[0]!.message).toMatch(/no longer holds[\s\S]*Load the session again/);
    await Promise.resolve();
    expect(host.callsOf("unsubscribeConversationV4")).toHaveLength(1);
  });

  it("resyncs on the bootstrap's fault frame, and ends with its code when the fault answered a resync", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    const fault = (ordinal: number, deliveryKind: string) => ({
      ...complete(ordinal, undefined, deliveryKind as "online"),
      frame: undefined,
      kind: "zcodeAcpFault",
      fault: { code: "FRAME_TOO_LARGE", message: "a conversation frame is 13000000 bytes after every row was bounded" },
    });
    host.frame(fault(2, "online"));
    expect(host.callsOf("resyncConversationV4")).toEqual([
      { workspacePath: "/w", subscriptionId: "sub-1", base: { logEpoch: "E1", seq: 10 } },
    ]);
    expect(r.ends).toEqual([]);
    host.frame(fault(3, "recovery"));
    expect(r.ends[0]).toMatchObject({ code: "FRAME_TOO_LARGE" });
    expect(host.callsOf("unsubscribeConversationV4")).toHaveLength(1);
  });

  it("ends on a broken recovery frame", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    host.frame(complete(2, logical(11, 12, deltas())));
    host.frame(complete(3, logical(11, 12, deltas()), "recovery"));
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
  });

  it("disposing unsubscribes in ZCode and drops the listener", async () => {
    const host = new StubHost();
    const r = await open(host);
    await r.subscription.dispose();
    expect(host.callsOf("unsubscribeConversationV4")).toEqual([{ workspacePath: "/w", subscriptionId: "sub-1" }]);
    expect(host.listenerDisposed).toBe(true);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    expect(r.events).toEqual([]);
  });
});

describe("V4 conversation reader: rows → the session model's events", () => {
  beforeEach(() => resetRows());

  async function running() {
    const host = new StubHost();
    const r = await open(host, 100);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    let seq = 10;
    let ordinal = 1;
    const send = (...list: unknown[]) => {
      host.frame(complete(++ordinal, logical(seq, seq + 1, deltas(...list))));
      seq += 1;
    };
    return { host, r, send };
  }

  it("a turn: header, user input, reasoning and text growth, completion; seqs follow the start", async () => {
    const { r, send } = await running();
    const header = row("turnHeader", { origin: "userInput", sourceCommandId: "cmd-1", state: "running" });
    const reasoning = row("reasoning", { text: "", state: "streaming" });
    const text = row("assistantText", { text: "", state: "streaming", assistantResponseId: "m1" });
    send(
      { op: "row.appended", row: header },
      { op: "row.appended", row: row("userInput", { text: "hi", origin: "realUser", sourceCommandId: "cmd-1" }) },
    );
    send({ op: "row.appended", row: reasoning }, { op: "row.delta", rowId: reasoning.rowId, path: "text", append: "think" });
    send({ op: "row.appended", row: text }, { op: "row.delta", rowId: text.rowId, path: "text", append: "Hel" });
    send({ op: "row.delta", rowId: text.rowId, path: "text", append: "lo" });
    send(
      { op: "row.upserted", row: { ...text, text: "Hello", state: "complete" } },
      { op: "row.upserted", row: { ...header, state: "completedSuccess" } },
    );
    expect(r.inner()).toEqual([
      ["turn.started", { inputId: "cmd-1" }],
      ["model.streaming", { kind: "reasoning_delta", delta: "think" }],
      ["model.streaming", { kind: "text_delta", delta: "Hel", assistantMessageId: "m1" }],
      ["model.streaming", { kind: "text_delta", delta: "lo", assistantMessageId: "m1" }],
      ["turn.completed", { resultType: "success", inputId: "cmd-1" }],
    ]);
    const envelopes = r.events.filter((e) => e.type === "session.event").map((e) => e.event!);
    expect(envelopes.map((e) => e.seq)).toEqual([101, 102, 103, 104, 105]);
    expect(envelopes.every((e) => e.turnId === "T1")).toBe(true);
    expect(r.seqs.at(-1)).toBe(105);
  });

  it("background and goal turns are background_task inputs; interrupted is cancelled; failed carries control.lastError", async () => {
    const { r, send } = await running();
    const bg = row("turnHeader", { origin: "backgroundResult", state: "running", turnId: "T2" });
    send({ op: "row.appended", row: bg });
    send({ op: "row.upserted", row: { ...bg, state: "completedInterrupted" } });
    const failing = row("turnHeader", { origin: "userInput", sourceCommandId: "c3", state: "running", turnId: "T3" });
    send({ op: "row.appended", row: failing });
    send(
      {
        op: "state.updated",
        patch: { control: { phase: "error", lastError: { code: "provider.rateLimited", message: "Too many requests" } } },
      },
      { op: "row.upserted", row: { ...failing, state: "failed" } },
    );
    expect(r.inner()).toEqual([
      ["turn.started", { inputSource: "background_task" }],
      ["turn.completed", { resultType: "cancelled" }],
      ["turn.started", { inputId: "c3" }],
      ["turn.failed", { error: { message: "Too many requests", code: "provider.rateLimited" }, inputId: "c3" }],
    ]);
  });

  it("tool rows: scheduled with input, started, progress, result; error and cancelled are errors", async () => {
    const { r, send } = await running();
    const bash = row("toolCall", { toolCallId: "c1", toolName: "Bash", status: "inputStreaming", inputText: '{"comm' });
    send({ op: "row.appended", row: bash });
    send({ op: "row.upserted", row: { ...bash, status: "running", input: { command: "npm test" } } });
    send({ op: "row.upserted", row: { ...bash, status: "running", input: { command: "npm test" }, outputPreview: "PASS a\n" } });
    send({
      op: "row.upserted",
      row: { ...bash, status: "success", input: { command: "npm test" }, output: { text: "PASS a\nPASS b\n" } },
    });
    const edit = row("toolCall", {
      toolCallId: "e1",
      toolName: "Edit",
      status: "running",
      input: { file_path: "a.ts", old_string: "a", new_string: "b" },
    });
    send({ op: "row.appended", row: edit });
    send({ op: "row.upserted", row: { ...edit, status: "error", error: { code: "tool.failed", message: "no match" } } });
    const read = row("toolCall", { toolCallId: "r1", toolName: "Read", status: "running", input: { file_path: "b.ts" } });
    send({ op: "row.appended", row: read });
    send({ op: "row.upserted", row: { ...read, status: "cancelled" } });
    expect(r.inner()).toEqual([
      ["tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Bash" }],
      ["tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Bash", input: { command: "npm test" } }],
      ["tool.updated", { kind: "started", toolCallId: "c1", toolName: "Bash" }],
      ["tool.updated", { kind: "progress", toolCallId: "c1", toolName: "Bash", outputPreview: "PASS a\n" }],
      ["tool.updated", { kind: "result", toolCallId: "c1", toolName: "Bash", result: { success: true, content: "PASS a\nPASS b\n" } }],
      [
        "tool.updated",
        { kind: "scheduled", toolCallId: "e1", toolName: "Edit", input: { file_path: "a.ts", old_string: "a", new_string: "b" } },
      ],
      ["tool.updated", { kind: "started", toolCallId: "e1", toolName: "Edit" }],
      ["tool.updated", { kind: "error", toolCallId: "e1", toolName: "Edit", error: { message: "no match", code: "tool.failed" } }],
      ["tool.updated", { kind: "scheduled", toolCallId: "r1", toolName: "Read", input: { file_path: "b.ts" } }],
      ["tool.updated", { kind: "started", toolCallId: "r1", toolName: "Read" }],
      ["tool.updated", { kind: "error", toolCallId: "r1", toolName: "Read", error: { message: "The tool call was cancelled." } }],
    ]);
  });

  it("a file_diff display rides along in the result; output.text growth is the running tool's progress", async () => {
    const { r, send } = await running();
    const write = row("toolCall", { toolCallId: "w1", toolName: "Write", status: "running", input: { file_path: "a.ts", content: "x" } });
    send({ op: "row.appended", row: write });
    send({ op: "row.delta", rowId: write.rowId, path: "output.text", append: "writing" });
    const display = { kind: "file_diff", filePath: "a.ts", additions: 1, deletions: 0, structuredPatch: [] };
    send({ op: "row.upserted", row: { ...write, status: "success", output: { text: "Wrote a.ts", display } } });
    expect(r.inner().slice(2)).toEqual([
      ["tool.updated", { kind: "progress", toolCallId: "w1", toolName: "Write", outputPreview: "writing" }],
      ["tool.updated", { kind: "result", toolCallId: "w1", toolName: "Write", result: { success: true, content: "Wrote a.ts", display } }],
    ]);
  });

  it("a guided user input drains the steer; title and mode changes; plan and usage as a snapshot", async () => {
    const { r, send } = await running();
    send({ op: "row.appended", row: row("userInput", { text: "also this", guided: true, sourceCommandId: "g1" }) });
    send({ op: "state.updated", patch: { meta: { title: "New title", titleSource: "generated" }, revision: 12 } });
    send({ op: "state.updated", patch: { config: { ...(base.config as object), mode: "build", planEnabled: true } } });
    send({ op: "state.updated", patch: { usage: { contextWindow: { usedTokens: 5, maxTokens: 100 }, cumulative: {} } } });
    expect(r.inner()).toEqual([
      ["turn.steerDrained", { pendingInputIds: ["g1"], targetTurnId: "T1" }],
      ["session.titleUpdated", { title: "New title" }],
    ]);
    const tops = r.events.filter((e) => e.type !== "session.event");
    expect(tops.map((e) => e.type)).toEqual(["snapshot", "state.updated", "snapshot"]);
    expect(tops[1]!.notification).toMatchObject({ scope: "session", sessionId: SESSION, patch: { mode: { current: "plan" } } });
    expect(tops[2]!.snapshot.runtime.contextUsage).toEqual({ used: 5, size: 100 });
  });

  it("a tool that ran and finished within one frame still starts", async () => {
    const { r, send } = await running();
    const read = row("toolCall", { toolCallId: "c1", toolName: "Read", status: "inputStreaming", input: { file_path: "a" } });
    send({ op: "row.appended", row: read });
    send({ op: "row.upserted", row: { ...read, status: "success", output: { text: "alpha" } } });
    expect(r.inner()).toEqual([
      ["tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Read" }],
      ["tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Read", input: { file_path: "a" } }],
      ["tool.updated", { kind: "started", toolCallId: "c1", toolName: "Read" }],
      ["tool.updated", { kind: "result", toolCallId: "c1", toolName: "Read", result: { success: true, content: "alpha" } }],
    ]);
  });

  it("each plan and usage a frame passes through is its own snapshot, in order", async () => {
    const { r, send } = await running();
    const plan = (n: number) => ({
      items: Array.from({ length: n }, (_, i) => ({ id: `t${i}`, content: `c${i}`, status: "pending" })),
      updatedAt: n,
    });
    const usage = (used: number) => ({ contextWindow: { usedTokens: used, maxTokens: 100 }, cumulative: {} });
    send(
      { op: "state.updated", patch: { plan: plan(3) } },
      { op: "state.updated", patch: { usage: usage(10) } },
      { op: "state.updated", patch: { plan: plan(0) } },
      { op: "state.updated", patch: { usage: usage(20) } },
    );
    const snapshots = r.events.filter((e) => e.type === "snapshot").slice(1);
    expect(snapshots.map((e) => [e.snapshot.todos.length, e.snapshot.runtime.contextUsage?.used])).toEqual([
      [3, undefined],
      [3, 10],
      [0, 10],
      [0, 20],
    ]);
  });

  it("after a resync, a snapshot says exactly the part of an answer not yet said; a closed row's runtime marker once, whole", async () => {
    const { host, r, send } = await running();
    const header = row("turnHeader", { origin: "userInput", sourceCommandId: "c1", state: "running" });
    const text = row("assistantText", { text: "", state: "streaming", assistantResponseId: "m1" });
    send({ op: "row.appended", row: header }, { op: "row.appended", row: text });
    send({ op: "row.delta", rowId: text.rowId, path: "text", append: "a".repeat(100) });
    const marker = "\n… [zcode-acp: 2.0 MB more not shown]";
    const deltasSaid = () =>
      r
        .inner()
        .filter(([type]) => type === "model.streaming")
        .map(([, payload]) => payload.delta as string);
    // a gap: the recovery snapshot holds the answer row still streaming, further than the client got it
    host.frame(complete(10, logical(20, 21, deltas())));
    expect(host.callsOf("resyncConversationV4")).toHaveLength(1);
    const mid = { ...text, text: "a".repeat(100) + "b".repeat(50) };
    host.frame(complete(11, logical(0, 30, snapshotPayload(snapshot(30, {}, [header, mid]))), "recovery"));
    expect(deltasSaid()).toEqual(["a".repeat(100), "b".repeat(50)]);
    // the stream goes on from the snapshot
    host.frame(complete(12, logical(30, 31, deltas({ op: "row.delta", rowId: text.rowId, path: "text", append: "c" }))));
    expect(deltasSaid().at(-1)).toBe("c");
    // another gap; the row closed meanwhile and the runtime kept a shorter head than the client has,
    // then its marker: only the marker is said, whole, and once
    host.frame(complete(13, logical(40, 41, deltas())));
    expect(host.callsOf("resyncConversationV4")).toHaveLength(2);
    const closed = { ...text, state: "complete", text: "a".repeat(100) + "b".repeat(20) + marker };
    const done = { ...header, state: "completedSuccess" };
    host.frame(complete(14, logical(0, 50, snapshotPayload(snapshot(50, {}, [done, closed]))), "recovery"));
    expect(deltasSaid().slice(3)).toEqual([marker]);
    host.frame(complete(15, logical(0, 60, snapshotPayload(snapshot(60, {}, [done, closed])))));
    expect(deltasSaid().slice(3)).toEqual([marker]);
    expect(deltasSaid().join("")).toBe("a".repeat(100) + "b".repeat(50) + "c" + marker);
    expect(r.inner().at(-1)).toEqual(["turn.completed", { resultType: "success", inputId: "c1" }]);
    expect(r.ends).toEqual([]);
  });

  it("a baseline snapshot's answer cut by the runtime counts as said, its marker too: a longer head later says only its new text", async () => {
    const host = new StubHost();
    const r = await open(host);
    const marker = "\n… [zcode-acp: 1.5 MB more not shown]";
    const answer = row("assistantText", { text: "x".repeat(30) + marker, state: "complete", assistantResponseId: "m1" });
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10, {}, [answer]))), "initial"));
    host.frame(complete(2, logical(0, 20, snapshotPayload(snapshot(20, {}, [answer])))));
    host.frame(complete(3, logical(0, 30, snapshotPayload(snapshot(30, {}, [{ ...answer, text: "x".repeat(20) + marker }])))));
    expect(r.inner()).toEqual([]);
    host.frame(complete(4, logical(0, 40, snapshotPayload(snapshot(40, {}, [{ ...answer, text: "x".repeat(40) + marker }])))));
    expect(r.inner()).toEqual([["model.streaming", { kind: "text_delta", delta: "x".repeat(10), assistantMessageId: "m1" }]]);
  });

  it("text growing in a row still streaming under a finished turn is late output: never said", async () => {
    const { r, send } = await running();
    const header = row("turnHeader", { origin: "userInput", sourceCommandId: "c1", state: "running" });
    const text = row("assistantText", { text: "Done.", state: "streaming", assistantResponseId: "m1" });
    send({ op: "row.appended", row: header }, { op: "row.appended", row: text });
    const late = row("assistantText", { text: "", state: "streaming", assistantResponseId: "m1" });
    send(
      { op: "row.upserted", row: { ...text, state: "complete" } },
      { op: "row.upserted", row: { ...header, state: "completedSuccess" } },
      { op: "row.appended", row: late },
      { op: "row.delta", rowId: late.rowId, path: "text", append: "LATE" },
    );
    send({ op: "row.delta", rowId: late.rowId, path: "text", append: " MORE" });
    expect(r.inner()).toEqual([
      ["turn.started", { inputId: "c1" }],
      ["model.streaming", { kind: "text_delta", delta: "Done.", assistantMessageId: "m1" }],
      ["turn.completed", { resultType: "success", inputId: "c1" }],
    ]);
  });

  it("unknown row kinds and the kinds without an ACP use are ignored", async () => {
    const { r, send } = await running();
    send(
      { op: "row.appended", row: row("hologram", { text: "?" }) },
      { op: "row.appended", row: row("timelineMarker", { marker: "modelChange" }) },
      { op: "row.appended", row: row("subagent", { status: "running" }) },
    );
    expect(r.inner()).toEqual([]);
  });

  it('a compaction marker ({type:"compact"}) becomes a compaction part.upserted, again only when its status or token counts change', async () => {
    const { r, send } = await running();
    const marker = row("timelineMarker", {
      entityId: "cmp1",
      lane: "assistantWork",
      marker: { type: "compact", origin: "auto", status: "running", tokensBefore: 9000 },
    });
    send({ op: "row.appended", row: marker });
    send({ op: "row.upserted", row: { ...marker } });
    send({
      op: "row.upserted",
      row: {
        ...marker,
        marker: { type: "compact", origin: "auto", status: "success", tokensBefore: 9000, tokensAfter: 2000, summaryRef: "7" },
      },
    });
    // other markers are no compaction (and never fail the reader)
    send({ op: "row.appended", row: row("timelineMarker", { marker: { type: "goalSet", objective: "x" } }) });
    send({ op: "row.appended", row: row("timelineMarker", { marker: { type: "retryNotice", attempt: 1, reasonCode: "r" } }) });
    expect(r.inner()).toEqual([
      ["part.upserted", { part: { type: "compaction", partId: "cmp1", status: "running", origin: "auto", tokensBefore: 9000 } }],
      [
        "part.upserted",
        {
          part: {
            type: "compaction",
            partId: "cmp1",
            status: "success",
            origin: "auto",
            tokensBefore: 9000,
            tokensAfter: 2000,
            summaryRef: "7",
          },
        },
      ],
    ]);
  });

  it("a /compact without a turn header of its own: its marker's sourceCommandId starts and ends the turn", async () => {
    const { r, send } = await running();
    const marker = row("timelineMarker", {
      turnId: "Tc",
      entityId: "cmp2",
      sourceCommandId: "cmd-1",
      marker: { type: "compact", origin: "manual", status: "running" },
    });
    send({ op: "row.appended", row: marker });
    send({ op: "row.upserted", row: { ...marker, marker: { type: "compact", origin: "manual", status: "failed" } } });
    expect(r.inner().map(([type, payload]) => [type, payload.inputId ?? payload.part?.status])).toEqual([
      ["turn.started", "cmd-1"],
      ["part.upserted", "running"],
      ["part.upserted", "failed"],
      ["turn.failed", "cmd-1"],
    ]);
  });

  it("row.removed drops that row and the later ones: a re-appended row id is new", async () => {
    const { r, send } = await running();
    const text = row("assistantText", { text: "abc", assistantResponseId: "m1" });
    send({ op: "row.appended", row: text });
    send({ op: "row.removed", fromRowId: text.rowId });
    send({ op: "row.appended", row: { ...text, text: "xy" } });
    expect(r.inner().map(([, p]) => p.delta)).toEqual(["abc", "xy"]);
  });
});

describe("V4 conversation reader: pending interactions", () => {
  beforeEach(() => resetRows());

  it("a permission becomes a permission.request once, with its options and the tool's turn", async () => {
    const host = new StubHost();
    const r = await open(host);
    const tool = row("toolCall", {
      toolCallId: "w1",
      toolName: "Write",
      status: "pendingApproval",
      input: { file_path: "a" },
      approvalInteractionId: "i1",
      turnId: "T9",
    });
    const permission = {
      interactionId: "i1",
      kind: "permission",
      anchorRowId: tool.rowId,
      createdAt: 1,
      payload: {
        kind: "permission",
        toolCallId: "w1",
        toolName: "Write",
        summary: "Write a",
        detail: { file_path: "a" },
        fullAccessOption: { optionId: "fullAccess" },
        options: [
          { optionId: "allow_once", label: "Allow", kind: "allowOnce" },
          { optionId: "allowSession", label: "Allow for the session", kind: "allowAlways" },
          { optionId: "deny", label: "Deny", kind: "deny" },
        ],
      },
    };
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10, { pendingInteractions: [permission] }, [tool]))), "initial"));
    host.frame(complete(2, logical(10, 11, deltas({ op: "state.updated", patch: { revision: 11 } }))));
    const requests = r.events.filter((e) => e.type === "permission.request");
    expect(requests).toEqual([
      {
        type: "permission.request",
        request: {
          requestId: "i1",
          sessionId: SESSION,
          turnId: "T9",
          toolCallId: "w1",
          toolName: "Write",
          reason: "Write a",
          input: { file_path: "a" },
          options: [
            { optionId: "allow_once", name: "Allow", kind: "allowOnce", response: { decision: "allow" } },
            {
              optionId: "allowSession",
              name: "Allow for the session",
              kind: "allowAlways",
              response: { decision: "allow", permissionUpdates: [{ type: "v4Option", optionId: "allowSession" }] },
            },
            { optionId: "deny", name: "Deny", kind: "deny", response: { decision: "deny" } },
          ],
        },
      },
    ]);
  });

  it("a question and a plan approval become userInput.requests; a workspace hook review is not asked", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(base)), "initial"));
    const question = {
      interactionId: "q1",
      kind: "userInput",
      anchorRowId: null,
      createdAt: 1,
      payload: {
        kind: "userInput",
        prompt: "Pick",
        freeText: false,
        toolName: "AskUserQuestion",
        questions: [{ question: "Which?", header: "H", options: [{ value: "A", label: "A" }] }],
      },
    };
    const plan = {
      interactionId: "p1",
      kind: "userInput",
      anchorRowId: null,
      createdAt: 1,
      payload: {
        kind: "userInput",
        prompt: "Review",
        toolName: "ExitPlanMode",
        input: { plan: "# P" },
        schema: { interaction: "plan_approval", toolName: "ExitPlanMode" },
      },
    };
    const hook = { interactionId: "h1", kind: "workspaceHookReview", anchorRowId: null, createdAt: 1, payload: {} };
    host.frame(complete(2, logical(10, 11, deltas({ op: "state.updated", patch: { pendingInteractions: [question, plan, hook] } }))));
    expect(r.events.filter((e) => e.type === "userInput.request").map((e) => e.request)).toEqual([
      { requestId: "q1", sessionId: SESSION, toolName: "AskUserQuestion", prompt: "Pick", questions: question.payload.questions },
      {
        requestId: "p1",
        sessionId: SESSION,
        toolName: "ExitPlanMode",
        prompt: "Review",
        input: { plan: "# P" },
        schema: plan.payload.schema,
      },
    ]);
    expect(r.events.filter((e) => e.type === "permission.request")).toEqual([]);
  });
});
