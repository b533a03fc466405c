/**
 * `session/load` of a session whose turn ran a subagent (adr/0027 addendum, docs/acp.md §2.12),
 * through the built CLI in a second process: a client with `clientCapabilities.subagents` gets
 * the same shape as live (the child announced with `subagent_update` on the parent, its tools and
 * summary under its own session id, then idle), all of it before the load's response and nothing
 * after it; a client without the capability gets the history flattened into the parent, exactly as
 * before. Runs on every project: the legacy history (readSession messages) on v1 / v2, the V4 rows
 * (conversationRowsRangeV4) on v3. Every line is validated; the unstable-only updates against the
 * unstable schema, accepted only because the client asked for them.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";

const t = e2e();

/** a session whose one turn ran `sim:subagent` (its child read test/a.test.ts), closed again */
async function sessionWithSubagent(): Promise<{ sessionId: string; ws: string }> {
  const first = await t.start();
  await first.initialize({});
  const ws = await t.workspace();
  const { sessionId } = await first.newSession(ws);
  await expect(first.prompt(sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
  await first.close();
  return { sessionId, ws };
}

/** load it in a new process; the updates of the replay and the index of the load's response */
async function load(subagents: boolean, sessionId: string, ws: string): Promise<{ client: AcpTestClient; responseIndex: number }> {
  const client = await t.start();
  await client.initialize(subagents ? { subagents: {} } : {});
  const before = client.transcript.lines.length;
  await client.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const responseIndex = client.transcript.lines.findIndex(
    (line, index) => index >= before && line.from === "agent" && line.message?.id !== undefined && "result" in line.message,
  );
  expect(responseIndex).toBeGreaterThan(before);
  return { client, responseIndex };
}

function updateLines(client: AcpTestClient): Array<{ sessionId: string; update: any; index: number }> {
  return client.transcript.lines.flatMap((line, index) =>
    line.from === "agent" && line.message?.method === "session/update"
      ? [{ sessionId: line.message.params.sessionId as string, update: line.message.params.update, index }]
      : [],
  );
}

describe("e2e: session/load of a subagent's work", () => {
  it("with clientCapabilities.subagents: announced on the parent, its tool and summary under its id, idle, all before the response", async () => {
    const { sessionId, ws } = await sessionWithSubagent();
    const { client, responseIndex } = await load(true, sessionId, ws);
    const lines = updateLines(client);
    const subagentLines = lines.filter((l) => l.update.sessionUpdate === "subagent_update");
    expect(subagentLines).toHaveLength(2);
    const [announce, end] = subagentLines as [(typeof lines)[number], (typeof lines)[number]];
    expect(announce.sessionId).toBe(sessionId);
    const childId = announce.update.sessionId as string;
    expect(childId).not.toBe(sessionId);
    expect(announce.update).toMatchObject({
      title: "Explore the repo",
      description: "List the tests",
      state: { state: "running" },
      _meta: { zcode: { parentToolCallId: expect.any(String), agentType: "explore" } },
    });
    // a replayed child is over: it never advertises cancel
    expect(announce.update.capabilities).toBeUndefined();
    const child = lines.filter((l) => l.sessionId === childId);
    expect(child.map((l) => l.update.sessionUpdate)).toEqual(["tool_call", "agent_message_chunk"]);
    expect(child[0]!.update).toMatchObject({ title: expect.stringContaining("test/a.test.ts"), status: "completed" });
    expect(child[1]!.update).toMatchObject({ content: { type: "text", text: "Found 3 test files" } });
    expect(end.sessionId).toBe(sessionId);
    expect(end.update).toEqual({ sessionUpdate: "subagent_update", sessionId: childId, state: { state: "idle", stopReason: "end_turn" } });
    // announced before its work, ended after it, before the parent's next words, all before the response
    expect(child.every((l) => l.index > announce.index && l.index < end.index)).toBe(true);
    const answer = lines.find((l) => l.sessionId === sessionId && l.update.sessionUpdate === "agent_message_chunk")!;
    expect(end.index).toBeLessThan(answer.index);
    expect(lines.every((l) => l.index < responseIndex)).toBe(true);
    // the parent keeps its own Agent call, not the child's Read
    const parentTools = client.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call");
    expect(parentTools.map((u) => u.title)).toEqual(["Agent: Explore the repo"]);
    expect(parentTools[0]).toMatchObject({ status: "completed" });
    expect(client.text(sessionId)).toBe("The sub-agent found the tests.");
    await client.close();
    // nothing went out after the response
    expect(updateLines(client).every((l) => l.index < responseIndex)).toBe(true);
    client.expectValid();
  });

  it("without the capability: the subagent's tool replays flattened into the parent, no subagent_update, no child id", async () => {
    const { sessionId, ws } = await sessionWithSubagent();
    const { client, responseIndex } = await load(false, sessionId, ws);
    const lines = updateLines(client);
    expect(lines.every((l) => l.sessionId === sessionId)).toBe(true);
    expect(lines.some((l) => l.update.sessionUpdate === "subagent_update")).toBe(false);
    const tools = client.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call");
    expect(tools.map((u) => u.title)).toEqual(["Agent: Explore the repo", expect.stringContaining("test/a.test.ts")]);
    // as before: a replayed tool call carries no origin of its own
    expect(tools.every((u) => u._meta === undefined)).toBe(true);
    expect(client.text(sessionId)).toBe("The sub-agent found the tests.");
    expect(lines.every((l) => l.index < responseIndex)).toBe(true);
    client.expectValid();
  });
});
