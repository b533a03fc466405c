/**
 * The cached `initialize` offer through the built CLI (src/cli/initialize-offer.ts, adr/0026):
 * once a start's warm-up assessment was confirmed, the next start advertises the session
 * management calls from the cache, without waiting for an assessment; a change of anything the
 * assessment read (the manifest, a host file) is a miss, so a start never advertises from the
 * cache what the install no longer offers. Each test has its own install (and so its own cache).
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { simFlavour } from "../../../fixtures/sim-releases.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { editMember, flipOneByte } from "../../support/tamper.js";
import { until } from "../../support/until.js";
import { findLine } from "../../../src/manifest/release-lines.js";

const HIT = "initialize offer read from the cache";
const CACHED = "initialize offer cached for the next start";
const BASE = { list: {}, resume: {}, close: {} };

const installs: SimInstall[] = [];
const clients: AcpTestClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(installs.splice(0).map((s) => s.cleanup()));
});

async function install(): Promise<SimInstall> {
  const sim = await createSimulatedInstall();
  installs.push(sim);
  return sim;
}

/** one start: initialize (answered early) and, with `session`, session/new; returns the advertised sessionCapabilities */
async function start(sim: SimInstall): Promise<{ client: AcpTestClient; capabilities: unknown }> {
  const client = await AcpTestClient.start({ env: { ...sim.env, ZCODE_ACP_LOG_LEVEL: "debug" } });
  clients.push(client);
  const init = await client.initialize();
  return { client, capabilities: init.agentCapabilities?.sessionCapabilities };
}

/** a start whose warm-up caches the offer: it waits for the log line that says so */
async function fillCache(sim: SimInstall): Promise<unknown> {
  const { client, capabilities } = await start(sim);
  expect(client.stderr).not.toContain(HIT);
  await until(() => client.stderr.includes(CACHED), { what: "the offer cached", timeoutMs: 15_000, intervalMs: 20 });
  await client.close();
  return capabilities;
}

/** what a manifest's allowlist offers (docs/acp.md "Session management": src/native/session-calls.ts) */
const offeredBy = (allowlist: SimInstall["manifest"]["protocol"]["allowlist"]) => {
  const agent = allowlist.agent;
  const commands = agent.includes("sendConversationCommandV4");
  const deletes = ["deleteTask", "listDeletedTaskIds"].every((m) => allowlist.task?.includes(m) === true);
  return {
    ...BASE,
    ...(commands ? { title: {} } : {}),
    ...(deletes ? { delete: {} } : {}),
    ...(commands && agent.includes("conversationRowsRangeV4") ? { fork: {} } : {}),
  };
};
const offered = (sim: SimInstall) => offeredBy(sim.manifest.protocol.allowlist);

describe("e2e: initialize from the cached offer", () => {
  it("answers from the cache once a start confirmed the offer: the same capabilities, and sessions work", async () => {
    const sim = await install();
    expect(await fillCache(sim)).toEqual(offered(sim));
    const { client, capabilities } = await start(sim);
    expect(client.stderr).toContain(HIT);
    expect(capabilities).toEqual(offered(sim));
    const { sessionId } = await client.newSession(await mkdtemp(join(dirname(sim.root), "ws-")));
    expect(await client.prompt(sessionId, "hello")).toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("never advertises from the cache once a host file changed: the install is unsupported, nothing is offered", async () => {
    const sim = await install();
    expect(await fillCache(sim)).toEqual(offered(sim));
    await editMember(sim, sim.manifest.artifact.hostIndex.path, flipOneByte);
    const { client, capabilities } = await start(sim);
    expect(client.stderr).not.toContain(HIT);
    expect(capabilities).toEqual(BASE);
    client.expectValid();
  });

  it("never advertises from the cache once the manifest changed: what it now allows decides", async () => {
    const sim = await install();
    expect(await fillCache(sim)).toEqual(offered(sim));
    // a manifest whose host entry is another build's: the install no longer verifies, nothing is offered
    const manifest = JSON.parse(await readFile(sim.manifestPath, "utf8")) as typeof sim.manifest;
    manifest.artifact.hostIndex.sha256 = "0".repeat(64);
    await writeFile(sim.manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const { client, capabilities } = await start(sim);
    expect(client.stderr).not.toContain(HIT);
    expect(capabilities).toEqual(BASE);
    client.expectValid();
  });

  // the legacy lines do not require ZCode's V4 commands: a manifest may leave them out
  const optional = !findLine(simFlavour().line)?.requiredMethods.agent?.includes("sendConversationCommandV4");
  it.runIf(optional)("advertises only what a changed manifest still allows (V4 commands left out: no title, no fork)", async () => {
    const sim = await install();
    expect(await fillCache(sim)).toEqual(offered(sim));
    expect(offered(sim)).toHaveProperty("title");
    const manifest = JSON.parse(await readFile(sim.manifestPath, "utf8")) as typeof sim.manifest;
    manifest.protocol.allowlist.agent = manifest.protocol.allowlist.agent.filter((m) => m !== "sendConversationCommandV4");
    await writeFile(sim.manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const { client, capabilities } = await start(sim);
    expect(client.stderr).not.toContain(HIT);
    expect(capabilities).toEqual(offeredBy(manifest.protocol.allowlist));
    expect(capabilities).not.toHaveProperty("title");
    // and that start caches the new offer: the next one advertises it from the cache
    await until(() => client.stderr.includes(CACHED), { what: "the new offer cached", timeoutMs: 15_000, intervalMs: 20 });
    const next = await start(sim);
    expect(next.client.stderr).toContain(HIT);
    expect(next.capabilities).toEqual(offeredBy(manifest.protocol.allowlist));
    client.expectValid();
    next.client.expectValid();
  });
});
