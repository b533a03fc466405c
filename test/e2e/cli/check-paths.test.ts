/**
 * `zcode-acp check` through the BUILT binary on the simulated 3.14.4, 3.16.2, 3.18.2 and 4.0.0
 * installs (issue 26): for each build it says how sessions are read (legacy session events or V4
 * frames), how prompts are sent (V4 input or sendPrompt), how the session list asks, where the
 * context usage comes from, what is pinned and how, and what is missing; a manifest that lacks what
 * its path needs is refused before anything runs, naming what is missing and what to do.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Assessment } from "../../../src/compat/types.js";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import type { SimRelease } from "../../../fixtures/sim-releases.js";
import { CLI_PATH, runCli } from "../../support/cli-process.js";
import { writeManifest } from "../../support/tamper.js";

const RELEASES: SimRelease[] = ["3.14.4", "3.16.2", "3.18.2", "4.0.0"];

/** what each flavour's manifest makes of it (fixtures/README.md "Flavours") */
const EXPECTED: Record<string, { read: RegExp; input: RegExp; list: RegExp; usage: RegExp }> = {
  "3.14.4": {
    read: /read path: +legacy session events \(onDynamicSessionEvent\)\n/,
    input: /input path: +V4 input \(sendConversationCommandV4 \/ sendText\)/,
    list: /session list: +listSessions with includeArchived: false\n/,
    usage: /context usage: +the session's own usage \(this build's manifest does not allow getContextComposition\)/,
  },
  "3.16.2": {
    read: /read path: +legacy session events \(onDynamicSessionEvent\)\n/,
    input: /input path: +V4 input/,
    list: /session list: +listSessions without includeArchived \(agent CLI 0\.17\.0: CLI 0\.17\.0 dropped it\)/,
    usage: /context usage: +the session's own usage/,
  },
  "3.18.2": {
    read: /read path: +legacy session events \(onDynamicSessionEvent\)\n/,
    input: /input path: +V4 input/,
    list: /session list: +listSessions without includeArchived \(agent CLI 0\.17\.1/,
    usage: /context usage: +getContextComposition at each turn's end/,
  },
  "4.0.0": {
    read: /read path: +V4 conversation frames \(subscribeConversationV4, onDynamicConversationFrame\): the zcode-task-v3 line has no legacy session events/,
    input: /input path: +V4 input/,
    list: /session list: +listSessions without includeArchived/,
    usage: /context usage: +getContextComposition at each turn's end/,
  },
};

describe("zcode-acp check: which path each build takes (built binary)", () => {
  const sims = new Map<SimRelease, SimInstall>();
  let work: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
    await Promise.all(RELEASES.map(async (release) => sims.set(release, await createSimulatedInstall({ release }))));
    work = await mkdtemp(join(tmpdir(), "zcode-acp-check-paths-"));
    env = {
      ZCODE_ACP_CACHE_DIR: join(work, "cache"),
      ZCODE_ACP_ZCODE_INSTALL: undefined,
      ZCODE_ACP_MANIFEST: undefined,
      ZCODE_ACP_READ_PATH: undefined,
    };
  });
  afterAll(async () => {
    await Promise.all([...[...sims.values()].map((s) => s.cleanup()), work ? rm(work, { recursive: true, force: true }) : undefined]);
  });
  const flags = (s: SimInstall) => ["--zcode-install", s.root, "--manifest", s.manifestPath];
  /** the flavour's own local store (first-use pins go nowhere else) */
  const envOf = (s: SimInstall, extra: NodeJS.ProcessEnv = {}) => ({ ...env, ZCODE_ACP_CONFIG_DIR: s.configDir, ...extra });

  it.each(RELEASES)("%s: the read path, input path, session list, context usage, pins and nothing missing", async (release) => {
    const sim = sims.get(release)!;
    const run = await runCli(["check", ...flags(sim)], { env: envOf(sim) });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const want = EXPECTED[release]!;
    for (const pattern of Object.values(want)) expect(run.stdout).toMatch(pattern);
    expect(run.stdout).toMatch(/missing: +nothing this path needs\n/);
    // what is pinned and how: the host entry by the given manifest, the RPC module on first use
    expect(run.stdout).toMatch(/pinned: +host entry \(out\/host\/index\.js\): pinned by the given manifest/);
    expect(run.stdout).toMatch(/RPC module \([^)]+\): will be pinned on first use/);

    const json = await runCli(["check", "--json", ...flags(sim)], { env: envOf(sim) });
    const report = JSON.parse(json.stdout) as Assessment;
    expect(report.hostPaths).toMatchObject({ missing: [] });
    expect(report.hostPaths!.read).toMatch(release === "4.0.0" ? /^V4 conversation frames/ : /^legacy session events/);
  });

  it("ZCODE_ACP_READ_PATH=v4 on a 3.18.2 whose manifest also allows the V4 read calls: V4 frames, chosen by the setting", async () => {
    const sim = sims.get("3.18.2")!;
    const m = structuredClone(sim.manifest);
    // (the rows pages are allowed already: 3.14.4's descriptor, for session/fork)
    const read = ["subscribeConversationV4", "resyncConversationV4", "unsubscribeConversationV4", "conversationRowsRangeV4"];
    m.protocol.allowlist.agent = [...m.protocol.allowlist.agent.filter((method) => !read.includes(method)), ...read];
    m.protocol.events.agent = [...(m.protocol.events.agent ?? []), "onDynamicConversationFrame"];
    const file = await writeManifest(work, "both-paths.json", m);
    const args = ["check", "--zcode-install", sim.root, "--manifest", file];
    const run = await runCli(args, { env: envOf(sim, { ZCODE_ACP_READ_PATH: "v4" }) });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /read path: +V4 conversation frames \(subscribeConversationV4, onDynamicConversationFrame\) — chosen with ZCODE_ACP_READ_PATH=v4\n/,
    );
    // without the setting the same build reads the legacy events
    expect((await runCli(args, { env: envOf(sim) })).stdout).toMatch(/read path: +legacy session events \(onDynamicSessionEvent\)\n/);
  });

  it("a manifest that lacks what its path needs is refused before anything runs, naming it and what to do", async () => {
    const sim = sims.get("4.0.0")!;
    const m = structuredClone(sim.manifest);
    m.protocol.events.agent = [];
    const file = await writeManifest(work, "no-frames.json", m);
    const run = await runCli(["check", "--zcode-install", sim.root, "--manifest", file], { env: envOf(sim) });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      "ZCode 4.0.0 (manifest zcode-host-4.0.0-sim, release line zcode-task-v3) cannot be driven: the path it would take " +
        "(read: V4 conversation frames (subscribeConversationV4, onDynamicConversationFrame): the zcode-task-v3 line has no legacy session events; ",
    );
    expect(run.stdout).toContain(
      "needs zcode-agent event onDynamicConversationFrame, which the manifest does not allow. Nothing was started.",
    );
    expect(run.stdout).toMatch(/\[FAIL\] app and CLI version/);
    expect(run.stdout).toMatch(/\[skip\] host files and exports/);
    expect(run.stdout).toMatch(/missing: +zcode-agent event onDynamicConversationFrame\n/);

    // a release with both, asked to read V4 without the V4 read calls in its manifest
    const legacy = sims.get("3.14.4")!;
    const v4Run = await runCli(["check", ...flags(legacy)], { env: envOf(legacy, { ZCODE_ACP_READ_PATH: "v4" }) });
    expect(v4Run.code).toBe(1);
    expect(v4Run.stdout).toContain("needs zcode-agent.subscribeConversationV4");
    expect(v4Run.stdout).toContain("Unset ZCODE_ACP_READ_PATH, or use a ZCode release whose manifest allows the V4 read calls.");
  });
});
