/**
 * The published package: `npm pack` holds the built bin, the bootstrap and the manifests, and the
 * packed tarball installed into an empty project runs `zcode-acp --help` and `zcode-acp check`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../fixtures/sim-install.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

let sim: SimInstall;
let work: string;
let files: string[] = [];
let tarball: string;

beforeAll(async () => {
  sim = await createSimulatedInstall();
  work = mkdtempSync(join(tmpdir(), "zcode-acp-pack-"));
  // --ignore-scripts: pack the dist/ that `npm test` just built (prepack would rebuild it while
  // other test files run against it)
  const packed = await execa(NPM, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: ROOT });
  const info = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  files = info[0]!.files.map((f) => f.path);
  tarball = join(work, info[0]!.filename);
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  await execa(NPM, ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", tarball], { cwd: work, timeout: 120_000 });
}, 180_000);

afterAll(async () => {
  await sim?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("npm package", () => {
  it("contains the built bin, the plain-JS bootstrap and the manifests, and no sources or tests", () => {
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("dist/runtime/bootstrap.js");
    expect(files).toContain("manifests/zcode-3.11.2.json");
    expect(files).toContain("manifests/zcode-3.10.2.json");
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.startsWith("fixtures/"))).toEqual([]);
  });

  it("the installed bin prints its help", async () => {
    const result = await execa(join(work, "node_modules/.bin/zcode-acp"), ["--help"], { cwd: work });
    expect(result.stdout).toContain("zcode-acp check [options]");
  });

  it("the installed bin checks a simulated install (supported, exit 0) and refuses a missing one (exit 1)", async () => {
    const bin = join(work, "node_modules/.bin/zcode-acp");
    const ok = await execa(bin, ["check", "--json", "--zcode-install", sim.root, "--manifest", sim.manifestPath], {
      cwd: work,
      env: { HOME: sim.env.HOME },
      reject: false,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ supported: true, appVersion: "3.11.2" });
    const missing = await execa(bin, ["check", "--zcode-install", join(work, "nowhere")], { cwd: work, env: { HOME: sim.env.HOME }, reject: false });
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout + missing.stderr).toMatch(/ZCode/);
  });
});
