/**
 * `session/load` replay of subagents (src/session/history-replay.ts `HistoryReplay`, the live
 * tracker of src/session/subagents.ts in replay mode): the shape of live for a subagents-capable
 * replay, its order rules (a child's end before the parent's next words, parallel children, a
 * child whose work continues in the next piece), the bound of tracked children, and the V4 rows
 * carrying a child's origin (src/native/v4-read/history.ts). Every update is valid against the
 * unstable schema.
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log/logger.js";
import { HistoryReplay, replayMessages, type Replayed } from "../../../src/session/history-replay.js";
import { MAX_CHILDREN } from "../../../src/session/subagents.js";
import { rowsHistory } from "../../../src/native/v4-read/history.js";
import { StubHost } from "../native/v4-read/stub-host.js";
import type { SnapshotMessage } from "../../../src/protocol/native-types.js";
import { validateUnstableDefinition } from "../../support/acp-schema.js";

const agentPart = (id: string, status = "completed", output = `summary ${id}`) => ({
  type: "tool",
  callId: id,
  tool: "Agent",
  state: {
    status,
    input: { description: `Task ${id}`, prompt: "do it", subagent_type: "explore" },
    ...(status === "completed" ? { output } : { error: output }),
  },
});
const childPart = (parent: string, n = 1) => ({
  type: "tool",
  callId: `${parent}_read${n}`,
  tool: "Read",
  state: { status: "completed", input: { file_path: `${parent}.txt` }, output: "x" },
  metadata: { source: "subagent", parentToolCallId: parent, childSessionId: `child_${parent}`, agentType: "explore" },
});
const assistant = (...parts: unknown[]): SnapshotMessage => ({ info: { role: "assistant", messageId: "m" }, parts }) as SnapshotMessage;
const user = (text: string): SnapshotMessage => ({ info: { role: "user", messageId: "u" }, parts: [{ type: "text", text }] });

function replay(pieces: SnapshotMessage[][], subagents = true): Replayed[] {
  const r = new HistoryReplay("/w", silentLogger, undefined, subagents ? "ses_parent" : undefined);
  const out = [...pieces.flatMap((piece) => r.piece(piece)), ...r.finish()];
  for (const { update, target } of out) {
    expect(validateUnstableDefinition("SessionNotification", { sessionId: target ?? "ses_parent", update })).toEqual([]);
  }
  return out;
}

const shape = (out: Replayed[]) =>
  out.map(({ update, target }) => {
    const u = update as any;
    const what = u.sessionUpdate === "subagent_update" ? `${u.sessionId}:${u.state.state}` : (u.toolCallId ?? u.content?.text ?? "");
    return `${target ?? "parent"} ${u.sessionUpdate} ${what}`;
  });

describe("session/load replay of subagents", () => {
  it("announce, the child's tool under its id, its summary, idle, then the parent's next words", () => {
    const out = replay([[user("go"), assistant(agentPart("a1"), childPart("a1"), { type: "text", text: "done" })]]);
    expect(shape(out)).toEqual([
      "parent user_message_chunk go",
      "parent tool_call a1",
      "parent subagent_update child_a1:running",
      "child_a1 tool_call a1_read1",
      "child_a1 agent_message_chunk summary a1",
      "parent subagent_update child_a1:idle",
      "parent agent_message_chunk done",
    ]);
    expect(out[2]!.update).toMatchObject({
      title: "Task a1",
      description: "do it",
      _meta: { zcode: { parentToolCallId: "a1", agentType: "explore" } },
    });
    expect((out[2]!.update as any).capabilities).toBeUndefined();
  });

  it("without the capability: exactly the flattened replay of before (no target, no subagent_update)", () => {
    const messages = [user("go"), assistant(agentPart("a1"), childPart("a1"), { type: "text", text: "done" })];
    const out = replay([messages], false);
    expect(out.every((r) => r.target === undefined)).toBe(true);
    expect(out.map((r) => r.update)).toEqual(replayMessages(messages, "/w", silentLogger));
    expect(shape(out)).toEqual([
      "parent user_message_chunk go",
      "parent tool_call a1",
      "parent tool_call a1_read1",
      "parent agent_message_chunk done",
    ]);
  });

  it("parallel children both run until the parent speaks; a child's work continuing in the next piece stays its own", () => {
    const out = replay([
      [user("go"), assistant(agentPart("a1"), agentPart("a2", "error", "cancelled"), childPart("a1"), childPart("a2"))],
      [assistant(childPart("a1", 2), { type: "text", text: "both done" })],
    ]);
    expect(shape(out)).toEqual([
      "parent user_message_chunk go",
      "parent tool_call a1",
      "parent tool_call a2",
      "parent subagent_update child_a1:running",
      "child_a1 tool_call a1_read1",
      "parent subagent_update child_a2:running",
      "child_a2 tool_call a2_read1",
      "child_a1 tool_call a1_read2",
      "child_a1 agent_message_chunk summary a1",
      "parent subagent_update child_a1:idle",
      "parent subagent_update child_a2:idle",
      "parent agent_message_chunk both done",
    ]);
    const ends = out.filter((r) => (r.update as any).state?.state === "idle").map((r) => (r.update as any).state.stopReason);
    expect(ends).toEqual(["end_turn", "cancelled"]);
  });

  it("an Agent part after its child's work (other order) ends it there; a child never ended ends with its turn", () => {
    const out = replay([[user("one"), assistant(childPart("a1"), agentPart("a1")), assistant(childPart("a3")), user("two")]]);
    expect(shape(out)).toEqual([
      "parent user_message_chunk one",
      "parent subagent_update child_a1:running",
      "child_a1 tool_call a1_read1",
      "parent tool_call a1",
      "child_a1 agent_message_chunk summary a1",
      "parent subagent_update child_a1:idle",
      "parent subagent_update child_a3:running",
      "child_a3 tool_call a3_read1",
      "parent subagent_update child_a3:idle",
      "parent user_message_chunk two",
    ]);
  });

  it("a part of a child that already ended is not lost: it replays flattened in the parent", () => {
    const out = replay([[user("go"), assistant(agentPart("a1"), childPart("a1"), { type: "text", text: "then" }, childPart("a1", 2))]]);
    expect(shape(out).slice(-2)).toEqual(["parent agent_message_chunk then", "parent tool_call a1_read2"]);
  });

  it(`at most ${MAX_CHILDREN} children at once: the next one's work stays flattened in the parent`, () => {
    const ids = Array.from({ length: MAX_CHILDREN + 1 }, (_, i) => `p${i}`);
    const out = replay([[user("go"), assistant(...ids.map((id) => childPart(id)))]]);
    const announced = out.filter(
      (r) => (r.update as any).sessionUpdate === "subagent_update" && (r.update as any).state.state === "running",
    );
    expect(announced).toHaveLength(MAX_CHILDREN);
    const last = ids.at(-1)!;
    expect(out.find((r) => (r.update as any).toolCallId === `${last}_read1`)).toEqual({
      update: expect.objectContaining({ sessionUpdate: "tool_call" }),
    });
    // the ones tracked end at the end of the history
    expect(out.filter((r) => (r.update as any).state?.state === "idle")).toHaveLength(MAX_CHILDREN);
  });

  it("V4 rows: a child's tools are read from its own conversation after its subagent row (or the directory's child), then replayed under it", async () => {
    const parent = [
      { rowId: 1, kind: "userInput", turnId: "T1", text: "go" },
      {
        rowId: 2,
        kind: "toolCall",
        turnId: "T1",
        toolCallId: "a1",
        toolName: "Agent",
        status: "success",
        input: {},
        output: { text: "s1" },
      },
      {
        rowId: 3,
        kind: "subagent",
        turnId: "T1",
        parentToolCallId: "a1",
        subagentType: "explore",
        status: "success",
        childSessionId: "child_a1",
      },
      {
        rowId: 4,
        kind: "toolCall",
        turnId: "T1",
        toolCallId: "a2",
        toolName: "Agent",
        status: "success",
        input: {},
        output: { text: "s2" },
      },
      // ZCode may leave `childSessionId` out: the directory (listSessionSubagents) names it by the Agent call
      { rowId: 5, kind: "subagent", turnId: "T1", parentToolCallId: "a2", subagentType: "plan", status: "success" },
      { rowId: 6, kind: "assistantText", turnId: "T1", text: "done" },
    ];
    const child = (id: string) => [
      { rowId: 1, kind: "userInput", turnId: "C", text: "do it" },
      {
        rowId: 2,
        kind: "toolCall",
        turnId: "C",
        toolCallId: `${id}_r`,
        toolName: "Read",
        status: "success",
        input: {},
        output: { text: "x" },
      },
    ];
    const host = new StubHost();
    const reads: string[] = [];
    host.handlers.set("conversationRowsRangeV4", (params) => {
      const id = params.sessionId as string;
      reads.push(id);
      const rows = id === "S1" ? parent : id === "child_a1" || id === "child_a2" ? child(id) : [];
      return { rows, hasMore: false, atSeq: 1, atRevision: 1, atLogEpoch: "E" };
    });
    const skipped: string[] = [];
    const pieces: SnapshotMessage[][] = [];
    for await (const piece of rowsHistory(
      host,
      { workspacePath: "/w", sessionId: "S1" },
      {
        directory: new Map([["a2", { childSessionId: "child_a2", subagentType: "plan" }]]),
        onChildSkipped: (id) => void skipped.push(id),
      },
    ))
      pieces.push(piece);
    // each child's rows read once, right after its subagent row
    expect(reads.filter((id) => id !== "S1")).toEqual(["child_a1", "child_a2"]);
    const childMeta = pieces
      .flat()
      .flatMap((m) => m.parts)
      .filter((p: any) => p.metadata);
    expect(childMeta.map((p: any) => p.metadata)).toEqual([
      { source: "subagent", childSessionId: "child_a1", parentToolCallId: "a1", agentType: "explore" },
      { source: "subagent", childSessionId: "child_a2", parentToolCallId: "a2", agentType: "plan" },
    ]);
    expect(skipped).toEqual([]);
    const out = replay(pieces);
    expect(out.filter((r) => r.target === "child_a1").map((r) => (r.update as any).toolCallId ?? "summary")).toEqual([
      "child_a1_r",
      "summary",
    ]);
    expect(out.filter((r) => r.target === "child_a2").map((r) => (r.update as any).toolCallId ?? "summary")).toEqual([
      "child_a2_r",
      "summary",
    ]);
  });
});
