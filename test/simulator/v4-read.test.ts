/**
 * The V4 READ side of the simulated host (fixtures/sim/app/out/host/sim-v4-read.js;
 * shared/reference/zcode-v4.md §3, §5, §6.5): subscribe → an initial snapshot, then deltas in seq
 * order; rows for text, reasoning, tools, permissions, questions, plans and steering; gaps and
 * resync; fragments; history paging; resolveInteraction racing the legacy answers; unsubscribe.
 */
import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { EventCollector, startHost, WS, type SessionRig } from "./support/session-helpers.js";
import { handshake } from "./support/v4-helpers.js";
import { FrameReader, crc32Hex, rowsOf, v4Command, v4Rig } from "./support/v4-read-helpers.js";

const textOf = (reader: FrameReader, kind = "assistantText"): string =>
  rowsOf(reader, kind)
    .map((r) => r.text)
    .join("");

describe("V4 conversation read on the simulated 3.12.3", () => {
  it("subscribe: the initial snapshot frame (sent before the ack), then deltas continuing its seq; turn rows of a sendText", async () => {
    const rig = await v4Rig();
    const answer = await rig.reader.subscribe(rig.sessionId);
    expect(answer.ack).toMatchObject({ subscriptionId: expect.stringMatching(/^sub-/), mode: "snapshot", logEpoch: expect.any(String) });
    // the first wire frame arrived before the call answered; it is the initial snapshot
    const first = rig.reader.wire[0];
    expect(first).toMatchObject({
      wireVersion: 3,
      kind: "complete",
      deliveryKind: "initial",
      logicalFrameOrdinal: 1,
      topic: `conversation/${rig.sessionId}`,
      subscriptionId: answer.ack.subscriptionId,
      frame: {
        topic: `conversation/${rig.sessionId}`,
        subscriptionId: answer.ack.subscriptionId,
        fromSeq: 0,
        payload: { kind: "snapshot" },
      },
    });
    const snapshot = first.frame.payload.snapshot;
    expect(snapshot).toMatchObject({
      protocolVersion: 1,
      sessionId: rig.sessionId,
      logEpoch: answer.ack.logEpoch,
      seq: first.frame.toSeq,
      control: { phase: "draft", canStop: false, stopState: "idle", activeWorks: [], lastError: null },
      config: { mode: "build", planEnabled: false, followupMode: "queue" },
      queue: { items: [], autoDrain: true },
      pendingInteractions: [],
      plan: null,
      rows: { window: [], totalCount: 0, firstRowId: null },
    });
    const ack = await v4Command(rig, "sendText", { text: "sim:reasoning" });
    const held = await rig.reader.idleAfter(1);
    expect(rig.reader.gaps).toEqual([]);
    // every later frame is an online deltas frame continuing the previous toSeq, with growing ordinals
    const frames = rig.reader.logical.slice(1);
    expect(frames.length).toBeGreaterThan(0);
    let seq = snapshot.seq;
    let ordinal = 1;
    for (const entry of frames) {
      expect(entry).toMatchObject({ deliveryKind: "online", frame: { payload: { kind: "deltas" } } });
      expect(entry.frame.fromSeq).toBe(seq);
      expect(entry.frame.toSeq).toBe(seq + entry.frame.payload.deltas.length);
      expect(entry.ordinal).toBe(ordinal + 1);
      seq = entry.frame.toSeq;
      ordinal = entry.ordinal;
    }
    expect(held.rows.window.map((r: Any) => r.kind)).toEqual(["turnHeader", "userInput", "reasoning", "assistantText"]);
    const [header, input, thought, text] = held.rows.window;
    expect(header).toMatchObject({ rowId: 1, origin: "userInput", sourceCommandId: ack.envelope.commandId, state: "completedSuccess" });
    expect(input).toMatchObject({ rowId: 2, text: "sim:reasoning", origin: "realUser", sourceCommandId: ack.envelope.commandId });
    expect(thought).toMatchObject({ text: "Let me think about this request step by step.", state: "complete" });
    expect(text).toMatchObject({ text: "Here is the considered answer.", state: "complete" });
    expect(new Set(held.rows.window.map((r: Any) => r.turnId)).size).toBe(1);
    expect(held.control.phase).toBe("completedSuccess");
    expect(held.meta).toEqual({ title: "sim:reasoning", titleSource: "generated" });
    expect(held.usage.cumulative.outputTokens).toBeGreaterThan(0);
    // the same state as a fresh snapshot
    const fresh = new FrameReader(rig.conn);
    await fresh.subscribe(rig.sessionId);
    expect(fresh.held.rows).toEqual(held.rows);
    expect(fresh.held.seq).toBe(rig.reader.held.seq);
  });

  it("tool rows: input streamed into inputText, running, then success with output text and display; a tool error", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:tool-bash command=ls" });
    await rig.reader.idleAfter(1);
    const [tool] = rowsOf(rig.reader, "toolCall");
    expect(tool).toMatchObject({
      toolName: "Bash",
      status: "success",
      input: { command: "ls", description: "Run the tests" },
      output: { text: "PASS src/a.test.ts\nTests: 1 passed", display: { kind: "bash_output", exitCode: 0 } },
    });
    expect(JSON.parse(tool.inputText)).toEqual(tool.input);
    expect(tool.entityId).toBe(tool.toolCallId);
    // the progress tails streamed as output.text deltas before the result replaced the row
    const ops = rig.reader.logical.flatMap((l) => (l.frame.payload.kind === "deltas" ? l.frame.payload.deltas : []));
    expect(ops.some((d: Any) => d.op === "row.delta" && d.path === "output.text" && d.rowId === tool.rowId)).toBe(true);
    expect(ops.some((d: Any) => d.op === "row.delta" && d.path === "inputText" && d.rowId === tool.rowId)).toBe(true);
    await v4Command(rig, "sendText", { text: "sim:tool-error" });
    await rig.reader.idleAfter(2);
    expect(rowsOf(rig.reader, "toolCall")[1]).toMatchObject({ status: "error", error: { code: "EXIT_1" } });
  });

  it("a permission is a pendingInteraction anchored on its pendingApproval tool row; resolveInteraction wins over a later legacy answer", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:permission command=rm" });
    const pending = await rig.reader.waitFor((r) => r.held?.pendingInteractions[0], "a pending permission");
    const tool = rowsOf(rig.reader, "toolCall")[0];
    expect(tool).toMatchObject({ status: "pendingApproval", approvalInteractionId: pending.interactionId });
    expect(pending).toMatchObject({
      kind: "permission",
      anchorRowId: tool.rowId,
      payload: {
        kind: "permission",
        toolCallId: tool.toolCallId,
        toolName: "Bash",
        detail: { command: "rm" },
        options: [
          { optionId: "allow_once", kind: "allowOnce" },
          { optionId: "allow_always", kind: "allowAlways" },
          { optionId: "deny", kind: "deny" },
        ],
      },
    });
    expect(rig.reader.held.control).toMatchObject({ phase: "running", canStop: true, stopState: "stoppable" });
    const answer = await v4Command(rig, "resolveInteraction", { interactionId: pending.interactionId, answer: { optionId: "allow_once" } });
    expect(answer).toMatchObject({ status: "accepted", result: { type: "resolveInteraction" } });
    // first answer wins: the legacy answer and a second V4 answer come too late
    expect(
      await rig.conn.task.respondPermission({
        taskId: rig.sessionId,
        requestId: pending.interactionId,
        optionId: "deny",
        workspacePath: WS,
      }),
    ).toBe(false);
    const late = await v4Command(rig, "resolveInteraction", { interactionId: pending.interactionId, answer: { optionId: "deny" } });
    expect(late).toMatchObject({ status: "noop", reasonCode: "proto.alreadyResolved" });
    const held = await rig.reader.idleAfter(1);
    expect(held.pendingInteractions).toEqual([]);
    expect(rowsOf(rig.reader, "toolCall")[0].status).toBe("success");
    // legacy first: the V4 answer is then the late one, and the denial holds
    await v4Command(rig, "sendText", { text: "sim:permission command=rm" });
    const second = await rig.reader.waitFor((r) => r.held?.pendingInteractions[0], "the second permission");
    expect(
      await rig.conn.task.respondPermission({
        taskId: rig.sessionId,
        requestId: second.interactionId,
        optionId: "deny",
        workspacePath: WS,
      }),
    ).toBe(true);
    const after = await v4Command(rig, "resolveInteraction", { interactionId: second.interactionId, answer: { optionId: "allow_once" } });
    expect(after).toMatchObject({ status: "noop", reasonCode: "proto.alreadyResolved" });
    await rig.reader.idleAfter(2);
    expect(rowsOf(rig.reader, "toolCall")[1]).toMatchObject({ status: "error", error: { code: "permission_denied" } });
    expect(await v4Command(rig, "resolveInteraction", { interactionId: "nope", answer: { optionId: "deny" } })).toMatchObject({
      status: "rejected",
      reasonCode: "proto.interactionNotFound",
    });
  });

  it("AskUserQuestion is a userInput interaction with its questions; an accept answer reaches the turn", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:questions" });
    const pending = await rig.reader.waitFor((r) => r.held?.pendingInteractions[0], "a pending question");
    expect(pending).toMatchObject({
      kind: "userInput",
      anchorRowId: rowsOf(rig.reader, "toolCall")[0].rowId,
      payload: {
        kind: "userInput",
        toolName: "AskUserQuestion",
        prompt: "A few choices before I start",
        questions: [{ question: "Which test runner?" }, { multiSelect: true }],
      },
    });
    const content = { answers: { "Which test runner?": "Vitest" }, answer_0: "vitest", answer_1: ["auth", "db"] };
    expect(
      await v4Command(rig, "resolveInteraction", { interactionId: pending.interactionId, answer: { action: "accept", content } }),
    ).toMatchObject({
      status: "accepted",
    });
    await rig.reader.idleAfter(1);
    expect(textOf(rig.reader)).toContain("Runner: vitest; files: auth, db.");
    expect(rig.reader.held.pendingInteractions).toEqual([]);
  });

  it("todos are snapshot.plan; an ExitPlanMode approval is a plan_approval userInput answered with optionId allowOnce", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:todos" });
    await rig.reader.idleAfter(1);
    // each todo list the turn set is one state.updated op (a flush may coalesce several into one frame)
    const plans = rig.reader.logical
      .flatMap((l) => (l.frame.payload.kind === "deltas" ? l.frame.payload.deltas : []))
      .filter((d: Any) => d.op === "state.updated" && d.patch.plan !== undefined)
      .map((d: Any) => d.patch.plan);
    expect(plans.map((p: Any) => p.items.length)).toEqual([3, 3, 0]);
    expect(plans[0].items[0]).toEqual({ id: "todo_1", content: "Read the failing test", status: "inProgress" });
    expect(plans[1].items[0].status).toBe("completed");
    expect(plans[0].updatedAt).toEqual(expect.any(Number));
    expect(rig.reader.held.plan.items).toEqual([]);
    await v4Command(rig, "sendText", { text: "sim:plan-userinput" });
    const pending = await rig.reader.waitFor((r) => r.held?.pendingInteractions[0], "a plan approval");
    expect(rig.reader.held.config.planEnabled).toBe(true);
    expect(pending.payload).toMatchObject({
      kind: "userInput",
      toolName: "ExitPlanMode",
      schema: { interaction: "plan_approval", toolName: "ExitPlanMode" },
      input: { plan: expect.any(String) },
    });
    await v4Command(rig, "resolveInteraction", { interactionId: pending.interactionId, answer: { optionId: "allowOnce" } });
    const held = await rig.reader.idleAfter(2);
    expect(held.config.planEnabled).toBe(false);
  });

  it("a guided input drained into the running turn is a guided userInput row carrying its command id", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    const first = await v4Command(rig, "sendText", { text: "sim:steerable wait=5000" });
    await rig.reader.waitFor((r) => rowsOf(r, "assistantText").length > 0, "the first text");
    const guide = await v4Command(rig, "sendText", { text: "prefer tabs", requestedDelivery: "guide" });
    await rig.reader.idleAfter(1);
    const inputs = rowsOf(rig.reader, "userInput");
    expect(inputs.map((r) => [r.text, r.sourceCommandId, r.guided === true])).toEqual([
      ["sim:steerable wait=5000", first.envelope.commandId, false],
      ["prefer tabs", guide.envelope.commandId, true],
    ]);
    expect(new Set(rig.reader.rows().map((r) => r.turnId)).size).toBe(1);
    expect(rowsOf(rig.reader, "turnHeader")).toHaveLength(1);
  });

  it("a queued input shows in snapshot.queue until its own turn starts", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:stream-until-cancel interval=20 max=10" });
    const queued = await v4Command(rig, "sendText", { text: "after", requestedDelivery: "queue" });
    const item = await rig.reader.waitFor((r) => r.held?.queue.items[0], "a queue item");
    expect(item).toMatchObject({
      sourceCommandId: queued.envelope.commandId,
      queueItemId: `queue_${queued.envelope.commandId}`,
      kind: "sendText",
      text: "after",
    });
    await rig.reader.idleAfter(2);
    expect(rowsOf(rig.reader, "turnHeader").map((h) => h.state)).toEqual(["completedSuccess", "completedSuccess"]);
    expect(rowsOf(rig.reader, "userInput")[1].sourceCommandId).toBe(queued.envelope.commandId);
  });

  it("a stop ends the turn completedInterrupted; its streaming text row is interrupted", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:stream-until-cancel interval=10 max=500" });
    const work = await rig.reader.waitFor((r) => r.held?.control.activeWorks[0], "an active work");
    expect(work).toMatchObject({ kind: "primaryTurn", foregroundExecutionId: "runtime_command_1" });
    expect(rig.reader.held.control.stopTargetKind).toBe("assistant");
    await v4Command(rig, "stop", { expectedForegroundExecutionId: work.foregroundExecutionId });
    const held = await rig.reader.idleAfter(1);
    expect(held.control.phase).toBe("completedInterrupted");
    expect(rowsOf(rig.reader, "turnHeader")[0].state).toBe("completedInterrupted");
    expect(rowsOf(rig.reader, "assistantText")[0].state).toBe("interrupted");
  });

  it("subscribe with the held base resumes (ack only when current, retained deltas otherwise); a foreign logEpoch gets a snapshot", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "hi" });
    const held = await rig.reader.idleAfter(1);
    const other = new FrameReader(rig.conn);
    const before = other.wire.length;
    const current = await other.subscribe(rig.sessionId, { base: { logEpoch: held.logEpoch, seq: held.seq } });
    expect(current.ack.mode).toBe("resume");
    expect(other.wire.length).toBe(before);
    const behind = new FrameReader(rig.conn);
    const resumed = await behind.subscribe(rig.sessionId, { base: { logEpoch: held.logEpoch, seq: 1 } });
    expect(resumed.ack.mode).toBe("resume");
    expect(behind.logical.at(-1)).toMatchObject({
      deliveryKind: "initial",
      frame: { fromSeq: 1, toSeq: held.seq, payload: { kind: "deltas" } },
    });
    const foreign = new FrameReader(rig.conn);
    expect((await foreign.subscribe(rig.sessionId, { base: { logEpoch: "other", seq: 1 } })).ack.mode).toBe("snapshot");
  });

  it("gap knob: one deltas frame never arrives; resync with the held base recovers the missed deltas", async () => {
    const rig = await v4Rig({ profile: { v4GapAtFrame: 3 } });
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:stream-until-cancel interval=40 max=8" });
    await rig.reader.waitFor((r) => r.gaps.length > 0, "a gap");
    const held = rig.reader.held.seq;
    expect(rig.reader.gaps[0]!.fromSeq).toBeGreaterThan(held);
    const answer = await rig.reader.resync();
    expect(answer.ack).toMatchObject({ subscriptionId: rig.reader.subscriptionId, mode: "resume" });
    const recovery = rig.reader.logical.find((l) => l.deliveryKind === "recovery");
    expect(recovery?.frame).toMatchObject({ fromSeq: held, payload: { kind: "deltas" } });
    await rig.reader.idleAfter(1);
    expect(textOf(rig.reader)).toBe(Array.from({ length: 8 }, (_, k) => `tick ${k} `).join(""));
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "fault" && e.fault === "v4-gap")).toHaveLength(1);
    // forceSnapshot answers with a recovery snapshot
    expect((await rig.reader.resync(true)).ack.mode).toBe("snapshot");
    expect(rig.reader.logical.at(-1)).toMatchObject({ deliveryKind: "recovery", frame: { fromSeq: 0, payload: { kind: "snapshot" } } });
  });

  it("sim:answer-resync: the batch of one stamp is lost with the retained log; the resync is a snapshot of the answer mid-stream", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:answer-resync n=3000 bytes=64 at=1500" });
    await rig.reader.waitFor((r) => r.gaps.length > 0, "a gap");
    const before = textOf(rig.reader);
    expect(before).toHaveLength(1500 * 64); // everything before the lost stamp was published
    const answer = await rig.reader.resync();
    expect(answer.ack).toMatchObject({ subscriptionId: rig.reader.subscriptionId, mode: "snapshot" });
    const recovery = rig.reader.logical.find((l) => l.deliveryKind === "recovery")!;
    expect(recovery.frame).toMatchObject({ fromSeq: 0, payload: { kind: "snapshot" } });
    const row = recovery.frame.payload.snapshot.rows.window.find((r: Any) => r.kind === "assistantText");
    expect(row.text.startsWith(before)).toBe(true);
    expect(row.text).toContain("@1500:");
    await rig.reader.idleAfter(1);
    const stamps = [...textOf(rig.reader).matchAll(/@(\d+):/g)].map((m) => Number(m[1]));
    expect(stamps).toEqual(Array.from({ length: 3000 }, (_, k) => k));
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "fault" && e.fault === "v4-gap-log-lost")).toHaveLength(1);
  });

  it("unsolicited snapshot knob: one online frame is a snapshot a reader must take as the new state", async () => {
    const rig = await v4Rig({ profile: { v4UnsolicitedSnapshotAtFrame: 2 } });
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:stream-until-cancel interval=40 max=8" });
    await rig.reader.idleAfter(1);
    const online = rig.reader.logical.filter((l) => l.deliveryKind === "online");
    expect(online.map((l) => l.frame.payload.kind).slice(0, 3)).toEqual(["deltas", "snapshot", "deltas"]);
    expect(online[1]!.frame).toMatchObject({ fromSeq: 0, toSeq: online[1]!.frame.payload.snapshot.seq });
    expect(online[2]!.frame.fromSeq).toBe(online[1]!.frame.toSeq);
    expect(rig.reader.gaps).toEqual([]);
    expect(textOf(rig.reader)).toBe(Array.from({ length: 8 }, (_, k) => `tick ${k} `).join(""));
  });

  it("fragments: a logical frame above the limit is split; the pieces reassemble with a correct crc32", async () => {
    const rig = await v4Rig({ profile: { v4FrameLimitBytes: 4096 } });
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:big-text mb=0.05" });
    await rig.reader.idleAfter(1);
    const fragments = rig.reader.wire.filter((f) => f.kind === "fragment");
    expect(fragments.length).toBeGreaterThan(1);
    for (const f of fragments) expect(Buffer.byteLength(JSON.stringify(f))).toBeLessThanOrEqual(4096);
    const first = fragments[0];
    const same = fragments.filter((f) => f.logicalFrameId === first.logicalFrameId).sort((a, b) => a.fragmentIndex - b.fragmentIndex);
    expect(same.map((f) => f.fragmentIndex)).toEqual([...Array(first.fragmentCount).keys()]);
    const bytes = Buffer.concat(same.map((f) => Buffer.from(f.dataBase64, "base64")));
    expect(bytes.length).toBe(first.logicalBytes);
    expect(first.checksum).toEqual({ algorithm: "crc32", value: crc32Hex(bytes) });
    expect(first).toMatchObject({ wireVersion: 3, subscriptionId: rig.reader.subscriptionId, topic: `conversation/${rig.sessionId}` });
    expect(textOf(rig.reader).length).toBe(50_000);
    expect(rig.reader.logical.some((l) => l.fragments > 1)).toBe(true);
  });

  it("rowsRange pages the rows older than the 60-row window; limits are 1..200", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    for (let k = 1; k <= 21; k++) {
      await v4Command(rig, "sendText", { text: `turn ${k}` });
      await rig.reader.idleAfter(k);
    }
    const fresh = new FrameReader(rig.conn);
    await fresh.subscribe(rig.sessionId);
    expect(fresh.held.rows).toMatchObject({ totalCount: 63, firstRowId: 1 });
    expect(fresh.held.rows.window).toHaveLength(60);
    const oldest = fresh.held.rows.window[0].rowId;
    const page = await rig.conn.agent.conversationRowsRangeV4({
      workspacePath: WS,
      sessionId: rig.sessionId,
      beforeRowId: oldest,
      limit: 200,
    });
    expect(page).toMatchObject({ atSeq: fresh.held.seq, atRevision: fresh.held.revision, atLogEpoch: fresh.held.logEpoch, hasMore: false });
    expect(page.rows.map((r: Any) => r.rowId)).toEqual([1, 2, 3]);
    const small = await rig.conn.agent.conversationRowsRangeV4({
      workspacePath: WS,
      sessionId: rig.sessionId,
      beforeRowId: oldest,
      limit: 2,
    });
    expect(small).toMatchObject({ hasMore: true });
    expect(small.rows.map((r: Any) => r.rowId)).toEqual([2, 3]);
    const rest = await rig.conn.agent.conversationRowsRangeV4({ workspacePath: WS, sessionId: rig.sessionId, beforeRowId: 2, limit: 2 });
    expect(rest).toMatchObject({ hasMore: false });
    expect(rest.rows.map((r: Any) => r.rowId)).toEqual([1]);
    const newest = await rig.conn.agent.conversationRowsRangeV4({ workspacePath: WS, sessionId: rig.sessionId, limit: 1 });
    expect(newest.rows.map((r: Any) => r.rowId)).toEqual([63]);
    for (const limit of [0, 201, 1.5]) {
      await expect(rig.conn.agent.conversationRowsRangeV4({ workspacePath: WS, sessionId: rig.sessionId, limit })).rejects.toMatchObject({
        code: -32602,
      });
    }
  });

  it("unsubscribe (and a replacing subscribe) stop the frames of the old subscription", async () => {
    const rig = await v4Rig();
    const legacy = new EventCollector(rig.conn, { workspacePath: WS, sessionId: rig.sessionId, deliveryKind: "desktop-continuous" });
    const { ack } = await rig.reader.subscribe(rig.sessionId);
    const replacing = new FrameReader(rig.conn);
    const second = await replacing.subscribe(rig.sessionId);
    expect(second.ack.subscriptionId).not.toBe(ack.subscriptionId);
    await v4Command(rig, "sendText", { text: "one" });
    await replacing.idleAfter(1);
    expect(rig.reader.wire.filter((f) => f.subscriptionId === ack.subscriptionId)).toHaveLength(1);
    await rig.conn.agent.unsubscribeConversationV4({ workspacePath: WS, subscriptionId: second.ack.subscriptionId });
    const framesBefore = replacing.wire.filter((f) => f.subscriptionId === second.ack.subscriptionId).length;
    await v4Command(rig, "sendText", { text: "two" });
    await legacy.terminal(2);
    // a new subscribe publishes everything pending first, so nothing of the turn can still be on its way
    const third = new FrameReader(rig.conn);
    await third.subscribe(rig.sessionId);
    expect(replacing.wire.filter((f) => f.subscriptionId === second.ack.subscriptionId)).toHaveLength(framesBefore);
    expect(rowsOf(third, "userInput").map((r) => r.text)).toEqual(["one", "two"]);
    // an unknown id is ignored silently
    await expect(rig.conn.agent.unsubscribeConversationV4({ workspacePath: WS, subscriptionId: "sub-unknown" })).resolves.toBeUndefined();
  });

  it("an unknown session is fault.subscribe.sessionNotFound; the read calls and the frame listen are in the call log", async () => {
    const rig = await v4Rig();
    await expect(rig.conn.agent.subscribeConversationV4({ workspacePath: WS, sessionId: "ses_missing" })).rejects.toMatchObject({
      data: "fault.subscribe.sessionNotFound",
    });
    const log = await rig.install.readCallLog();
    expect(log.some((e) => e.kind === "call" && e.method === "subscribeConversationV4")).toBe(true);
    expect(log.some((e) => e.kind === "listen" && e.event === "onDynamicConversationFrame")).toBe(true);
  });

  it("a failed turn: header failed, phase error, lastError; an Agent tool has a subagent row", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:turn-failed" });
    const failed = await rig.reader.idleAfter(1);
    expect(failed.control).toMatchObject({
      phase: "error",
      lastError: { code: expect.any(String), message: expect.any(String), recoverable: true },
    });
    expect(rowsOf(rig.reader, "turnHeader")[0].state).toBe("failed");
    await v4Command(rig, "sendText", { text: "sim:subagent" });
    const held = await rig.reader.idleAfter(2);
    expect(held.control).toMatchObject({ phase: "completedSuccess", lastError: null });
    const agent = rowsOf(rig.reader, "toolCall").find((r) => r.toolName === "Agent");
    expect(rowsOf(rig.reader, "subagent")).toEqual([
      expect.objectContaining({
        parentToolCallId: agent.toolCallId,
        subagentType: "explore",
        status: "success",
        summaryText: "Found 3 test files",
        childSessionId: expect.any(String),
      }),
    ]);
    // ZCode's toolCall rows never name a parent: the child's Read is in the child's conversation only
    expect(rowsOf(rig.reader, "toolCall").map((r) => r.toolName)).toEqual(["Agent"]);
    expect(rowsOf(rig.reader, "toolCall").some((r) => "parentToolCallId" in r)).toBe(false);
  });

  it("a sub-agent's rows are its child's conversation, on its own topic and rows pages; after a host restart too", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:subagent" });
    const before = await rig.reader.idleAfter(1);
    const subagent = before.rows.window.find((r: Any) => r.kind === "subagent");
    const childId: string = subagent.childSessionId;
    const childRows = async (c: typeof rig.conn): Promise<Any[]> =>
      (await c.agent.conversationRowsRangeV4({ workspacePath: WS, sessionId: childId, limit: 50 })).rows;
    const pick = (r: Any) => [r.kind, r.toolName ?? r.text ?? r.origin, r.state ?? r.status];
    const live = (await childRows(rig.conn)).map(pick);
    expect(live).toEqual([
      ["turnHeader", "userInput", "completedSuccess"],
      ["userInput", "List the tests", undefined],
      ["toolCall", "Read", "success"],
    ]);
    // the child's own topic: its snapshot holds the same rows
    const childReader = new FrameReader(rig.conn);
    await childReader.subscribe(childId);
    expect(childReader.wire.some((f: Any) => f.topic === `conversation/${childId}`)).toBe(true);
    expect(childReader.held.rows.window.map(pick)).toEqual(live);
    await rig.host.dispose();
    const host = startHost(rig.install);
    const conn = await host.connect();
    await conn.agent.initialize({ workspacePath: WS });
    await handshake({ conn } as unknown as SessionRig);
    const reader = new FrameReader(conn);
    await reader.subscribe(rig.sessionId, { base: { logEpoch: before.logEpoch, seq: before.seq } });
    // rebuilt from the stored messages: the parent's rows as live, the child's in its own conversation
    expect(rowsOf(reader, "toolCall").map((r) => r.toolName)).toEqual(["Agent"]);
    expect(rowsOf(reader, "subagent")[0]).toMatchObject({ childSessionId: childId, status: "success", summaryText: "Found 3 test files" });
    expect((await childRows(conn)).filter((r) => r.kind === "toolCall").map(pick)).toEqual([["toolCall", "Read", "success"]]);
  });

  it("sim:subagent-background: a backgrounded subagent is a cancellable background work; cancelBackgroundWork cancels it", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:subagent-background" });
    const running = await rig.reader.waitFor(
      (r) => (r.held?.backgroundWorks as Any[] | undefined)?.find((w) => w.kind === "subagent" && w.cancellable === true),
      "a cancellable subagent background work",
    );
    const row = rowsOf(rig.reader, "subagent")[0];
    expect(row).toMatchObject({ backgrounded: true, workId: running.workId, status: "running", childSessionId: running.childSessionId });
    expect(rig.reader.held.subagents).toMatchObject({ childSessionIds: [running.childSessionId], endedTotal: 0 });
    const ack = await v4Command(rig, "cancelBackgroundWork", { workId: running.workId });
    expect(ack).toMatchObject({ status: "accepted" });
    await rig.reader.idleAfter(1);
    expect(rowsOf(rig.reader, "subagent")[0]).toMatchObject({ status: "cancelled", summaryText: "The background agent was cancelled." });
    expect((rig.reader.held.backgroundWorks as Any[])[0]).toMatchObject({ status: "cancelled", cancellable: false });
    // an ended work: noop (not compare-and-set, so no stale either)
    expect(await v4Command(rig, "cancelBackgroundWork", { workId: running.workId })).toMatchObject({ status: "noop" });
  });

  it("a stored session after a host restart: subscribe cold-resumes it, rows rebuilt from the stored messages, a new logEpoch", async () => {
    const rig = await v4Rig();
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:tool-read" });
    const before = await rig.reader.idleAfter(1);
    await rig.host.dispose();
    const host = startHost(rig.install);
    const conn = await host.connect();
    await conn.agent.initialize({ workspacePath: WS });
    await handshake({ conn } as unknown as SessionRig);
    const reader = new FrameReader(conn);
    const answer = await reader.subscribe(rig.sessionId, { base: { logEpoch: before.logEpoch, seq: before.seq } });
    expect(answer.ack.mode).toBe("snapshot");
    expect(answer.ack.logEpoch).not.toBe(before.logEpoch);
    const shape = (rows: Any[]) => rows.map((r) => [r.rowId, r.kind, r.text ?? r.toolName ?? r.origin, r.state ?? r.status]);
    expect(shape(reader.rows())).toEqual(shape(before.rows.window));
    expect(rowsOf(reader, "toolCall")[0]).toMatchObject({
      input: before.rows.window.find((r: Any) => r.kind === "toolCall").input,
      status: "success",
    });
    // live again: a V4 input runs in it
    const ack = await v4Command({ conn, sessionId: rig.sessionId }, "sendText", { text: "again" });
    expect(ack.status).toBe("accepted");
    await reader.idleAfter(2);
    expect(rowsOf(reader, "userInput").map((r) => r.text)).toEqual(["sim:tool-read", "again"]);
  });
});
