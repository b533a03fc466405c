/**
 * `zcode-acp check` through the BUILT binary (run `npm run build` first; `npm test` does):
 * real process, real pipes, exit codes 0 / 1 / 2 (docs/runtime-contract.md §5).
 */
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Assessment } from "../../../src/compat/types.js";
import { createSimulatedInstall } from "../../../fixtures/sim-install.js";
import { CLI_PATH as BIN, runCli, type CliRun } from "../../support/cli-process.js";
import { patchMetadata, writeManifest } from "../../support/tamper.js";
import { implementedLinesPattern } from "../../support/verified-releases.js";

type Sim = Awaited<ReturnType<typeof createSimulatedInstall>>;

/**
 * Runs the built CLI. With `honourFileModes`, a root test run drops the capabilities that let
 * root read any file (setpriv, util-linux), so a mode-000 file is really unreadable — without
 * changing the user, so the clone the tests run from stays readable wherever it lives.
 */
function runCheck(args: string[], env: NodeJS.ProcessEnv, honourFileModes = false): Promise<CliRun> {
  const wrapper = honourFileModes && process.getuid?.() === 0 ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] : [];
  return runCli(args, { env, wrapper });
}

describe("zcode-acp check (built binary)", () => {
  let sim: Sim;
  let packedSim: Sim;
  let work: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" first`);
    [sim, packedSim] = await Promise.all([createSimulatedInstall(), createSimulatedInstall({ packed: true })]);
    work = await mkdtemp(join(tmpdir(), "zcode-acp-check-cli-"));
    // on top of process.env, without an install or a manifest the developer's shell may name
    env = { ZCODE_ACP_CACHE_DIR: join(work, "cache"), ZCODE_ACP_ZCODE_INSTALL: undefined, ZCODE_ACP_MANIFEST: undefined };
  });
  afterAll(async () => {
    await Promise.all([sim?.cleanup(), packedSim?.cleanup(), work ? rm(work, { recursive: true, force: true }) : undefined]);
  });
  const flags = (s: Sim) => ["--zcode-install", s.root, "--manifest", s.manifestPath];

  it("supported install: human report, exit 0", async () => {
    const run = await runCheck(["check", ...flags(sim)], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ZCode install check: supported\n {2}ZCode 3\.11\.2 \(CLI 0\.16\.5\) at .* is verified/);
    for (const title of [
      "install layout",
      "bundle metadata",
      "platform",
      "app and CLI version",
      "host files and exports",
      "agent CLI integrity",
    ]) {
      expect(run.stdout).toMatch(new RegExp(`\\[ok  \\] ${title}`));
    }
    expect(run.stdout).toMatch(/CLI version: +0\.16\.5 \(verified\)/);
    expect(run.stdout).toMatch(/metadata SHA-256: +[0-9a-f]{64}/);
    expect(run.stderr).toBe("");
  });

  it("supported install: --json is the Assessment, exit 0, nothing else on stdout", async () => {
    const run = await runCheck(["check", "--json", ...flags(sim)], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Assessment;
    expect(report).toMatchObject({ supported: true, appVersion: "3.11.2", cliVersion: "0.16.5", cliIntegrity: "verified" });
    expect(report.steps.map((s) => s.status)).toEqual(["pass", "pass", "pass", "pass", "pass", "pass"]);
    expect(report.diagnostics.cache?.file).toBe(join(work, "cache", "fingerprints.json"));
  });

  it("options also come from the environment", async () => {
    const run = await runCheck(["check", "--json"], { ...env, ZCODE_ACP_ZCODE_INSTALL: sim.root, ZCODE_ACP_MANIFEST: sim.manifestPath });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Assessment).installRoot).toBe(sim.root);
  });

  it("packed archive with the stand-in: exit 1 with a clear export-check failure", async () => {
    const run = await runCheck(["check", ...flags(packedSim)], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^ZCode install check: NOT supported\n {2}The RPC module out\/host\/chunk-KGXW6KHC\.js failed the role check: the ZCode executable could not import it/,
    );
    expect(run.stdout).toMatch(/\[FAIL\] host files and exports/);
    expect(run.stdout).toMatch(/\[skip\] agent CLI integrity/);
  });

  it("unsupported install: exit 1, --json names the failing step and its evidence", async () => {
    const other = await createSimulatedInstall();
    try {
      await patchMetadata(other, { platform: "win32-arm64" });
      const human = await runCheck(["check", ...flags(other)], env);
      expect(human.code).toBe(1);
      expect(human.stdout).toContain("This ZCode build is for win32-arm64");
      expect(human.stdout).toMatch(/platform: expected \S+, actual win32-arm64/);
      const json = await runCheck(["check", "--json", ...flags(other)], env);
      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout) as Assessment;
      expect(report).toMatchObject({ supported: false, failedStep: "platform" });
      expect(report.steps[2]!.evidence!.platform!.actual).toBe("win32-arm64");
    } finally {
      await other.cleanup();
    }
  });

  it("modified CLI: still exit 0, reported as modified", async () => {
    const other = await createSimulatedInstall();
    try {
      const cli = join(other.resourcesDir, "glm", "zcode.cjs");
      await writeFile(cli, `${await readFile(cli, "utf8")}\n// patched\n`);
      const run = await runCheck(["check", ...flags(other)], env);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^ZCode install check: supported \(agent CLI modified\)/);
      expect(run.stdout).toMatch(/\[note\] agent CLI integrity/);
    } finally {
      await other.cleanup();
    }
  });

  it("malformed manifest: exit 2, stderr names the file and the field; --json carries the error", async () => {
    const m = structuredClone(sim.manifest) as unknown as { protocol: { channels: Record<string, unknown> } };
    m.protocol.channels.extra = "zcode-extra";
    const file = await writeManifest(work, "bad.json", m);
    const run = await runCheck(["check", "--zcode-install", sim.root, "--manifest", file], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`Invalid manifest ${file}: field "protocol.channels.extra" is not a known field`);
    const json = await runCheck(["check", "--json", "--zcode-install", sim.root, "--manifest", file], env);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({
      supported: false,
      error: { code: "INVALID_MANIFEST", details: { file, field: "protocol.channels.extra" } },
    });
  });

  it("artifact / protocol id mismatch: exit 2", async () => {
    const m = structuredClone(sim.manifest);
    m.protocol.id = "zcode-task-v9";
    const file = await writeManifest(work, "mismatch.json", m);
    const run = await runCheck(["check", "--zcode-install", sim.root, "--manifest", file], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('field "artifact.protocolId" is "zcode-task-v1" but the paired protocol descriptor is "zcode-task-v9"');
  });

  it("a release line this build does not implement, or an allowlist entry / event it does not know: exit 2 naming file and field", async () => {
    const cases: Array<[(m: typeof sim.manifest) => void, RegExp]> = [
      [
        (m) => (m.artifact.protocolId = m.protocol.id = "zcode-task-v9"),
        new RegExp(
          `field "protocol\\.id" is "zcode-task-v9", a release line this zcode-acp does not implement \\(it implements ${implementedLinesPattern()}\\)`,
        ),
      ],
      [
        (m) => m.protocol.allowlist.agent.push("deleteAllData"),
        /field "protocol\.allowlist\.agent\[\d+\]" "deleteAllData" is not a method the zcode-task-v1 line uses/,
      ],
      [
        (m) => m.protocol.events.agent.push("onDynamicEverything"),
        /field "protocol\.events\.agent\[\d+\]" "onDynamicEverything" is not an event the zcode-task-v1 line uses/,
      ],
    ];
    for (const [edit, message] of cases) {
      const m = structuredClone(sim.manifest);
      edit(m);
      const file = await writeManifest(work, "meaning.json", m);
      const run = await runCheck(["check", "--zcode-install", sim.root, "--manifest", file], env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`Invalid manifest ${file}`);
      expect(run.stderr).toMatch(message);
    }
  });

  it("usage errors: exit 2", async () => {
    expect((await runCheck(["check", "--bogus"], env)).code).toBe(2);
    expect((await runCheck(["check", "--zcode-install"], env)).code).toBe(2);
    const missing = await runCheck(["check", "--zcode-install", sim.root, "--manifest", join(work, "absent.json")], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--manifest .*absent\.json does not exist/);
  });

  it("no install at the default or given root: exit 1 telling what to do", async () => {
    const run = await runCheck(["check", "--zcode-install", join(work, "none"), "--manifest", sim.manifestPath], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("--zcode-install DIR");
  });

  it.each([
    { form: "directory", packed: false, file: "glm/.node-bundle-meta.json" },
    { form: "packed asar", packed: true, file: "app.asar" },
  ])("an unreadable file ($file, mode 000) in the $form form: exit 1 at the layout step", async ({ packed, file }) => {
    const other = await createSimulatedInstall({ packed });
    try {
      await chmod(join(other.resourcesDir, ...file.split("/")), 0o000);
      const run = await runCheck(["check", "--json", ...flags(other)], env, true);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as Assessment;
      expect(report).toMatchObject({ supported: false, failedStep: "layout" });
      expect(report.message).toMatch(
        new RegExp(`^The ZCode install is damaged: ${file.replace(/\./g, "\\.")} is not readable \\(EACCES\\)`),
      );
      expect(report.steps[0]!.evidence![file]).toEqual({
        expected: packed ? "an archive file or a directory" : "a readable regular file",
        actual: "not readable (EACCES)",
      });
    } finally {
      await other.cleanup();
    }
  });
});
