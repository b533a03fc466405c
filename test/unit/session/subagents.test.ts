/**
 * The subagent children of one parent session (src/session/subagents.ts): the bound on tracked
 * children, eviction when done, late events of an ended child, the end remembered for a child
 * whose Agent call ended before its first event (one V4 frame).
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log/logger.js";
import type { ToolUpdatedPayload } from "../../../src/protocol/native-types.js";
import { MAX_CHILDREN, Subagents } from "../../../src/session/subagents.js";
import { validateUnstableDefinition } from "../../support/acp-schema.js";

function rig() {
  const posted: Array<{ update: any; target: string | undefined }> = [];
  const subagents = new Subagents({
    parentSessionId: "ses_parent",
    cwd: "/w",
    logger: silentLogger,
    post: (update: SessionUpdate, target?: string) => posted.push({ update, target }),
    describeParentTool: (id) => ({ toolCallId: id, rawInput: { description: `Task ${id}`, prompt: "do it", subagent_type: "explore" } }),
  });
  return { subagents, posted };
}

const childTool = (child: string, parent: string, kind: "scheduled" | "result" = "scheduled"): ToolUpdatedPayload =>
  kind === "scheduled"
    ? {
        kind,
        toolCallId: `t_${child}`,
        toolName: "Read",
        input: { file_path: "a" },
        source: "subagent",
        parentToolCallId: parent,
        childSessionId: child,
      }
    : {
        kind,
        toolCallId: `t_${child}`,
        toolName: "Read",
        result: { content: "x" },
        source: "subagent",
        parentToolCallId: parent,
        childSessionId: child,
      };

const agentResult = (parent: string, content: string): ToolUpdatedPayload => ({
  kind: "result",
  toolCallId: parent,
  toolName: "Agent",
  result: { success: true, content },
});

describe("subagents of one parent session", () => {
  it("announces a child before its traffic, under its own id, and evicts it when its Agent call ends", () => {
    const { subagents, posted } = rig();
    expect(subagents.toolUpdated(childTool("c1", "p1"))).toBe(true);
    expect(posted[0]).toEqual({
      update: {
        sessionUpdate: "subagent_update",
        sessionId: "c1",
        title: "Task p1",
        description: "do it",
        state: { state: "running" },
        _meta: { zcode: { parentToolCallId: "p1", agentType: "explore" } },
      },
      target: undefined,
    });
    expect(posted[1]).toMatchObject({ update: { sessionUpdate: "tool_call", toolCallId: "t_c1" }, target: "c1" });
    subagents.parentToolUpdated(agentResult("p1", "done"), false);
    expect(posted.slice(-2)).toEqual([
      { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } }, target: "c1" },
      {
        update: { sessionUpdate: "subagent_update", sessionId: "c1", state: { state: "idle", stopReason: "end_turn" } },
        target: undefined,
      },
    ]);
    expect(subagents.size).toBe(0);
    // a late event of the ended child is dropped, not re-announced and not flattened
    const before = posted.length;
    expect(subagents.toolUpdated(childTool("c1", "p1", "result"))).toBe(true);
    expect(posted.length).toBe(before);
  });

  it(`tracks at most ${MAX_CHILDREN} children at once; the next one stays flattened until one ends`, () => {
    const { subagents, posted } = rig();
    for (let i = 0; i < MAX_CHILDREN; i++) expect(subagents.toolUpdated(childTool(`c${i}`, `p${i}`))).toBe(true);
    expect(subagents.size).toBe(MAX_CHILDREN);
    expect(subagents.toolUpdated(childTool("extra", "px"))).toBe(false);
    expect(posted.some((p) => p.update.sessionId === "extra" || p.target === "extra")).toBe(false);
    subagents.parentToolUpdated(agentResult("p0", ""), false);
    expect(subagents.size).toBe(MAX_CHILDREN - 1);
    expect(subagents.toolUpdated(childTool("extra", "px"))).toBe(true);
    subagents.endAll("cancelled", "Stopped.");
    expect(subagents.size).toBe(0);
    // every child ended exactly once
    const ends = posted.filter((p) => p.update.sessionUpdate === "subagent_update" && p.update.state?.state === "idle");
    expect(ends.map((p) => p.update.sessionId).sort()).toEqual(
      [...Array.from({ length: MAX_CHILDREN }, (_, i) => `c${i}`), "extra"].sort(),
    );
  });

  it("an Agent call that ended before its child's first event (one V4 frame) ends the child after that frame", async () => {
    const { subagents, posted } = rig();
    subagents.parentToolUpdated(agentResult("p1", "summary"), false);
    expect(subagents.toolUpdated(childTool("c1", "p1"))).toBe(true);
    expect(subagents.toolUpdated(childTool("c1", "p1", "result"))).toBe(true);
    expect(subagents.size).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(subagents.size).toBe(0);
    expect(posted.at(-1)).toEqual({
      update: { sessionUpdate: "subagent_update", sessionId: "c1", state: { state: "idle", stopReason: "end_turn" } },
      target: undefined,
    });
    expect(posted.filter((p) => p.target === "c1").map((p) => p.update.sessionUpdate)).toEqual([
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
  });

  it("a cancelled child ends cancelled however it ends; the cancel is taken once", () => {
    const { subagents, posted } = rig();
    subagents.toolUpdated(childTool("c1", "p1"));
    expect(subagents.cancelling("c1")).toBe(true);
    expect(subagents.cancelling("c1")).toBe(false);
    subagents.parentToolUpdated(agentResult("p1", "stopped"), false);
    expect(posted.at(-1)?.update).toEqual({
      sessionUpdate: "subagent_update",
      sessionId: "c1",
      state: { state: "idle", stopReason: "cancelled" },
    });
  });
});

describe("subagents of one parent session: ZCode's V4 rows and legacy mirror", () => {
  it("the legacy mirror's rewritten id stays outside: under the child the tool has its childToolCallId", () => {
    const { subagents, posted } = rig();
    const mirrored: ToolUpdatedPayload = {
      ...childTool("c1", "p1"),
      toolCallId: "tool_subagent_agent_1_t_c1",
      childToolCallId: "t_c1",
      agentId: "agent_1",
      agentType: "explore",
    };
    expect(subagents.toolUpdated(mirrored)).toBe(true);
    expect(posted.find((p) => p.target === "c1")?.update).toMatchObject({ sessionUpdate: "tool_call", toolCallId: "t_c1" });
    expect(posted[0]!.update._meta).toEqual({ zcode: { parentToolCallId: "p1", agentType: "explore" } });
  });

  it("a V4 subagent row announces the child, and its terminal status (success) ends it with ZCode's summary", () => {
    const { subagents, posted } = rig();
    subagents.subagentRow({ childSessionId: "c1", parentToolCallId: "p1", subagentType: "explore", status: "running" });
    expect(subagents.has("c1")).toBe(true);
    subagents.subagentRow({ childSessionId: "c1", parentToolCallId: "p1", status: "success", summaryText: "Found 3" });
    expect(subagents.has("c1")).toBe(false);
    expect(posted.map((p) => [p.target, p.update.sessionUpdate, p.update.state?.state ?? p.update.content?.text])).toEqual([
      [undefined, "subagent_update", "running"],
      ["c1", "agent_message_chunk", "Found 3"],
      [undefined, "subagent_update", "idle"],
    ]);
    expect(posted.at(-1)!.update.state).toEqual({ state: "idle", stopReason: "end_turn" });
    // failed and cancelled as ZCode says them; a child first seen ended is announced and ended at once
    subagents.subagentRow({ childSessionId: "c2", status: "failed", summaryText: "boom" });
    subagents.subagentRow({ childSessionId: "c3", status: "cancelled" });
    const ends = posted.filter((p) => p.update.state?.state === "idle").map((p) => [p.update.sessionId, p.update.state.stopReason]);
    expect(ends).toEqual([
      ["c1", "end_turn"],
      ["c2", "error"],
      ["c3", "cancelled"],
    ]);
  });

  it("a backgrounded child outlives its Agent call's result; cancel is advertised once ZCode lists its work cancellable", () => {
    const { subagents, posted } = rig();
    subagents.subagentRow({ childSessionId: "c1", parentToolCallId: "p1", status: "running", backgrounded: true });
    expect(posted[0]!.update.capabilities).toBeUndefined();
    expect(subagents.stopTarget("c1")).toBeUndefined();
    subagents.parentToolUpdated(agentResult("p1", "started in the background"), false);
    expect(subagents.has("c1")).toBe(true);
    subagents.subagentRow({ childSessionId: "c1", parentToolCallId: "p1", status: "running", backgrounded: true, cancellableWorkId: "w1" });
    const patch = posted.at(-1)!.update;
    expect(patch).toEqual({ sessionUpdate: "subagent_update", sessionId: "c1", capabilities: { cancel: {} } });
    expect(validateUnstableDefinition("SessionNotification", { sessionId: "ses_parent", update: patch })).toEqual([]);
    expect(subagents.stopTarget("c1")).toEqual({ kind: "backgroundWork", workId: "w1" });
    // where the install can stop any subagent, a child without a cancellable work is stopped by its Agent call
    subagents.canStop = true;
    subagents.subagentRow({ childSessionId: "c2", parentToolCallId: "p2", status: "running" });
    expect(subagents.stopTarget("c2")).toEqual({ kind: "stopSubagent", parentToolCallId: "p2" });
  });

  it("a backgrounded child whose Agent call ended before its first event is not ended by it (legacy mirror `background`)", async () => {
    const { subagents } = rig();
    subagents.parentToolUpdated(agentResult("p1", "started"), false);
    subagents.toolUpdated({ ...childTool("c1", "p1"), background: true });
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(subagents.has("c1")).toBe(true);
  });
});
