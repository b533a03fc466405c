/**
 * The platforms users have (issue 26; docs/runtime-contract.md §1, §8): macOS arm64/x64 and Windows
 * arm64/x64, discovered and launched from simulated layouts. The simulated Electron stand-in runs
 * on this machine whatever the layout is named, so each case goes from discovery through the
 * assessment to a host started by the bridge's own connection and one call answered.
 */
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { assessInstall } from "../../../src/compat/assess.js";
import type { Assessment } from "../../../src/compat/types.js";
import { HostConnection } from "../../../src/host/host-connection.js";
import { discoverInstallRoot, installRootCandidates } from "../../../src/install/discover.js";
import { silentLogger } from "../../../src/log/logger.js";

const sims: SimInstall[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.cleanup()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function patchPlatform(sim: SimInstall, platform: string): Promise<void> {
  const file = join(sim.resourcesDir, "glm", ".node-bundle-meta.json");
  await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, "utf8")), platform }));
}

/** start the assessed install's host with the bridge's connection and have it answer one call */
async function launchAndList(sim: SimInstall, assessment: Assessment): Promise<unknown> {
  const host = new HostConnection({
    resolveInstall: () => Promise.resolve(assessment),
    logger: silentLogger,
    env: { ...process.env, ...sim.env },
  });
  try {
    return await host.call("agent", "listSessions", { workspacePath: sim.root });
  } finally {
    await host.close();
  }
}

describe.each(["arm64", "x64"])("macOS %s (ZCode.app, ZCode Helper)", (arch) => {
  it("is assessed from its Info.plist and launched through ZCode Helper", async () => {
    const sim = await createSimulatedInstall({ platform: "darwin", release: "3.12.3" });
    sims.push(sim);
    await patchPlatform(sim, `darwin-${arch}`);
    const report = await assessInstall({
      platform: "darwin",
      arch,
      installRoot: sim.root,
      manifestPath: sim.manifestPath,
      env: process.env,
    });
    expect(report.message).toContain("zcode-acp can use it");
    expect(report.paths!.executable).toMatch(/ZCode\.app\/Contents\/Frameworks\/ZCode Helper\.app\/Contents\/MacOS\/ZCode Helper$/);
    await expect(launchAndList(sim, report)).resolves.toEqual(expect.any(Array));
  });
});

describe.each(["arm64", "x64"])("Windows %s (ZCode.exe under the per-user install root)", (arch) => {
  it("is assessed with the win32 layout and launched through ZCode.exe", async () => {
    const sim = await createSimulatedInstall({ release: "3.12.3" });
    sims.push(sim);
    // the win32 layout is the linux one with the executable named ZCode.exe
    await rename(join(sim.root, "zcode"), join(sim.root, "ZCode.exe"));
    await patchPlatform(sim, `win32-${arch}`);
    const report = await assessInstall({
      platform: "win32",
      arch,
      installRoot: sim.root,
      manifestPath: sim.manifestPath,
      env: process.env,
    });
    expect(report.message).toContain("zcode-acp can use it");
    expect(report.paths!.executable).toBe(join(sim.root, "ZCode.exe"));
    await expect(launchAndList(sim, report)).resolves.toEqual(expect.any(Array));
  });
});

describe("a build for the other architecture", () => {
  it("an x64 build on an arm64 system is refused at the platform step, naming both", async () => {
    const sim = await createSimulatedInstall({ platform: "darwin", release: "3.12.3" });
    sims.push(sim);
    await patchPlatform(sim, "darwin-x64");
    const report = await assessInstall({
      platform: "darwin",
      arch: "arm64",
      installRoot: sim.root,
      manifestPath: sim.manifestPath,
      env: process.env,
    });
    expect(report.failedStep).toBe("platform");
    expect(report.message).toBe(
      "This ZCode build is for darwin-x64, but this system is darwin-arm64. Install the ZCode build for darwin-arm64.",
    );
  });
});

describe("discovery of the install root", () => {
  it("the default locations per platform", () => {
    expect(installRootCandidates("darwin", { HOME: "/Users/a" })).toEqual([
      "/Applications/ZCode.app",
      join("/Users/a", "Applications", "ZCode.app"),
    ]);
    expect(installRootCandidates("win32", { LOCALAPPDATA: "C:\\Users\\a\\AppData\\Local" })).toEqual([
      join("C:\\Users\\a\\AppData\\Local", "Programs", "ZCode"),
    ]);
    expect(installRootCandidates("win32", {})).toEqual([]);
    expect(installRootCandidates("linux", {})).toEqual(["/opt/ZCode"]);
  });

  it.each(["arm64", "x64"])(
    "Windows %s: the per-user install under LOCALAPPDATA is discovered, assessed with no root given and launched through ZCode.exe",
    async (arch) => {
      const local = await mkdtemp(join(tmpdir(), "zcode-acp-localappdata-"));
      dirs.push(local);
      const env = { ...process.env, LOCALAPPDATA: local };
      expect(await discoverInstallRoot("win32", env)).toBe(join(local, "Programs", "ZCode"));
      const sim = await createSimulatedInstall({ release: "3.12.3", parentDir: join(local, "Programs") });
      sims.push(sim);
      // the win32 layout is the linux one with the executable named ZCode.exe
      await rename(join(sim.root, "zcode"), join(sim.root, "ZCode.exe"));
      await patchPlatform(sim, `win32-${arch}`);
      expect(await discoverInstallRoot("win32", env)).toBe(sim.root);
      const report = await assessInstall({ platform: "win32", arch, manifestPath: sim.manifestPath, env });
      expect(report.installRoot).toBe(sim.root);
      expect(report.message).toContain("zcode-acp can use it");
      expect(report.paths!.executable).toBe(join(sim.root, "ZCode.exe"));
      await expect(launchAndList(sim, report)).resolves.toEqual(expect.any(Array));
    },
  );

  it.skipIf(existsSync("/Applications/ZCode.app"))(
    "macOS: a per-user ~/Applications/ZCode.app is found when /Applications has none",
    async () => {
      const home = await mkdtemp(join(tmpdir(), "zcode-acp-home-"));
      dirs.push(home);
      expect(await discoverInstallRoot("darwin", { HOME: home })).toBe("/Applications/ZCode.app");
      const sim = await createSimulatedInstall({ platform: "darwin", release: "3.12.3", parentDir: join(home, "Applications") });
      sims.push(sim);
      await patchPlatform(sim, `darwin-${process.arch}`);
      expect(await discoverInstallRoot("darwin", { HOME: home })).toBe(sim.root);
      const report = await assessInstall({ platform: "darwin", manifestPath: sim.manifestPath, env: { ...process.env, HOME: home } });
      expect(report.installRoot).toBe(sim.root);
      expect(report.supported).toBe(true);
    },
  );
});
