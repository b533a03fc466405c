/**
 * ToolCallTracker.adopt: a call an interaction showed the client before any event of it was read
 * (a subagent's request overtaking its child's tool row) is updated by its own events later,
 * never announced a second time.
 */
import { describe, expect, it } from "vitest";
import { ToolCallTracker } from "../../../src/session/tool-call-tracker.js";

describe("ToolCallTracker.adopt", () => {
  it("a call shown first by an interaction: its own row updates it (title, kind, status), no second tool_call", () => {
    const tracker = new ToolCallTracker("/work");
    expect(
      tracker.adopt({ toolCallId: "t1", title: "Run shell command", kind: "other", status: "pending", rawInput: { command: "ls" } }),
    ).toBe(true);
    expect(tracker.describe("t1")).toMatchObject({ title: "Run shell command", status: "pending", rawInput: { command: "ls" } });
    const scheduled = tracker.toolUpdated({ kind: "scheduled", toolCallId: "t1", toolName: "Bash", input: { command: "ls" } } as never);
    expect(scheduled.map((u) => u.sessionUpdate)).toEqual(["tool_call_update"]);
    expect(scheduled[0]).toMatchObject({ kind: "execute", title: expect.stringContaining("ls") });
    const started = tracker.toolUpdated({ kind: "started", toolCallId: "t1", toolName: "Bash" } as never);
    expect(started).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" }]);
  });

  it("a call the engine already announced is not adopted (only an update is due)", () => {
    const tracker = new ToolCallTracker("/work");
    expect(
      tracker.toolUpdated({ kind: "scheduled", toolCallId: "t2", toolName: "Read", input: { file_path: "/work/a" } } as never),
    ).toHaveLength(1);
    expect(tracker.adopt({ toolCallId: "t2", title: "x", status: "pending" })).toBe(false);
    expect(tracker.describe("t2")).toMatchObject({ kind: "read" });
  });

  it("an adopted call still open when the turn ends early is closed failed", () => {
    const tracker = new ToolCallTracker("/work");
    tracker.adopt({ toolCallId: "t3", title: "q", status: "pending" });
    expect(tracker.closeOpen("cancelled")).toEqual([expect.objectContaining({ toolCallId: "t3", status: "failed" })]);
  });
});
