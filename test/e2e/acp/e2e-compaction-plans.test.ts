/**
 * Compaction and plan operations through the built CLI (docs/acp.md §2.11; issue 27 items 1
 * and 3). A client that advertised `session.compaction` gets ZCode's compactions as
 * `compaction_update` (automatic ones and `/compact`, which goes to ZCode as its V4 `compact`
 * command where the release has V4 input), live and in `session/load` replay; a client that
 * advertised the unstable `plan` capability gets the to-do list and the Markdown plans of
 * ExitPlanMode as `plan_update` / `plan_removed`. A client without either capability sees exactly
 * what it saw before: no compaction update, the to-do list as `plan` entries. Every line is checked
 * against the SDK's schema (the unstable one for plan operations) and the capability gates.
 */
import { describe, expect, it } from "vitest";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { V3 } from "../answers.js";

const t = e2e();

const COMPACTION = { session: { compaction: {} } };
const PLAN = { plan: {} } as Record<string, unknown>;
/** the simulated ExitPlanMode plan (fixtures/sim/app/out/host/scenarios/plans.js) */
const PLAN_MARKDOWN = "# Proposed plan\n\n1. Reproduce the failing test\n2. Fix the off-by-one error\n3. Run the suite";
const SUMMARY = "Summary of the conversation so far: the user asked for a fix; the failing test was read and fixed.";
const AUTO = { autoCompactEveryTurns: 1 };

const kinds = (client: AcpTestClient, sessionId: string, ...names: string[]): any[] =>
  client.updates(sessionId).filter((u) => names.includes(u.sessionUpdate));

async function started(capabilities: Record<string, unknown>, options: Parameters<typeof t.start>[0] = {}): Promise<AcpTestClient> {
  const client = await t.start(options);
  await client.initialize(capabilities);
  return client;
}

async function load(capabilities: Record<string, unknown>, sessionId: string, cwd: string): Promise<AcpTestClient> {
  const client = await started(capabilities);
  await client.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
  return client;
}

const approve = (params: { options: Array<{ kind: string; optionId: string }> }) => ({
  outcome: { outcome: "selected" as const, optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
});
const reject = (params: { options: Array<{ kind: string; optionId: string }> }) => ({
  outcome: { outcome: "selected" as const, optionId: params.options.find((o) => o.kind.startsWith("reject"))!.optionId },
});

/** a compaction's `_meta.zcode` (src/session/compaction.ts): ZCode's status word, origin, token counts, summary reference */
const zcodeMeta = (update: any): Record<string, unknown> => update._meta?.zcode ?? {};

describe("e2e: compaction updates, gated on session.compaction", () => {
  it("ZCode compacting by itself: in_progress, completed, token counts in _meta, no summary; the same after load, summary hidden", async () => {
    const client = await started(COMPACTION, { simProfile: AUTO });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    const live = kinds(client, sessionId, "compaction_update", "compaction_summary_chunk");
    expect(live.map((u) => u.status)).toEqual(["in_progress", "completed"]);
    const id = live[0].compactionId;
    expect(typeof id).toBe("string");
    expect(live[1].compactionId).toBe(id);
    // ZCode sends no summary text (only a reference to its model-only summary message)
    expect(live.some((u) => "summary" in u)).toBe(false);
    expect(zcodeMeta(live[0])).toMatchObject({ origin: "auto" });
    const done = zcodeMeta(live[1]);
    expect(done).toMatchObject({ origin: "auto", summaryRef: expect.any(String) });
    expect(done.tokensAfter).toEqual(expect.any(Number));
    expect(done.tokensAfter as number).toBeLessThanOrEqual(done.tokensBefore as number);
    // the turn's answer still comes after the compaction
    expect(client.text(sessionId)).toContain("hello");
    client.expectValid();
    await client.close();

    const loaded = await load(COMPACTION, sessionId, ws);
    const replayed = kinds(loaded, sessionId, "compaction_update", "compaction_summary_chunk");
    expect(replayed).toHaveLength(1);
    expect(replayed[0]).toMatchObject({ sessionUpdate: "compaction_update", compactionId: id, status: "completed" });
    expect(zcodeMeta(replayed[0])).toMatchObject({ tokensAfter: done.tokensAfter, summaryRef: done.summaryRef });
    // the replay keeps the history's order: the user's text, the compaction, the answer
    const order = loaded.updates(sessionId).map((u) => u.sessionUpdate);
    expect(order.indexOf("user_message_chunk")).toBeLessThan(order.indexOf("compaction_update"));
    // the summary ZCode keeps for the model is never shown as a message
    expect(loaded.updates(sessionId).filter((u) => JSON.stringify(u).includes(SUMMARY))).toEqual([]);
    loaded.expectValid();
  });

  it("a client without session.compaction sees no compaction update, live or after load, and the same answer", async () => {
    const client = await started({}, { simProfile: AUTO });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(kinds(client, sessionId, "compaction_update", "compaction_summary_chunk")).toEqual([]);
    expect(client.text(sessionId)).toContain("hello");
    client.expectValid();
    await client.close();

    // the session did compact: a client that asks sees it in the history
    const asking = await load(COMPACTION, sessionId, ws);
    expect(kinds(asking, sessionId, "compaction_update")).toHaveLength(1);
    asking.expectValid();
    await asking.close();
    const plain = await load({}, sessionId, ws);
    expect(kinds(plain, sessionId, "compaction_update", "compaction_summary_chunk")).toEqual([]);
    expect(plain.updates(sessionId).filter((u) => JSON.stringify(u).includes(SUMMARY))).toEqual([]);
    plain.expectValid();
  });

  it("a compaction that compacted nothing (ZCode's skipped / noop) is not left open: closed completed, noop in _meta", async () => {
    const client = await started(COMPACTION, { simProfile: { ...AUTO, compactOutcome: "skipped" } });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    const live = kinds(client, sessionId, "compaction_update");
    expect(live.map((u) => u.status)).toEqual(["in_progress", "completed"]);
    expect(zcodeMeta(live[1]).status).toMatch(/^(noop|skipped)$/);
    client.expectValid();
    await client.close();
    // nothing was compacted: the history shows no compaction
    const loaded = await load(COMPACTION, sessionId, ws);
    expect(kinds(loaded, sessionId, "compaction_update")).toEqual([]);
    loaded.expectValid();
  });

  it("/compact is ZCode's compact command (its ack has no result): the prompt ends when the compaction does", async () => {
    const client = await started(COMPACTION);
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "first")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(kinds(client, sessionId, "compaction_update")).toEqual([]);
    await expect(client.prompt(sessionId, "/compact")).resolves.toMatchObject({ stopReason: "end_turn" });
    const live = kinds(client, sessionId, "compaction_update");
    expect(live.map((u) => u.status)).toEqual(["in_progress", "completed"]);
    expect(zcodeMeta(live[1])).toMatchObject({ origin: "manual", tokensAfter: expect.any(Number) });
    expect(live.some((u) => "summary" in u)).toBe(false);
    const compacts = forSession(await t.commands("compact"), sessionId);
    const texts = forSession(await t.commands("sendText"), sessionId).map((c) => (c.params as { payload: { text: string } }).payload.text);
    expect(compacts).toHaveLength(1);
    expect(texts).toEqual(["first"]);
    // the session goes on after it
    await expect(client.prompt(sessionId, "after")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
    await client.close();

    const loaded = await load(COMPACTION, sessionId, ws);
    const replayed = kinds(loaded, sessionId, "compaction_update");
    expect(replayed).toHaveLength(1);
    expect(replayed[0]).toMatchObject({ compactionId: live[1].compactionId, status: "completed" });
    expect(loaded.updates(sessionId).filter((u) => JSON.stringify(u).includes(SUMMARY))).toEqual([]);
    loaded.expectValid();
  });

  it("a second /compact while one runs is refused by ZCode (compactOperationLock): a readable error, the first one goes on", async () => {
    const client = await started(COMPACTION, { simProfile: { compactMs: 1500 } });
    const { sessionId } = await client.newSession(await t.workspace());
    const first = client.prompt(sessionId, "/compact");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "compaction_update" && u.status === "in_progress");
    await expect(client.prompt(sessionId, "/compact")).rejects.toMatchObject({
      message: expect.stringContaining("already compacting"),
      data: expect.objectContaining({ code: "SESSION_BUSY" }),
    });
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(kinds(client, sessionId, "compaction_update").map((u) => u.status)).toEqual(["in_progress", "completed"]);
    // both went to ZCode as its compact command; ZCode refused the second
    expect(forSession(await t.commands("compact"), sessionId)).toHaveLength(2);
    client.expectValid();
  });

  it("session/cancel during /compact stops it: the prompt answers cancelled, the compaction ends cancelled", async () => {
    const client = await started(COMPACTION, { simProfile: { compactMs: 5000 } });
    const { sessionId } = await client.newSession(await t.workspace());
    const compact = client.prompt(sessionId, "/compact");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "compaction_update" && u.status === "in_progress");
    await client.cancel(sessionId);
    await expect(compact).resolves.toMatchObject({ stopReason: "cancelled" });
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "compaction_update" && u.status === "cancelled");
    expect(forSession(await t.stops(sessionId), sessionId)).toHaveLength(1);
    await expect(client.prompt(sessionId, "after")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("a /compact that fails with a prompt queued behind it: the prompt still runs (ZCode held its queue; it is released)", async () => {
    const client = await started(COMPACTION, { simProfile: { compactMs: 800, compactOutcome: "failed" } });
    const { sessionId } = await client.newSession(await t.workspace());
    const compact = client.prompt(sessionId, "/compact");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "compaction_update" && u.status === "in_progress");
    const after = client.prompt(sessionId, "after the compaction");
    await expect(compact).rejects.toMatchObject({ message: expect.stringContaining("compaction failed") });
    await expect(after).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(kinds(client, sessionId, "compaction_update").map((u) => u.status)).toEqual(["in_progress", "failed"]);
    // released with setAutoDrain (compare-and-set: sent again at ZCode's revision when it answers stale)
    expect(forSession(await t.commands("setAutoDrain"), sessionId).length).toBeGreaterThan(0);
    expect(client.text(sessionId)).toContain("after the compaction");
    client.expectValid();
  });
});

describe("e2e: context usage from ZCode's V4 snapshot", () => {
  const usages = (client: AcpTestClient, sessionId: string): any[] => kinds(client, sessionId, "usage_update");
  const breakdown = (update: any): unknown => update?._meta?.zcode?.contextBreakdownChars;

  it.runIf(V3)(
    "usage_update is usage.contextWindow (used, size), its breakdown in characters in _meta; after /compact used = tokensAfter, no breakdown",
    async () => {
      const client = await started(COMPACTION);
      const { sessionId } = await client.newSession(await t.workspace());
      await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
      const before = usages(client, sessionId).at(-1);
      expect(before.used).toBeGreaterThan(0);
      expect(before.size).toBeGreaterThan(before.used);
      expect(breakdown(before)).toEqual(
        expect.arrayContaining([
          { source: "system_prompt", chars: 12000 },
          { source: "messages", chars: expect.any(Number) },
        ]),
      );
      const seen = usages(client, sessionId).length;
      await expect(client.prompt(sessionId, "/compact")).resolves.toMatchObject({ stopReason: "end_turn" });
      const done = kinds(client, sessionId, "compaction_update").at(-1);
      const tokensAfter = zcodeMeta(done).tokensAfter;
      expect(tokensAfter).toBe(Math.floor(before.used / 4));
      const after = usages(client, sessionId).slice(seen);
      expect(after.length).toBeGreaterThan(0);
      for (const update of after) {
        expect(update.used).toBe(tokensAfter);
        expect(update.size).toBe(before.size);
        expect(breakdown(update)).toBeUndefined();
      }
      client.expectValid();
    },
  );
});

describe("e2e: /compact while a turn runs", () => {
  it("waits in ZCode's queue (it does not cut the running turn) and runs after it: both prompts answered end_turn, in order", async () => {
    const client = await started(COMPACTION);
    const { sessionId } = await client.newSession(await t.workspace());
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=40");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const compact = client.prompt(sessionId, "/compact");
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(compact).resolves.toMatchObject({ stopReason: "end_turn" });
    const updates = client.updates(sessionId);
    const compaction = updates.findIndex((u) => u.sessionUpdate === "compaction_update");
    const lastText = updates.map((u) => u.sessionUpdate).lastIndexOf("agent_message_chunk");
    expect(kinds(client, sessionId, "compaction_update").map((u) => u.status)).toEqual(["in_progress", "completed"]);
    // the running turn streamed to its end before the compaction began
    expect(compaction).toBeGreaterThan(lastText);
    expect(forSession(await t.commands("stop"), sessionId)).toEqual([]);
    client.expectValid();
  });
});

describe("e2e: plan operations, gated on the unstable plan capability", () => {
  it("the to-do list: plan_update items with one plan id, plan_removed when ZCode clears it; never `plan`", async () => {
    const client = await started(PLAN);
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "sim:todos")).resolves.toMatchObject({ stopReason: "end_turn" });
    const ops = kinds(client, sessionId, "plan_update", "plan_removed", "plan");
    expect(ops.map((u) => u.sessionUpdate)).toEqual(["plan_update", "plan_update", "plan_removed"]);
    expect(new Set(ops.map((u) => u.plan?.planId ?? u.planId))).toEqual(new Set(["zcode-todos"]));
    expect(ops[0].plan).toMatchObject({ type: "items", entries: [{ content: "Read the failing test", status: "in_progress" }, {}, {}] });
    client.expectValid();
  });

  it("without the capability the to-do list stays `plan` entries (cleared with an empty list), and no plan operation goes out", async () => {
    const client = await started({});
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:todos")).resolves.toMatchObject({ stopReason: "end_turn" });
    const plans = kinds(client, sessionId, "plan_update", "plan_removed", "plan");
    expect(plans.map((u) => u.sessionUpdate)).toEqual(["plan", "plan", "plan"]);
    expect(plans.map((u) => u.entries.length)).toEqual([3, 3, 0]);
    client.expectValid();
  });

  it("an approved ExitPlanMode plan: plan_update markdown with the call's plan id, live and after load", async () => {
    const client = await started(PLAN, { onPermission: approve });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "sim:plan-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const live = kinds(client, sessionId, "plan_update", "plan_removed");
    expect(live).toHaveLength(1);
    const planId = live[0].plan.planId as string;
    expect(live[0].plan).toEqual({ type: "markdown", planId, content: PLAN_MARKDOWN });
    // the plan id is the ExitPlanMode call's: the same call the permission asked about
    const request = client.transcript.agentMessages().find((m) => m.method === "session/request_permission");
    expect(planId).toBe(`zcode-plan-${request.params.toolCall.toolCallId}`);
    // the plan went out before the question
    expect(client.indexOf((l) => l.message.params?.update?.sessionUpdate === "plan_update")).toBeLessThan(
      client.indexOf((l) => l.message.method === "session/request_permission"),
    );
    client.expectValid();
    await client.close();

    const loaded = await load(PLAN, sessionId, ws);
    expect(kinds(loaded, sessionId, "plan_update", "plan_removed")).toEqual([live[0]]);
    loaded.expectValid();
    await loaded.close();
    const plain = await load({}, sessionId, ws);
    expect(kinds(plain, sessionId, "plan_update", "plan_removed")).toEqual([]);
    plain.expectValid();
  });

  it("a rejected plan is dropped: plan_update, then plan_removed of the same id; not replayed after load", async () => {
    const client = await started(PLAN, { onPermission: reject });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    await expect(client.prompt(sessionId, "sim:plan-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const live = kinds(client, sessionId, "plan_update", "plan_removed");
    expect(live.map((u) => u.sessionUpdate)).toEqual(["plan_update", "plan_removed"]);
    expect(live[1].planId).toBe(live[0].plan.planId);
    client.expectValid();
    await client.close();

    const loaded = await load(PLAN, sessionId, ws);
    expect(kinds(loaded, sessionId, "plan_update", "plan_removed")).toEqual([]);
    loaded.expectValid();
  });

  it("without the capability a plan approval looks as before: the switch_mode call carries the plan, no plan operation", async () => {
    const client = await started({}, { onPermission: approve });
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:plan-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(kinds(client, sessionId, "plan_update", "plan_removed")).toEqual([]);
    const request = client.transcript.agentMessages().find((m) => m.method === "session/request_permission");
    expect(request.params.toolCall.kind).toBe("switch_mode");
    client.expectValid();
  });
});
