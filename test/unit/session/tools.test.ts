import { describe, expect, it } from "vitest";
import { openSession, setup } from "./harness.js";

describe("session engine: tool calls", () => {
  it("runs the Bash lifecycle: tool_call pending → in_progress with progress → completed with output", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("model.streaming", { kind: "tool_input_start", toolCallId: "c1", toolName: "Bash" });
      s.event("model.streaming", { kind: "tool_input_delta", toolCallId: "c1", delta: '{"command":' });
      s.event("model.streaming", { kind: "tool_input_delta", toolCallId: "c1", delta: '"npm test"}' });
      s.event("model.streaming", { kind: "tool_input_end", toolCallId: "c1" });
      s.event("model.streaming", { kind: "tool_call", toolCallId: "c1", toolName: "Bash", input: { command: "npm test" } });
      s.event("tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Bash", input: { command: "npm test" } });
      s.event("tool.updated", { kind: "started", toolCallId: "c1", toolName: "Bash", startedAt: 1 });
      s.event("tool.updated", { kind: "progress", toolCallId: "c1", toolName: "Bash", stdoutTail: "PASS a\n" });
      s.event("tool.updated", {
        kind: "result",
        toolCallId: "c1",
        toolName: "Bash",
        result: { success: true, content: "PASS a\nPASS b\n", perf: { exitCode: 0 } },
        duration: 5,
      });
      s.complete();
    };
    await engine.prompt([{ type: "text", text: "run" }]);
    const tools = h.client
      .updates(opened.sessionId)
      .filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update");
    expect(tools[0]).toEqual({ sessionUpdate: "tool_call", toolCallId: "c1", title: "Run a command", kind: "execute", status: "pending" });
    expect(tools[1]).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      title: "Run `npm test`",
      rawInput: { command: "npm test" },
    });
    expect(tools.filter((u) => u.sessionUpdate === "tool_call")).toHaveLength(1);
    expect(tools).toContainEqual({ sessionUpdate: "tool_call_update", toolCallId: "c1", status: "in_progress" });
    expect(tools).toContainEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      content: [{ type: "content", content: { type: "text", text: "```\nPASS a\n```" } }],
    });
    expect(tools.at(-1)).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "c1",
      status: "completed",
      rawOutput: { success: true, content: "PASS a\nPASS b\n", perf: { exitCode: 0 } },
      content: [{ type: "content", content: { type: "text", text: "```\nPASS a\nPASS b\n```" } }],
    });
  });

  it("gives Edit and Write diff content and absolute locations, Read a location line", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("tool.updated", {
        kind: "scheduled",
        toolCallId: "e1",
        toolName: "Edit",
        input: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
      });
      s.event("tool.updated", {
        kind: "scheduled",
        toolCallId: "w1",
        toolName: "Write",
        input: { file_path: "/work/project/new.md", content: "# new" },
      });
      s.event("tool.updated", { kind: "scheduled", toolCallId: "r1", toolName: "Read", input: { file_path: "src/a.ts", offset: 40 } });
      s.event("tool.updated", { kind: "result", toolCallId: "e1", result: { success: true, content: "updated" } });
      s.event("tool.updated", { kind: "error", toolCallId: "w1", error: { type: "tool_error", message: "denied" } });
      s.complete();
    };
    await engine.prompt([{ type: "text", text: "edit" }]);
    const updates = h.client.updates(opened.sessionId);
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
    expect(calls.map((c) => c.sessionUpdate === "tool_call" && [c.toolCallId, c.kind, c.status])).toEqual([
      ["e1", "edit", "pending"],
      ["w1", "edit", "pending"],
      ["r1", "read", "pending"],
    ]);
    expect(calls[0]).toEqual({
      sessionUpdate: "tool_call",
      toolCallId: "e1",
      kind: "edit",
      status: "pending",
      title: "Edit src/a.ts",
      rawInput: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
      locations: [{ path: "/work/project/src/a.ts" }],
      content: [{ type: "diff", path: "/work/project/src/a.ts", oldText: "a", newText: "b" }],
    });
    expect(updates).toContainEqual(
      expect.objectContaining({
        toolCallId: "w1",
        title: "Write new.md",
        content: [{ type: "diff", path: "/work/project/new.md", oldText: null, newText: "# new" }],
      }),
    );
    expect(updates).toContainEqual(
      expect.objectContaining({ toolCallId: "r1", title: "Read src/a.ts", locations: [{ path: "/work/project/src/a.ts", line: 40 }] }),
    );
    expect(updates).toContainEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "e1",
      status: "completed",
      rawOutput: { success: true, content: "updated" },
      content: [
        { type: "diff", path: "/work/project/src/a.ts", oldText: "a", newText: "b" },
        { type: "content", content: { type: "text", text: "updated" } },
      ],
    });
    expect(updates).toContainEqual(
      expect.objectContaining({ toolCallId: "w1", status: "failed", rawOutput: { type: "tool_error", message: "denied" } }),
    );
  });

  it("takes omitted input from the stream, ignores batch summaries and fails on an unknown tool kind", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("model.streaming", { kind: "tool_call", toolCallId: "g1", toolName: "Grep", input: { pattern: "TODO" } });
      s.event("tool.updated", { kind: "scheduled", toolCallId: "g1", toolName: "Grep", inputOmitted: true });
      s.event("tool.updated", { kind: "batch", toolCallIds: ["g1"], successCount: 1, errorCount: 0 });
      s.event("tool.updated", { kind: "exploded", toolCallId: "g1" });
    };
    await expect(engine.prompt([{ type: "text", text: "grep" }])).rejects.toThrow(/malformed "tool.updated"/);
    const updates = h.client.updates(opened.sessionId);
    expect(updates).toContainEqual(
      expect.objectContaining({ toolCallId: "g1", title: "Search for `TODO`", rawInput: { pattern: "TODO" } }),
    );
    expect(h.host.operations.filter((o) => o.operation === "cancelGeneration")).toHaveLength(1);
  });

  it("keeps sub-agent parentage under _meta", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("tool.updated", {
        kind: "scheduled",
        toolCallId: "sub1",
        toolName: "Read",
        source: "subagent",
        parentToolCallId: "agent1",
        input: { path: "x" },
      });
      s.complete();
    };
    await engine.prompt([{ type: "text", text: "x" }]);
    const call = h.client.updates(opened.sessionId).find((u) => u.sessionUpdate === "tool_call");
    expect(call).toMatchObject({ toolCallId: "sub1", _meta: { zcode: { source: "subagent", parentToolCallId: "agent1" } } });
  });
});
