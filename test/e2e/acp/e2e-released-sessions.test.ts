/**
 * Released sessions are transparent (adr/0017): above MAX_ATTACHED_SESSIONS the least recently
 * used idle session is released (unsubscribed, closed natively) and reopened at its next use, in
 * the mode (plan included), model and thought level it had, whatever the request that reopens it
 * (prompt, steering, set_mode, set_config_option). A new open of an id waits for that id's pending
 * native close. Run on the 3.12.3 line for plan: a cold resume there loses plan.
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { MAX_ATTACHED_SESSIONS } from "../../../src/session/session-service.js";
import { until } from "../../support/until.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import type { CallLogEntry } from "../../../fixtures/sim-install.js";

const t = e2e();

const isCall = (e: CallLogEntry, method: string, sessionId: string): boolean =>
  e.kind === "call" && e.method === method && forSession([e], sessionId).length === 1;

/** the sends of a prompt: the legacy sendPrompt, or a V4 input command */
const isSend = (e: CallLogEntry, sessionId: string): boolean =>
  isCall(e, "sendPrompt", sessionId) ||
  (e.kind === "call" &&
    e.method === "sendConversationCommandV4" &&
    forSession([{ ...e, params: (e.params as { envelope?: unknown }).envelope }], sessionId).length === 1);

/** Open enough other sessions that `sessionId` (the least recently used) is released, and wait for its native close. */
async function release(client: AcpTestClient, ws: string, sessionId: string): Promise<void> {
  const closes = async (): Promise<number> => (await t.sim().readCallLog()).filter((e) => isCall(e, "closeSession", sessionId)).length;
  const before = await closes();
  for (let i = 0; i < MAX_ATTACHED_SESSIONS; i++) await client.newSession(ws);
  await until(async () => (await closes()) > before, {
    intervalMs: 50,
    what: `the native close of the released session ${sessionId}`,
  });
  const counts = (await client.agent.request("_zcode/diagnostics" as never, {} as never)) as { sessions: { releasedSessions: number } };
  expect(counts.sessions.releasedSessions).toBeGreaterThanOrEqual(1);
}

/** A prompted session (ZCode keeps it) in plan mode. */
async function promptedInPlan(client: AcpTestClient, ws: string): Promise<string> {
  const { sessionId } = await client.newSession(ws);
  await expect(client.prompt(sessionId, "first")).resolves.toMatchObject({ stopReason: "end_turn" });
  await client.agent.request("session/set_mode", { sessionId, modeId: "plan" });
  return sessionId;
}

/** the entries after the session's last native close (its release) */
async function sinceRelease(sessionId: string): Promise<CallLogEntry[]> {
  const log = await t.sim().readCallLog();
  const closed = log.findLastIndex((e) => isCall(e, "closeSession", sessionId));
  return log.slice(closed + 1);
}

describe("e2e: released sessions", () => {
  it("a prompted session released in plan comes back in plan: the prompt after the reopen runs in plan", { timeout: 60_000 }, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedInPlan(client, ws);
    await release(client, ws, sessionId);

    await expect(client.prompt(sessionId, "after the release")).resolves.toMatchObject({ stopReason: "end_turn" });
    const after = await sinceRelease(sessionId);
    const resumed = after.findIndex((e) => isCall(e, "resumeSession", sessionId));
    const sent = after.findIndex((e) => isSend(e, sessionId));
    expect(resumed).toBeGreaterThanOrEqual(0);
    expect(sent).toBeGreaterThan(resumed);
    // zcode-task-v2: the cold resume lost plan; it was set again before the prompt, and nothing turned it off
    // (zcode-task-v1 keeps the mode across a resume: nothing to set again)
    const modes = after
      .slice(resumed, sent)
      .filter((e) => isCall(e, "setMode", sessionId))
      .map((e) => (e.params as { mode: string }).mode);
    if (t.sim().manifest.protocol.id === "zcode-task-v1") expect(modes).toEqual([]);
    else expect(modes.at(-1)).toBe("plan");
    // the bridge's view (from ZCode's snapshots) is plan too, and the client was never told otherwise
    const resumedAgain = await client.agent.request("session/resume", { sessionId, cwd: ws });
    expect(resumedAgain.modes?.currentModeId).toBe("plan");
    const modeUpdates = client
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "current_mode_update")
      .map((u) => u.currentModeId);
    expect(modeUpdates.filter((m) => m !== "plan")).toEqual([]);
    client.expectValid();
  });

  it("_session/steering on a released session reopens it (in plan) and answers as on an attached one", { timeout: 60_000 }, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedInPlan(client, ws);
    await release(client, ws, sessionId);

    const answer = await client.agent.request(
      "_session/steering" as never,
      { sessionId, prompt: [{ type: "text", text: "steer" }], _meta: { steering: { idleBehavior: "promptRequired" } } } as never,
    );
    expect(answer).toEqual({ outcome: "promptRequired", reason: "noRunningTurn" });
    const after = await sinceRelease(sessionId);
    expect(after.filter((e) => isCall(e, "resumeSession", sessionId))).toHaveLength(1);
    const resumed = await client.agent.request("session/resume", { sessionId, cwd: ws });
    expect(resumed.modes?.currentModeId).toBe("plan");
    client.expectValid();
  });

  it("set_config_option on a released session keeps its plan mode; set_mode on one sets the mode", { timeout: 60_000 }, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const ws = await t.workspace();
    const first = await promptedInPlan(client, ws);
    const second = await promptedInPlan(client, ws);
    await release(client, ws, second); // the first (older) is released too

    const before = (await client.agent.request("session/resume", { sessionId: first, cwd: ws })).configOptions ?? [];
    // that resume reopened the first: it is attached again, in plan
    expect(before.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" });
    const thought = before.find((o) => o.id === "thought_level")!;
    const levels = thought.type === "select" ? (thought.options as Array<{ value: string }>).map((o) => o.value) : [];
    const level = levels.find((l) => l !== (thought as { currentValue: string }).currentValue)!;

    const viaOption = await client.agent.request("session/set_config_option", {
      sessionId: second,
      configId: "thought_level",
      value: level,
    });
    expect(viaOption.configOptions.find((o) => o.id === "thought_level")).toMatchObject({ currentValue: level });
    expect(viaOption.configOptions.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" });
    expect(forSession(await t.calls("resumeSession"), second)).toHaveLength(1);

    await release(client, ws, second);
    await expect(client.agent.request("session/set_mode", { sessionId: second, modeId: "edit" })).resolves.toEqual({});
    const resumed = await client.agent.request("session/resume", { sessionId: second, cwd: ws });
    expect(resumed.modes?.currentModeId).toBe("edit");
    // the thought level set while it was attached survived its second release
    expect(resumed.configOptions?.find((o) => o.id === "thought_level")).toMatchObject({ currentValue: level });
    client.expectValid();
  });

  it(
    "session/close while an operation runs, then session/load: the load's resume comes after the old closeSession",
    { timeout: 60_000 },
    async () => {
      const client = await t.start();
      await client.initialize();
      const ws = await t.workspace();
      const { sessionId } = await client.newSession(ws);
      await expect(client.prompt(sessionId, "first")).resolves.toMatchObject({ stopReason: "end_turn" });
      // the prompt's send is held (its acknowledgement comes late): the session's operation runs while it closes
      const held = client.prompt(sessionId, "sim:plain ackDelay=1500");
      await until(
        async () => (await t.sim().readCallLog()).some((e) => e.kind === "fault" && e.fault === "ack-delay" && e.sessionId === sessionId),
        {
          intervalMs: 20,
          what: "the held acknowledgement",
        },
      );
      await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
      await client.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
      // its turn ran before the acknowledgement: ended or cancelled, it is answered
      await expect(held).resolves.toMatchObject({ stopReason: expect.stringMatching(/^(end_turn|cancelled)$/) });

      const log = await t.sim().readCallLog();
      const closes = log.flatMap((e, i) => (isCall(e, "closeSession", sessionId) ? [i] : []));
      const resumes = log.flatMap((e, i) => (isCall(e, "resumeSession", sessionId) ? [i] : []));
      expect(closes).toHaveLength(1);
      expect(resumes).toHaveLength(1);
      expect(resumes[0]).toBeGreaterThan(closes[0]!);
      // the loaded session is resident and prompts
      await expect(client.prompt(sessionId, "after the load")).resolves.toMatchObject({ stopReason: "end_turn" });
      client.expectValid();
    },
  );
});
