/**
 * The path is chosen from what the running host serves (adr/0033), through the built CLI against
 * held-out simulated installs onboarded with `onboard --accept` (their bundle text is all the
 * manifest knows):
 * - 4.0.1: a 4.0-like host (no sendPrompt, no legacy session event) whose bundle still names
 *   `onDynamicSessionEvent`: onboarding takes it for the legacy zcode-task-v2 line. session/new
 *   and a prompt work through V4; `sendPrompt` is sent once (the probe, which names no session)
 *   and the legacy event is never listened to. With the V4 read calls taken out of its manifest,
 *   session/new fails within the subscribe bound with a typed error naming the missing event.
 * - 3.16.3: a 3.16-like host whose bundle names 3.18's `getContextComposition` without serving
 *   it: it is sent at most once per host, not at every turn's end; the turns end as before.
 */
import { mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { runCli } from "../../support/cli-process.js";

let v401: SimInstall;
let v401NoV4: SimInstall;
let v3163: SimInstall;
const clients: AcpTestClient[] = [];

async function onboarded(release: "4.0.1" | "3.16.3"): Promise<SimInstall> {
  const sim = await createSimulatedInstall({ release });
  const accepted = await runCli(["onboard", "--accept"], { env: sim.env });
  expect(accepted.code, accepted.stderr).toBe(0);
  return sim;
}

async function localManifest(sim: SimInstall): Promise<string> {
  const dir = join(sim.env.ZCODE_ACP_CONFIG_DIR!, "manifests");
  const [file] = (await readdir(dir)).filter((name) => name.endsWith(".local.json"));
  return join(dir, file!);
}

async function start(sim: SimInstall, env: Record<string, string> = {}) {
  const client = await AcpTestClient.start({ env: { ...sim.env, ...env } });
  clients.push(client);
  await client.initialize();
  return { client, ws: await mkdtemp(join(dirname(sim.root), "ws-")) };
}

const callsOf = async (sim: SimInstall, method: string) =>
  (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === method);
const listensOf = async (sim: SimInstall, event: string) =>
  (await sim.readCallLog()).filter((e) => e.kind === "listen" && (e as { event?: string }).event === event);

beforeAll(async () => {
  [v401, v401NoV4, v3163] = await Promise.all([onboarded("4.0.1"), onboarded("4.0.1"), onboarded("3.16.3")]);
  // the second 4.0.1's manifest allows no V4 reading: the legacy stream is then its only read path
  const file = await localManifest(v401NoV4);
  const manifest = JSON.parse(await readFile(file, "utf8")) as { protocol: { allowlist: { agent: string[] } } };
  manifest.protocol.allowlist.agent = manifest.protocol.allowlist.agent.filter(
    (m) => m !== "subscribeConversationV4" && m !== "conversationRowsRangeV4",
  );
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await Promise.all([v401?.cleanup(), v401NoV4?.cleanup(), v3163?.cleanup()]);
});

describe("a 4.0-like build whose bundle names the legacy calls its host does not serve (4.0.1)", () => {
  it("onboard takes it for the legacy line, as its bundle says; check says the running host decides", async () => {
    const manifest = JSON.parse(await readFile(await localManifest(v401), "utf8")) as {
      protocol: { id: string; events: { agent: string[] } };
    };
    expect(manifest.protocol.id).toBe("zcode-task-v2");
    expect(manifest.protocol.events.agent).toContain("onDynamicSessionEvent");
    const check = await runCli(["check"], { env: v401.env });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("the running host decides");
  });

  it("session/new and prompts work through V4; sendPrompt is sent once (the probe), the legacy event never listened to", async () => {
    const { client, ws } = await start(v401);
    for (let i = 0; i < 2; i++) {
      const { sessionId } = await client.newSession(ws);
      await expect(client.prompt(sessionId, "sim:reasoning")).resolves.toMatchObject({ stopReason: "end_turn" });
      expect(client.text(sessionId)).toBe("Here is the considered answer.");
    }
    const probes = await callsOf(v401, "sendPrompt");
    expect(probes).toHaveLength(1);
    expect(probes[0]!.params).toEqual({});
    expect(await listensOf(v401, "onDynamicSessionEvent")).toHaveLength(0);
    expect((await callsOf(v401, "subscribeConversationV4")).length).toBeGreaterThanOrEqual(2);
    client.expectValid();
  });

  it("without V4 reading in its manifest, session/new fails within the subscribe bound, naming the event the host does not serve", async () => {
    const { client, ws } = await start(v401NoV4, { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ subscribe: 1500 }) });
    const failed = await client.agent.request("session/new", { cwd: ws, mcpServers: [] }).then(
      () => undefined,
      (error: unknown) => error as { message: string; data?: unknown },
    );
    expect(failed?.message).toContain("does not serve zcode-agent.onDynamicSessionEvent");
    expect(failed?.data).toMatchObject({ code: "UNSUPPORTED_ZCODE" });
    // the subscription was tried once, then not again
    expect(await listensOf(v401NoV4, "onDynamicSessionEvent")).toHaveLength(1);
    client.expectValid();
  });
});

describe("onboard --probe reports what the running host serves", () => {
  it("4.0.1: sendPrompt, named in its bundle, is not served; the sessions will be read through V4", async () => {
    const fresh = await createSimulatedInstall({ release: "4.0.1" });
    try {
      const cwd = await mkdtemp(join(dirname(fresh.root), "cwd-"));
      const run = await runCli(["onboard", "--probe", "--accept"], { env: fresh.env, cwd });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/served by the running host:\s+ok: probed sendPrompt, getContextComposition: not served: sendPrompt/);
      const report = JSON.parse(await readFile(join(cwd, "zcode-acp-probe-4.0.1.json"), "utf8")) as { probe: { served: unknown } };
      expect(report.probe.served).toMatchObject({ status: "ok", notServed: ["sendPrompt"] });
      expect((await callsOf(fresh, "sendPrompt")).map((c) => c.params)).toEqual([{}]);
    } finally {
      await fresh.cleanup();
    }
  });
});

describe("a 3.16-like build whose bundle names 3.18's getContextComposition without serving it (3.16.3)", () => {
  it("sends it at most once per host; every turn still ends with the session's own usage", async () => {
    const { client, ws } = await start(v3163);
    const { sessionId } = await client.newSession(ws);
    for (let i = 0; i < 3; i++) {
      await expect(client.prompt(sessionId, "sim:usage")).resolves.toMatchObject({ stopReason: "end_turn" });
    }
    expect(await callsOf(v3163, "getContextComposition")).toHaveLength(1);
    const usages = client.updates(sessionId).filter((u) => u.sessionUpdate === "usage_update");
    expect(usages.length).toBeGreaterThanOrEqual(3);
    expect(usages.at(-1)._meta?.zcode?.contextComposition).toBeUndefined();
    client.expectValid();
  });
});
