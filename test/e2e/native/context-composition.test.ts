/**
 * ZCode 3.18+'s `getContextComposition` through the built CLI (issue 26): on a simulated 3.18.2,
 * whose manifest allows it, the end-of-turn `usage_update` takes its used tokens and window from
 * the composition and carries its categories under `_meta.zcode.contextComposition`; a read that
 * fails, hangs (bounded by the `contextComposition` timeout) or answers a wrong shape is logged and
 * the turn ends as before with the session's own usage. On a simulated 3.14.4 nothing changes: the
 * call is never made.
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { forSession } from "../../support/e2e-harness.js";

let v318: SimInstall;
let v314: SimInstall;
const clients: AcpTestClient[] = [];

beforeAll(async () => {
  [v318, v314] = await Promise.all([createSimulatedInstall({ release: "3.18.2" }), createSimulatedInstall({ release: "3.14.4" })]);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await Promise.all([v318?.cleanup(), v314?.cleanup()]);
});

async function prompted(sim: SimInstall, options: { simProfile?: Record<string, unknown>; env?: Record<string, string> } = {}) {
  const client = await AcpTestClient.start({ env: { ...sim.env, ...options.env }, simProfile: options.simProfile });
  clients.push(client);
  await client.initialize();
  const { sessionId } = await client.newSession(await mkdtemp(join(dirname(sim.root), "ws-")));
  await expect(client.prompt(sessionId, "sim:usage")).resolves.toMatchObject({ stopReason: "end_turn" });
  const usages = client.updates(sessionId).filter((u) => u.sessionUpdate === "usage_update");
  const calls = forSession(
    (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === "getContextComposition"),
    sessionId,
  );
  // the end-of-turn report: the one with the session's token totals
  const last = usages.filter((u) => (u._meta?.zcode as { tokenUsage?: unknown } | undefined)?.tokenUsage !== undefined).at(-1);
  return { client, sessionId, last, calls };
}

describe("getContextComposition feeds the context usage (simulated 3.18.2)", () => {
  it("the end-of-turn usage_update is the composition's: used, size, its eleven categories; one read per turn", async () => {
    const { client, last, calls } = await prompted(v318);
    expect(calls).toHaveLength(1);
    const categories = last._meta.zcode.contextComposition as Array<{ id: string; label: string; tokens: number }>;
    expect(categories).toHaveLength(11);
    expect(categories.map((c) => c.id)).toContain("toolResults");
    expect(last.used).toBeGreaterThan(0);
    expect(categories.reduce((sum, c) => sum + c.tokens, 0)).toBe(last.used);
    expect(Number.isInteger(last.size) && last.size > last.used).toBe(true);
    // the token totals stay beside it
    expect(last._meta.zcode.tokenUsage.totalTokens).toBeGreaterThan(0);
    client.expectValid();
  });

  it.each([
    ["error", {}, /context composition read failed/],
    [
      "hang",
      { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ contextComposition: 300 }) },
      /context composition read failed.*did not answer agent.getContextComposition within 300 ms/,
    ],
    ["malformed", {}, /context composition read failed.*unexpected shape/],
  ])("a read that fails (%s) is logged; the turn ends as before with the session's own usage", async (fault, env, logged) => {
    const { client, last, calls } = await prompted(v318, { simProfile: { contextCompositionFault: fault }, env });
    expect(calls).toHaveLength(1);
    expect(last).toMatchObject({ sessionUpdate: "usage_update", _meta: { zcode: { tokenUsage: expect.any(Object) } } });
    expect(last._meta.zcode.contextComposition).toBeUndefined();
    expect(Number.isInteger(last.used) && last.size > 0).toBe(true);
    expect(client.stderr).toMatch(logged);
    client.expectValid();
  });
});

describe("a build without getContextComposition (simulated 3.14.4) keeps today's usage", () => {
  it("never calls it; the end-of-turn usage_update is the snapshot's, with the token totals only", async () => {
    const { client, last, calls } = await prompted(v314);
    expect(v314.manifest.protocol.allowlist.agent).not.toContain("getContextComposition");
    expect(calls).toHaveLength(0);
    expect(Object.keys(last._meta.zcode)).toEqual(["tokenUsage"]);
    expect(Number.isInteger(last.used) && last.size > 0).toBe(true);
    client.expectValid();
  });
});
