/**
 * `zcode-acp onboard` through the BUILT binary on the simulated 3.14.4, 3.16.2, 3.18.2 and 4.0.0
 * installs as a new user has them (no ZCODE_ACP_MANIFEST; issue 26): for each build it says how
 * sessions would be read and prompts sent, how the session list asks, where the context usage comes
 * from, what --accept pins and how, and what is missing; a build it cannot drive is refused, naming
 * what is missing and what to do, and nothing is written. An accepted candidate is then checked by
 * `check`, which says the same paths.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import type { SimRelease } from "../../../fixtures/sim-releases.js";
import type { Manifest } from "../../../src/manifest/types.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { CLI_PATH, runCli } from "../../support/cli-process.js";

const RELEASES: SimRelease[] = ["3.14.4", "3.16.2", "3.18.2", "4.0.0"];
const sims = new Map<SimRelease, SimInstall>();

/** the install as a new user has it: no manifest named, its own empty local store and cache */
const userEnv = (s: SimInstall) => ({ ...s.env, ZCODE_ACP_MANIFEST: undefined, ZCODE_ACP_CACHE_DIR: join(s.configDir, "cache") });
const storeFiles = (s: SimInstall): Promise<string[]> => readdir(join(s.configDir, "manifests")).catch(() => []);

beforeAll(async () => {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
  await Promise.all(RELEASES.map(async (release) => sims.set(release, await createSimulatedInstall({ release }))));
});
afterAll(async () => {
  await Promise.all([...sims.values()].map((s) => s.cleanup()));
});

describe("zcode-acp onboard: which path each build would take (built binary)", () => {
  it("3.14.4 verified by its manifest: already verified, with the path its sessions take", async () => {
    const sim = sims.get("3.14.4")!;
    const run = await runCli(["onboard"], { env: { ...userEnv(sim), ZCODE_ACP_MANIFEST: sim.manifestPath } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("ZCode onboarding: already verified");
    expect(run.stdout).toMatch(/read path: +legacy session events \(onDynamicSessionEvent\)\n/);
    expect(run.stdout).toMatch(/input path: +V4 input \(sendConversationCommandV4 \/ sendText\)/);
    expect(run.stdout).toMatch(/session list: +listSessions with includeArchived: false\n/);
    expect(run.stdout).toMatch(/context usage: +the session's own usage/);
    expect(run.stdout).toMatch(/missing: +nothing this path needs\n/);
  });

  it("3.14.4 whose files are not the pinned release's: refused, naming the mismatch and what to do; nothing written", async () => {
    const sim = sims.get("3.14.4")!;
    const run = await runCli(["onboard", "--accept"], { env: userEnv(sim) });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("ZCode onboarding: NO candidate");
    expect(run.stdout).toContain("SHA-256 mismatch: out/host/index.js");
    expect(run.stdout).toContain("reinstall ZCode 3.14.4 from the official download");
    expect(await storeFiles(sim)).toEqual([]);
  });

  it("3.16.2: a zcode-task-v2 candidate reading legacy events, V4 input, no includeArchived, its own usage; what --accept pins", async () => {
    const sim = sims.get("3.16.2")!;
    const run = await runCli(["onboard"], { env: userEnv(sim) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("ZCode onboarding: candidate found");
    expect(run.stdout).toMatch(/release line: +zcode-task-v2\n/);
    expect(run.stdout).toMatch(/input path: +V4 input \(sendConversationCommandV4 \/ sendText\)\n/);
    expect(run.stdout).toMatch(/read path: +legacy onDynamicSessionEvent/);
    expect(run.stdout).toMatch(/session list: +listSessions without includeArchived \(agent CLI 0\.17\.0: CLI 0\.17\.0 dropped it\)\n/);
    expect(run.stdout).toMatch(/context usage: +the session's own usage \(this build's manifest does not allow getContextComposition\)\n/);
    expect(run.stdout).toMatch(/missing: +nothing this path needs\n/);
    expect(run.stdout).toMatch(/pinned: +out\/host\/index\.js, the RPC module and glm\/zcode\.cjs by their SHA-256/);
    // its host bundle names neither 3.18 call
    expect(run.stdout).toMatch(/not named: +[^\n]*getContextComposition, stopSubagent/);
    const json = JSON.parse((await runCli(["onboard", "--json"], { env: userEnv(sim) })).stdout) as { candidate: Manifest };
    expect(json.candidate.protocol.allowlist.agent).not.toContain("getContextComposition");
  });

  it("3.18.2: getContextComposition, named in its bundle, is added; once accepted, check says the same paths", async () => {
    const sim = sims.get("3.18.2")!;
    const run = await runCli(["onboard", "--accept"], { env: userEnv(sim) });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/context usage: +getContextComposition at each turn's end/);
    expect(run.stdout).toContain("added, named in the host bundle (newer than the nearest pinned release): getContextComposition");
    expect(run.stdout).toMatch(/session list: +listSessions without includeArchived \(agent CLI 0\.17\.1/);
    expect(await storeFiles(sim)).toEqual(["zcode-3.18.2.local.json"]);
    const check = await runCli(["check"], { env: userEnv(sim) });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("verified by a local manifest you accepted on");
    expect(check.stdout).toMatch(/read path: +legacy session events \(onDynamicSessionEvent\)\n/);
    expect(check.stdout).toMatch(/input path: +V4 input/);
    expect(check.stdout).toMatch(/context usage: +getContextComposition at each turn's end/);
    expect(check.stdout).toMatch(/missing: +nothing this path needs\n/);
    expect(check.stdout).toMatch(/host entry \(out\/host\/index\.js\): accepted locally on \d{4}-\d\d-\d\d/);
  });

  it("4.0.0: zcode-task-v3 (no legacy session event), no pinned v3 release: the line's own descriptor; check verifies it; a session runs", async () => {
    const sim = sims.get("4.0.0")!;
    const run = await runCli(["onboard", "--accept"], { env: userEnv(sim) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("ZCode onboarding: candidate found");
    expect(run.stdout).toMatch(/release line: +zcode-task-v3\n/);
    expect(run.stdout).toMatch(/read path: +V4 conversation frames/);
    expect(run.stdout).toMatch(/input path: +V4 input/);
    expect(run.stdout).toContain("no release of zcode-task-v3 is pinned yet: the descriptor is the line's own");
    expect(run.stdout).toMatch(/not named: +onDynamicSessionEvent\n/);
    expect(await storeFiles(sim)).toEqual(["zcode-4.0.0.local.json"]);
    const check = await runCli(["check"], { env: userEnv(sim) });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("verified by a local manifest you accepted on");
    expect(check.stdout).toMatch(/read path: +V4 conversation frames/);
    expect(check.stdout).toMatch(/missing: +nothing this path needs\n/);
    // the onboarded build drives a session: read, sent and ended through V4
    const env: Record<string, string> = Object.fromEntries(
      Object.entries(userEnv(sim)).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
    const client = await AcpTestClient.start({ env });
    try {
      await client.initialize();
      const { sessionId } = await client.newSession(await mkdtemp(join(dirname(sim.root), "ws-")));
      await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
      expect(client.text(sessionId)).toContain("hello");
      client.expectValid();
    } finally {
      await client.close();
    }
    const calls = (await sim.readCallLog()).filter((e) => e.kind === "call").map((e) => e.method);
    expect(calls).toContain("subscribeConversationV4");
    expect(calls).not.toContain("sendPrompt");
  });
});
