/**
 * `zcode-acp check` shows the release advisories (adr/0021) of the simulated 3.11.2 and 3.12.3,
 * whose self-written manifests carry the advisories of their pinned manifests, in the human report
 * and in --json; a release without advisories (the simulated 3.10.2) shows none.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Assessment } from "../../../src/compat/types.js";
import { createSimulatedInstall, type SimInstall, type SimRelease } from "../../../fixtures/sim-install.js";
import { CLI_PATH, runCli } from "../../support/cli-process.js";

const RELEASES: SimRelease[] = ["3.11.2", "3.12.3"];

describe("zcode-acp check shows release advisories (built binary)", () => {
  const sims = new Map<SimRelease, SimInstall>();
  let work: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
    for (const release of [...RELEASES, "3.10.2" as const]) sims.set(release, await createSimulatedInstall({ release }));
    work = await mkdtemp(join(tmpdir(), "zcode-acp-advisories-"));
    env = { ZCODE_ACP_CACHE_DIR: join(work, "cache"), ZCODE_ACP_ZCODE_INSTALL: undefined, ZCODE_ACP_MANIFEST: undefined };
  });
  afterAll(async () => {
    await Promise.all([...[...sims.values()].map((s) => s.cleanup()), work ? rm(work, { recursive: true, force: true }) : undefined]);
  });
  const flags = (s: SimInstall) => ["--zcode-install", s.root, "--manifest", s.manifestPath];

  for (const release of RELEASES) {
    it(`${release}: the text report names the advisory, what to do, the fixing release and the source`, async () => {
      const run = await runCli(["check", ...flags(sims.get(release)!)], { env });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`  Advisories for ZCode ${release}:\n  [warning] Public audits found a repository-snapshot uploader`);
      expect(run.stdout).toMatch(/ {9}What you can do: Update ZCode to 3\.14\.0 or later/);
      expect(run.stdout).toContain("         Fixed in: ZCode 3.14.0\n");
      expect(run.stdout).toMatch(/ {9}Source: https:\/\/\S+ \(advisory repo-snapshot-uploader\)/);
    });

    it(`${release}: --json carries the advisories`, async () => {
      const run = await runCli(["check", "--json", ...flags(sims.get(release)!)], { env });
      expect(run.code).toBe(0);
      const report = JSON.parse(run.stdout) as Assessment;
      expect(report.advisories).toEqual([
        {
          id: "repo-snapshot-uploader",
          severity: "warning",
          summary: expect.stringMatching(/repository-snapshot uploader.*\.git included/),
          action: expect.stringMatching(/^Update ZCode to 3\.14\.0 or later/),
          source: expect.stringMatching(/^https:\/\//),
          fixedIn: "3.14.0",
        },
      ]);
    });
  }

  it("3.10.2 (no advisory in its manifest): none shown", async () => {
    const sim = sims.get("3.10.2")!;
    const text = await runCli(["check", ...flags(sim)], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain("Advisories");
    const json = JSON.parse((await runCli(["check", "--json", ...flags(sim)], { env })).stdout) as Assessment;
    expect(json.advisories).toEqual([]);
  });
});
