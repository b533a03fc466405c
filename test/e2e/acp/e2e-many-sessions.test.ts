/**
 * Many sessions in one process (adr/0017): 1,000 session/new without session/close. Idle sessions
 * above the bound are released (unsubscribed, closed natively) and reopened at their next use:
 * the first (prompted, so ZCode kept it: resumed) and a never-prompted one (created again with the
 * same id and its mode) still prompt, and so does the last.
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { MAX_ATTACHED_SESSIONS } from "../../../src/session/session-service.js";
import { until } from "../../support/until.js";

const t = e2e();

const SESSIONS = 1000;

interface Counts {
  sessions: number;
  releasedSessions: number;
  subscriptions: number;
  turns: number;
}

describe("e2e: many sessions", () => {
  it(`serves ${SESSIONS} sessions opened without close; released ones reopen at their next use`, { timeout: 120_000 }, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const ws = await t.workspace();
    const diagnostics = async (): Promise<{ sessions: Counts; process: { memory: { rss: number; heapUsed: number } } }> =>
      client.agent.request("_zcode/diagnostics" as never, {} as never);
    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      ids.push((await client.newSession(ws)).sessionId);
      if (i === 0) await expect(client.prompt(ids[0]!, "the first session")).resolves.toMatchObject({ stopReason: "end_turn" });
      if (i === 1) await client.agent.request("session/set_mode", { sessionId: ids[1]!, modeId: "yolo" });
      if (i % 100 === 50) await expect(client.prompt(ids[i]!, `session ${i}`)).resolves.toMatchObject({ stopReason: "end_turn" });
      if (i === 100) {
        const early = await diagnostics();
        (globalThis as { earlyHeap?: number }).earlyHeap = early.process.memory.heapUsed;
      }
    }
    const opened = Date.now() - started;
    const counts = await diagnostics();
    expect(counts.sessions).toMatchObject({ sessions: MAX_ATTACHED_SESSIONS, subscriptions: MAX_ATTACHED_SESSIONS, turns: 0 });
    expect(counts.sessions.releasedSessions).toBe(SESSIONS - MAX_ATTACHED_SESSIONS);

    // the host keeps only what the bridge holds: every released session was closed natively, its listen disposed
    await until(
      async () =>
        (await t.sim().readCallLog()).filter((e) => e.kind === "call" && e.method === "closeSession").length ===
        SESSIONS - MAX_ATTACHED_SESSIONS,
      { intervalMs: 50, what: "the native close of every released session" },
    );
    const log = await t.sim().readCallLog();
    const disposed = new Set(log.filter((e) => e.kind === "listen-dispose").map((e) => `${e.run}:${e.id}`));
    const alive = log.filter((e) => e.kind === "listen" && !disposed.has(`${e.run}:${e.id}`));
    // one per held session; on zcode-task-v3 also the one workspace listener for provider-header requests
    const headers = alive.filter((l) => l.event === "onDynamicWorkspaceProviderRuntimeHeadersRequest");
    expect(headers.length).toBeLessThanOrEqual(1);
    // the legacy stream: one listen per held session; V4 frames: one listener for the workspace (adr/0034)
    const frames = alive.filter((l) => l.event === "onDynamicConversationFrame");
    expect(alive.length - headers.length).toBe(frames.length > 0 ? 1 : MAX_ATTACHED_SESSIONS);
    expect(log.filter((e) => e.kind === "call" && e.method === "closeSession")).toHaveLength(SESSIONS - MAX_ATTACHED_SESSIONS);

    // the first was prompted (ZCode kept it): resumed; the second never was: created again with its id and mode
    await expect(client.prompt(ids[0]!, "the first again")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(ids[0]!)).toContain("the first again");
    expect(forSession(await t.calls("resumeSession"), ids[0]!)).toHaveLength(1);
    await expect(client.prompt(ids[1]!, "the second, never prompted before")).resolves.toMatchObject({ stopReason: "end_turn" });
    const recreated = forSession(await t.calls("createSession"), ids[1]!);
    expect(recreated).toHaveLength(1);
    expect(forSession(await t.calls("setMode"), ids[1]!).map((c) => (c.params as { mode: string }).mode)).toEqual(["yolo", "yolo"]);
    await expect(client.prompt(ids.at(-1)!, "the last session")).resolves.toMatchObject({ stopReason: "end_turn" });
    // a released session is closed without a host call
    await expect(client.agent.request("session/close", { sessionId: ids[2]! })).resolves.toEqual({});

    const after = await diagnostics();
    expect(after.sessions.sessions).toBe(MAX_ATTACHED_SESSIONS);
    expect(after.sessions.subscriptions).toBe(MAX_ATTACHED_SESSIONS);
    // what was measured (adr/0017): time to open them all, and the bridge's heap after 100 and after all
    const earlyHeap = (globalThis as { earlyHeap?: number }).earlyHeap ?? 0;
    process.stderr.write(
      `many sessions: ${SESSIONS} opened in ${opened} ms; heap ${Math.round(earlyHeap / 1e6)} MB after 100, ` +
        `${Math.round(after.process.memory.heapUsed / 1e6)} MB after all; rss ${Math.round(after.process.memory.rss / 1e6)} MB\n`,
    );
    client.expectValid();
  });
});
