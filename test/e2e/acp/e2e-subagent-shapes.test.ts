/**
 * Subagents in the shapes ZCode's own source has (zcode-3.15.1-source.md §2.4, docs/acp.md §2.12,
 * adr/0031), through the built CLI:
 *
 * - V4 (zcode-task-v3, 4.0.0): the parent's `toolCall` rows never name a parent; its `subagent` row
 *   (status `success`, not `completed`) names the child, whose tools are read by subscribing to the
 *   child's own conversation (`conversation/<childSessionId>`), closed at its end; a child's
 *   permission is the parent's interaction with `payload.origin`, answered once; `session/load`
 *   reads the child's own rows after its `subagent` row (and the directory, `listSessionSubagents`);
 *   a backgrounded child that ZCode lists `cancellable` is cancelled with `cancelBackgroundWork`.
 * - Legacy lines: ZCode's mirror renames a child's tool `tool_subagent_<agentId>_<id>` and keeps
 *   the child's own id as `childToolCallId`: under the child session the tool has its own id.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import { answersFor, V3 } from "../answers.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";

const t = e2e();

async function session(subagents: boolean, options: Parameters<typeof t.start>[0] = {}) {
  const client = await t.start(options);
  await client.initialize(subagents ? { subagents: {} } : {});
  const ws = await t.workspace();
  const { sessionId } = await client.newSession(ws);
  return { client, sessionId, ws };
}

function announced(client: AcpTestClient, sessionId: string): any {
  const update = client.updates(sessionId).find((u) => u.sessionUpdate === "subagent_update");
  expect(update).toBeDefined();
  return update;
}

const toolIds = (client: AcpTestClient, sessionId: string): string[] =>
  client
    .updates(sessionId)
    .filter((u) => u.sessionUpdate === "tool_call")
    .map((u) => u.toolCallId as string);

/** the conversations the bridge subscribed to, by session id */
async function subscribed(): Promise<string[]> {
  return (await t.calls("subscribeConversationV4")).map((c) => (c.params as { sessionId: string }).sessionId);
}

describe.runIf(V3)("e2e: V4 subagents through the child's own conversation", () => {
  it("the child's tools come from its conversation, under its session id; the child is unsubscribed at its end", async () => {
    const { client, sessionId } = await session(true);
    await expect(client.prompt(sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
    const childId = announced(client, sessionId).sessionId as string;
    expect(await subscribed()).toEqual(expect.arrayContaining([sessionId, childId]));
    // the child's own tool id (the parent's stream never had it: ZCode's rows are the child's)
    const childTools = toolIds(client, childId);
    expect(childTools).toHaveLength(1);
    expect(childTools[0]).not.toMatch(/^tool_subagent_/);
    expect(
      client
        .updates(childId)
        .filter((u) => u.sessionUpdate.startsWith("tool_call"))
        .at(-1),
    ).toMatchObject({ status: "completed" });
    // ZCode's summary (the subagent row's `summaryText`, status success) is the child's message
    expect(client.text(childId)).toBe("Found 3 test files");
    // one subscription per running child, closed when its row ended (the parent's stays)
    const unsubscribes = await t.calls("unsubscribeConversationV4");
    expect(unsubscribes.length).toBeGreaterThanOrEqual(1);
    client.expectValid();
  });

  it("without the capability the child's tools are still read, flattened into the parent under ZCode's mirror ids", async () => {
    const { client, sessionId } = await session(false);
    await expect(client.prompt(sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
    const ids = toolIds(client, sessionId);
    expect(ids.some((id) => id.startsWith("tool_subagent_"))).toBe(true);
    expect(client.updates(sessionId).some((u) => u.sessionUpdate === "subagent_update")).toBe(false);
    client.expectValid();
  });

  it("a child's permission (payload.origin) is asked under the child and answered once, to the parent's interaction", async () => {
    const asked: any[] = [];
    const { client, sessionId } = await session(true, {
      onPermission: (params) => {
        asked.push(params);
        const allow = params.options.find((o) => o.kind === "allow_once")!;
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      },
    });
    await expect(client.prompt(sessionId, "sim:subagent-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const childId = announced(client, sessionId).sessionId as string;
    expect(asked.map((p) => p.sessionId)).toEqual([childId]);
    // the permission names the child's tool, which the child session showed
    expect(toolIds(client, childId)).toContain(asked[0].toolCall.toolCallId);
    const answers = answersFor(await t.sim().readCallLog(), "respondPermission", sessionId);
    expect(answers).toHaveLength(1);
    client.expectValid();
  });

  it("session/load: the child's tools are read from its own rows after its subagent row (the directory read where allowed)", async () => {
    const first = await session(false);
    await expect(first.client.prompt(first.sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
    await first.client.close();
    const client = await t.start();
    await client.initialize({ subagents: {} });
    await client.agent.request("session/load", { sessionId: first.sessionId, cwd: first.ws, mcpServers: [] });
    const childId = announced(client, first.sessionId).sessionId as string;
    expect(toolIds(client, childId)).toHaveLength(1);
    expect(client.text(childId)).toBe("Found 3 test files");
    const rowReads = (await t.calls("conversationRowsRangeV4")).map((c) => (c.params as { sessionId: string }).sessionId);
    expect(rowReads).toContain(childId);
    const directory = await t.calls("listSessionSubagents");
    const allowed = t.sim().manifest.protocol.allowlist.agent?.includes("listSessionSubagents") ?? false;
    expect(directory.length > 0).toBe(allowed);
    client.expectValid();
  });

  it("a backgrounded child ZCode lists cancellable: its cancel sends cancelBackgroundWork {workId}, not the turn's stop", async () => {
    const { client, sessionId } = await session(true);
    const prompt = client.prompt(sessionId, "sim:subagent-background");
    const announce = await client.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "subagent_update" && u.capabilities?.cancel !== undefined,
    );
    const childId = announce.sessionId as string;
    await client.waitForUpdate(childId, (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await client.cancel(childId);
    const end = await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "subagent_update" && u.state?.state === "idle");
    expect(end).toMatchObject({ sessionId: childId, state: { state: "idle", stopReason: "cancelled" } });
    await expect(prompt).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toBe("The background agent was cancelled.");
    const cancels = await t.commands("cancelBackgroundWork");
    expect(cancels).toHaveLength(1);
    expect(cancels[0]?.params).toMatchObject({ sessionId, payload: { workId: expect.stringMatching(/^work_/) } });
    expect(cancels[0]?.params).not.toHaveProperty("baseRevision");
    expect(await t.calls("stopSubagent")).toHaveLength(0);
    expect(await t.stops(sessionId)).toHaveLength(0);
    client.expectValid();
  });
});

describe.skipIf(V3)("e2e: ZCode's legacy mirror of a subagent's tools", () => {
  it("under the child the tool has the child's own id (childToolCallId); flattened, the mirror's tool_subagent_ id", async () => {
    const capable = await session(true);
    await expect(capable.client.prompt(capable.sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
    const childId = announced(capable.client, capable.sessionId).sessionId as string;
    const childTools = toolIds(capable.client, childId);
    expect(childTools).toHaveLength(1);
    expect(childTools[0]).not.toMatch(/^tool_subagent_/);
    capable.client.expectValid();

    const flat = await session(false);
    await expect(flat.client.prompt(flat.sessionId, "sim:subagent")).resolves.toMatchObject({ stopReason: "end_turn" });
    const mirrored = toolIds(flat.client, flat.sessionId).filter((id) => id.startsWith("tool_subagent_"));
    expect(mirrored).toHaveLength(1);
    // ZCode's mirror id: `tool_subagent_<agentId>_<childToolCallId>` (the scenario's agent is agent_1)
    expect(mirrored[0]).toMatch(/^tool_subagent_agent_1_call_/);
    flat.client.expectValid();
  });
});
