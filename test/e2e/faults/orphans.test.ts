/**
 * The bridge never leaves a host behind: the built CLI is killed with SIGTERM or SIGKILL,
 * or its client closes stdin, in the middle of a streaming turn; afterwards no process whose
 * command line mentions the simulated install (the Electron stand-in running the host) is alive.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { processesMentioning } from "../../support/processes.js";
import { until } from "../../support/until.js";

const t = e2e();

/** A client in the middle of a turn, with the pid of its host. */
async function midTurn(): Promise<{ client: AcpTestClient; hostPid: number }> {
  const client = await t.start();
  await client.initialize();
  const { sessionId } = await client.newSession(await t.workspace());
  void client.prompt(sessionId, "sim:stream-until-cancel interval=10").catch(() => undefined);
  await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
  const hosts = processesMentioning(t.sim().root);
  expect(hosts).toHaveLength(1);
  return { client, hostPid: hosts[0]! };
}

describe("faults: no orphan host processes", () => {
  it("SIGTERM mid-turn: the bridge disposes the host gracefully, then exits 0", async () => {
    const { client } = await midTurn();
    const disposals = (await t.sim().readCallLog()).filter((e) => e.kind === "parent-message" && e.type === "dispose").length;
    const exit = await client.kill("SIGTERM");
    expect(exit).toEqual({ code: 0, signal: null });
    // the host was stopped (through dispose, not killed) before the bridge exited
    expect(processesMentioning(t.sim().root)).toEqual([]);
    const log = await t.sim().readCallLog();
    expect(log.filter((e) => e.kind === "parent-message" && e.type === "dispose").length).toBe(disposals + 1);
  });

  it("SIGKILL mid-turn: the host notices its pipe closing, disposes and exits on its own", async () => {
    const { client, hostPid } = await midTurn();
    const exitsBefore = (await t.sim().readCallLog()).filter((e) => e.kind === "exit").length;
    const exit = await client.kill("SIGKILL");
    expect(exit.signal).toBe("SIGKILL");
    await until(() => processesMentioning(t.sim().root).length === 0, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `host ${hostPid} to exit`,
    });
    const log = await t.sim().readCallLog();
    expect(log.filter((e) => e.kind === "exit").length).toBe(exitsBefore + 1);
    expect(log.filter((e) => e.kind === "parent-message" && e.type === "dispose").at(-1)?.run).toBe(
      log.filter((e) => e.kind === "exit").at(-1)?.run,
    );
  });

  it("stdin closed mid-turn: the bridge stops the host and exits 0", async () => {
    const { client } = await midTurn();
    await expect(client.close()).resolves.toEqual({ code: 0, signal: null });
    expect(processesMentioning(t.sim().root)).toEqual([]);
  });
});
