import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { answerPermission, nextUserInput, promptToEnd, sessionRig, WS } from "./support/session-helpers.js";
import { expectIncreasingSeq, streamingKinds, terminals, toolKinds } from "./support/envelopes.js";

describe("tool scenarios (docs/zcode-host.md §5.5, §5.6, §12.2 #3-5)", () => {
  it("tool-bash: streamed input, tool_call, scheduled → started → progress ×2 → result, then text", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:tool-bash");
    expect(streamingKinds(turn)).toEqual([
      "tool_input_start",
      "tool_input_delta",
      "tool_input_delta",
      "tool_input_end",
      "tool_call",
      "text_delta",
      "text_delta",
    ]);
    const input = turn
      .filter((e) => e.type === "model.streaming" && e.payload.kind === "tool_input_delta")
      .map((e) => e.payload.delta)
      .join("");
    expect(JSON.parse(input)).toEqual({ command: "npm test", description: "Run the tests" });
    expect(toolKinds(turn)).toEqual(["scheduled", "started", "progress", "progress", "result"]);
    const progress = turn.find((e) => e.type === "tool.updated" && e.payload.kind === "progress").payload;
    expect(progress).toMatchObject({ toolName: "Bash", pid: 5123, stdoutTail: expect.any(String), elapsedMs: expect.any(Number) });
    const result = turn.find((e) => e.type === "tool.updated" && e.payload.kind === "result").payload;
    expect(result).toMatchObject({ result: { success: true, perf: { exitCode: 0 } }, duration: expect.any(Number) });
    expect(terminal.payload).toMatchObject({ resultType: "success", toolCallCount: 1 });
  });

  it.each([
    ["sim:tool-read", "Read", { file_path: "package.json", offset: 1, limit: 200 }],
    ["sim:tool-edit", "Edit", { file_path: "src/math.js", old_string: "return a - b;", new_string: "return a + b;" }],
    ["sim:tool-write", "Write", { file_path: "notes/todo.md", content: "# TODO\n\n- write tests\n" }],
  ])("%s: %s with its input and a result", async (prompt, toolName, input) => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, prompt);
    const scheduled = turn.find((e) => e.type === "tool.updated" && e.payload.kind === "scheduled").payload;
    expect(scheduled).toMatchObject({ toolName, input });
    expect(toolKinds(turn)).toEqual(["scheduled", "started", "result"]);
  });

  it("many-reads n=N: one turn of N Read tools, each scheduled → started → result, then text", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:many-reads n=5");
    const reads = turn.filter((e) => e.type === "tool.updated" && e.payload.kind === "result" && e.payload.toolName === "Read");
    expect(reads).toHaveLength(5);
    expect(new Set(reads.map((e) => e.payload.toolCallId)).size).toBe(5);
    expect(terminal.payload).toMatchObject({ resultType: "success", toolCallCount: 5 });
  });

  it("tool-edit: the persisted tool part carries the file_diff display", async () => {
    const rig = await sessionRig();
    await promptToEnd(rig, "sim:tool-edit");
    const read = await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId });
    const part = read.messages[1].parts.find((p: Any) => p.type === "tool");
    expect(part).toMatchObject({
      tool: "Edit",
      state: { status: "completed" },
      metadata: { display: { kind: "file_diff", filePath: "src/math.js" } },
    });
    expect(part.metadata.display.structuredPatch[0].lines).toContain("+  return a + b;");
  });

  it("tool-error: the tool ends in error, then text and a successful turn", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:tool-error");
    expect(toolKinds(turn)).toEqual(["scheduled", "started", "progress", "error"]);
    expect(turn.find((e) => e.payload.kind === "error").payload.error).toMatchObject({
      type: "tool_error",
      message: "Command exited with code 1",
    });
    expect(terminal.payload.resultType).toBe("success");
  });

  it("tool-batch: two scheduled (second inputOmitted), one result, one error, then the batch summary", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:tool-batch");
    const tools = turn.filter((e) => e.type === "tool.updated").map((e) => e.payload);
    expect(tools.map((p) => p.kind)).toEqual(["scheduled", "scheduled", "started", "started", "result", "error", "batch"]);
    expect(tools[1]).toMatchObject({ inputOmitted: true });
    expect(tools[1].input).toBeUndefined();
    expect(tools[6]).toEqual({ kind: "batch", toolCallIds: [tools[0].toolCallId, tools[1].toolCallId], successCount: 1, errorCount: 1 });
  });

  it("large-output bytes=N: a result of exactly N bytes", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:large-output bytes=3000000", 15000);
    const result = turn.find((e) => e.type === "tool.updated" && e.payload.kind === "result").payload;
    expect(result.result.content).toHaveLength(3000000);
  });

  it("subagent: the child tool carries source subagent, parent and child ids", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:subagent");
    const child = turn.filter((e) => e.type === "tool.updated" && e.payload.source === "subagent");
    expect(child.map((e) => e.payload.kind)).toEqual(["scheduled", "started", "result"]);
    const parent = turn.find((e) => e.type === "tool.updated" && e.payload.toolName === "Agent").payload;
    expect(child[0].payload).toMatchObject({
      parentToolCallId: parent.toolCallId,
      childSessionId: expect.any(String),
      agentType: "explore",
    });
  });

  it("subagent-permission: the child Bash asks with a subagent origin naming the child session; the answer reaches the tool", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:subagent-permission");
    const { request, accepted } = await answerPermission(rig, "allow_once");
    expect(accepted).toBe(true);
    const terminal = await rig.events.terminal(1);
    const turn = rig.events.ofTurn(terminal.turnId);
    const parent = turn.find((e) => e.type === "tool.updated" && e.payload.toolName === "Agent").payload;
    expect(request).toMatchObject({
      toolName: "Bash",
      origin: { kind: "subagent", childSessionId: expect.any(String), parentSessionId: rig.sessionId, parentToolCallId: parent.toolCallId },
    });
    const child = turn.filter((e) => e.type === "tool.updated" && e.payload.source === "subagent");
    expect(child.at(-1).payload).toMatchObject({ kind: "result", childSessionId: request.origin.childSessionId });
    expect(terminal.payload.resultType).toBe("success");
  });

  it("subagent-question: the child AskUserQuestion asks with a subagent origin naming the child session; the answer reaches the Agent result", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:subagent-question");
    const request = await nextUserInput(rig);
    expect(request).toMatchObject({
      toolName: "AskUserQuestion",
      origin: {
        kind: "subagent",
        childSessionId: expect.any(String),
        parentSessionId: rig.sessionId,
        parentToolCallId: expect.any(String),
      },
    });
    expect(request.questions).toHaveLength(1);
    const content = { answer_0: "node" };
    expect(await rig.conn.task.respondElicitation({ taskId: rig.sessionId, requestId: request.requestId, action: "accept", content })).toBe(
      true,
    );
    const terminal = await rig.events.terminal(1);
    const turn = rig.events.ofTurn(terminal.turnId);
    const agent = turn.filter((e) => e.type === "tool.updated" && e.payload.toolName === "Agent").map((e) => e.payload);
    expect(agent[0].toolCallId).toBe(request.origin.parentToolCallId);
    expect(agent.at(-1)).toMatchObject({ kind: "result", result: { content: "Runner: node" } });
    const child = turn.filter((e) => e.type === "tool.updated" && e.payload.source === "subagent");
    expect(child.map((e) => e.payload.kind)).toEqual(["scheduled", "started", "result"]);
    // ZCode's mirror: the id rewritten tool_subagent_<agentId>_<id>, the child's own id as childToolCallId
    expect(child[0].payload).toMatchObject({
      toolCallId: `tool_subagent_${request.origin.agentId}_${request.toolCallId}`,
      childToolCallId: request.toolCallId,
      childSessionId: request.origin.childSessionId,
      agentType: request.origin.agentType,
      background: false,
    });
    expect(terminal.payload.resultType).toBe("success");
  });

  it("subagent-plan: the child ExitPlanMode asks for approval with a subagent origin; the decision reaches the Agent result", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:subagent-plan");
    const { request, accepted } = await answerPermission(rig, "allow-plan");
    expect(accepted).toBe(true);
    expect(request).toMatchObject({
      toolName: "ExitPlanMode",
      input: { plan: expect.stringContaining("Sub-agent plan") },
      origin: {
        kind: "subagent",
        childSessionId: expect.any(String),
        parentSessionId: rig.sessionId,
        parentToolCallId: expect.any(String),
      },
    });
    const terminal = await rig.events.terminal(1);
    const turn = rig.events.ofTurn(terminal.turnId);
    const agent = turn.filter((e) => e.type === "tool.updated" && e.payload.toolName === "Agent").map((e) => e.payload);
    expect(agent.at(-1)).toMatchObject({
      kind: "result",
      toolCallId: request.origin.parentToolCallId,
      result: { content: "Plan approved." },
    });
    expect(terminal.payload.resultType).toBe("success");
  });

  it("subagent: the stored history has the Agent part first and the child's tool part naming its sub-agent in metadata", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:subagent");
    const child = turn.find((e) => e.type === "tool.updated" && e.payload.source === "subagent").payload;
    const snapshot = await rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId });
    const tools = snapshot.messages.flatMap((m: Any) => m.parts).filter((p: Any) => p.type === "tool");
    expect(tools.map((p: Any) => p.tool)).toEqual(["Agent", "Read"]);
    expect(tools[0].state).toMatchObject({ status: "completed", output: "Found 3 test files" });
    expect(tools[1].metadata).toEqual({
      source: "subagent",
      parentToolCallId: tools[0].callId,
      childSessionId: child.childSessionId,
      agentId: "agent_1",
      agentType: "explore",
    });
  });

  it("subagent-stoppable: runs until stopSubagent names its Agent call (3.18.2), then the child fails cancelled and the turn ends", async () => {
    const rig = await sessionRig({ release: "3.18.2" });
    await rig.prompt("sim:subagent-stoppable wait=20000");
    const started = (
      await rig.events.waitFor(
        (e) =>
          e.type === "session.event" &&
          e.event.type === "tool.updated" &&
          e.event.payload.source === "subagent" &&
          e.event.payload.kind === "started",
        5000,
        "the child tool started",
      )
    ).event;
    const stopped = await rig.conn.agent.stopSubagent({
      workspacePath: WS,
      sessionId: rig.sessionId,
      toolCallId: started.payload.parentToolCallId,
    });
    expect(stopped).toEqual({ stopped: true });
    const terminal = await rig.events.terminal(1);
    const child = rig.events.ofTurn(terminal.turnId).filter((e) => e.type === "tool.updated" && e.payload.source === "subagent");
    expect(child.at(-1).payload).toMatchObject({ kind: "error", error: { type: "cancelled" } });
    expect(terminal.payload.resultType).toBe("success");
  });

  it("background: a model-only background turn arrives while idle, with its own single terminal", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:background delay=20");
    const second = await rig.events.terminal(2);
    const bg = rig.events.ofTurn(second.turnId);
    expect(bg[0]).toMatchObject({ type: "turn.started", payload: { inputSource: "background_task", inputVisibility: "model-only" } });
    expect(bg[0].seq).toBeGreaterThan(terminal.seq);
    expect(terminals(bg)).toHaveLength(1);
    const lifecycle = rig.events.sessionEvents().find((e) => e.type === "session.updated" && e.payload.taskId);
    expect(lifecycle.payload).toMatchObject({ toolName: "Bash", status: "completed", outputTail: expect.any(String) });
    expect(lifecycle.turnId).toBeUndefined();
    const next = await promptToEnd(rig, "after background");
    expect(next.terminal.payload.response).toBe("You said: after background");
    expectIncreasingSeq(rig.events.sessionEvents());
  });

  it("malformed-tool form=event: a tool.updated kind outside the union", async () => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, "sim:malformed-tool");
    expect(toolKinds(turn)).toEqual(["scheduled", "teleported"]);
  });

  it("malformed-tool form=snapshot: a snapshot tool part with an unknown state.status", async () => {
    const rig = await sessionRig();
    await promptToEnd(rig, "sim:malformed-tool form=snapshot");
    const snapshot = rig.events.events.filter((e) => e.type === "snapshot").at(-1).snapshot;
    const parts = snapshot.messages.flatMap((m: Any) => m.parts).filter((p: Any) => p.type === "tool");
    expect(parts.map((p: Any) => p.state.status)).toContain("exploded");
  });
});
