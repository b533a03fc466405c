/**
 * Host faults through the built CLI: a host that fails or hangs during start-up, and a
 * stop request that the host never answers in time (its late answer is ignored). Timeouts are
 * shortened with ZCODE_ACP_TIMEOUTS_MS; every failure is a typed error, nothing hangs, no host
 * process is left behind, and the bridge goes on serving.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import { processesMentioning } from "../../support/processes.js";
import { until } from "../../support/until.js";

const t = e2e();
const noHost = async (): Promise<void> => {
  await until(() => processesMentioning(t.sim().root).length === 0, { timeoutMs: 10_000, intervalMs: 50, what: "no host process" });
};

describe("faults: host start-up failures and hangs", () => {
  it("start-up failure: session/new fails HOST_START_FAILED naming the phase, no host left, the next attempt relaunches", async () => {
    const client = await t.start({ simProfile: { startupFailure: true } });
    await client.initialize();
    const ws = await t.workspace();
    const first = await client.newSession(ws).catch((e: { code: number; message: string; data?: { code?: string } }) => e);
    expect(first).toMatchObject({ code: -32603, data: { code: "HOST_START_FAILED" } });
    expect((first as { message: string }).message).toMatch(/preparing_session_storage/);
    await noHost();
    const runs = new Set((await t.sim().readCallLog()).map((e) => e.run)).size;
    await expect(client.newSession(ws)).rejects.toMatchObject({ data: { code: "HOST_START_FAILED" } });
    expect(new Set((await t.sim().readCallLog()).map((e) => e.run)).size).toBe(runs + 1);
    await noHost();
    client.expectValid();
    await expect(client.close()).resolves.toEqual({ code: 0, signal: null });
  });

  it("start-up hang: the start-up budget fires (HOST_START_FAILED), the host is stopped", async () => {
    const started = Date.now();
    const client = await t.start({
      simProfile: { startupDelayMs: 60_000 },
      env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ startup: 500, stopGrace: 1000, killGrace: 500 }) },
    });
    await client.initialize();
    await expect(client.newSession(await t.workspace())).rejects.toMatchObject({
      data: { code: "HOST_START_FAILED" },
      message: expect.stringContaining("within 500 ms"),
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    await noHost();
    client.expectValid();
  });

  it("a stop the host never answers in time: cancel resolves after the grace, the late answer is ignored, the session recovers", async () => {
    const logFile = join(t.sim().root, "..", `bridge-hang-${Date.now()}.log`);
    const client = await t.start({
      // the install takes V4 input: the stop is a V4 command the host sits on (adr/0022)
      simProfile: { v4StopHangMs: 1000 },
      cancelGraceMs: 400,
      env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ cancel: 300 }), ZCODE_ACP_LOG_FILE: logFile, ZCODE_ACP_LOG_LEVEL: "debug" },
    });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=40");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const cancelledAt = Date.now();
    await client.cancel(sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(350);
    // the host's answer to the stop arrives after ~1000 ms, long after the 300 ms timeout
    await until(() => readFileSync(logFile, "utf8").includes("late internal channel response ignored"), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: "the late answer",
    });
    const log = readFileSync(logFile, "utf8");
    expect(log).toContain("did not answer agent.sendConversationCommandV4 within 300 ms");
    // the native turn ends by itself (max ticks); until then a prompt is refused as busy, then it works
    let outcome: unknown;
    for (let attempt = 0; attempt < 20; attempt++) {
      outcome = await client.prompt(sessionId, "after the hang").catch((e: { data?: { code?: string } }) => e);
      if ((outcome as { stopReason?: string }).stopReason) break;
      expect(outcome).toMatchObject({ data: { code: "SESSION_BUSY" } });
    }
    expect(outcome).toMatchObject({ stopReason: "end_turn" });
    expect(await t.stops(sessionId)).toHaveLength(1); // sent once, never again
    client.expectValid();
  });
});
