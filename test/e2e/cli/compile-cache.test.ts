/**
 * Node's module compile cache through the built CLI (src/cli/compile-cache.ts): on Node ≥ 22.1
 * a `check` run leaves compiled modules under <ZCODE_ACP_CACHE_DIR>/node-compile-cache; on
 * Node 20 nothing is written there; a cache directory that cannot be created never fails the run.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import * as nodeModule from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { runCli, type CliRun } from "../../support/cli-process.js";

const hasCompileCache = typeof (nodeModule as unknown as { enableCompileCache?: unknown }).enableCompileCache === "function";
let sim: SimInstall;
let dir: string;

beforeAll(async () => {
  sim = await createSimulatedInstall();
  dir = await mkdtemp(join(tmpdir(), "zcode-acp-compile-cache-"));
});
afterAll(async () => {
  await sim?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

function check(cacheDir: string): Promise<CliRun> {
  return runCli(["check"], { env: { ...sim.env, ZCODE_ACP_CACHE_DIR: cacheDir } });
}

/** files under a directory, recursively */
function files(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe(`compile cache (Node ${process.version})`, () => {
  it(hasCompileCache ? "is filled by the first run" : "is not used on a Node without it", async () => {
    const cacheDir = join(dir, "cache");
    expect((await check(cacheDir)).code).toBe(0);
    const compiled = files(join(cacheDir, "node-compile-cache"));
    // the bundled check loads a handful of chunks after the cache is enabled: each one is cached
    if (hasCompileCache) expect(compiled.length).toBeGreaterThan(0);
    else expect(compiled).toEqual([]);
    expect(files(cacheDir)).toContain("fingerprints.json");
  });

  it("never fails the start-up when the cache directory cannot be created", async () => {
    const blocked = join(dir, "blocked");
    writeFileSync(blocked, "a file where the cache directory should be");
    const run = await check(blocked);
    expect(run.code).toBe(0);
  });
});
