/**
 * `npx zcode-acp` against a global install, from the same packed tarball (`npm pack` of this
 * build) in temporary prefixes: spawn → `initialize` answered and → `session/new` answered,
 * alternating rounds. The npx runs use a private npm cache (filled by one first run, which is
 * reported apart): what an editor's `npx -y zcode-acp` costs once the package is in the cache,
 * without the registry round trip that a registry spec adds to each run (see the notes it writes).
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { fmt, median } from "./lib/stats.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

export interface NpxResult {
  npmVersion: string;
  first: { initializeMs: number; sessionNewMs: number };
  npx: Array<{ initializeMs: number; sessionNewMs: number }>;
  global: Array<{ initializeMs: number; sessionNewMs: number }>;
}

async function timed(command: string[], env: NodeJS.ProcessEnv): Promise<{ initializeMs: number; sessionNewMs: number }> {
  const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-bench-npx-ws-"));
  const client = BridgeClient.start({ env, command });
  try {
    await client.initialize();
    const initializeMs = performance.now() - client.spawnedAt;
    await client.newSession(workspace);
    return { initializeMs, sessionNewMs: performance.now() - client.spawnedAt };
  } finally {
    await client.close();
    await rm(workspace, { recursive: true, force: true });
  }
}

export async function runNpx(install: BenchInstall, rounds: number): Promise<NpxResult> {
  const work = await mkdtemp(join(tmpdir(), "zcode-acp-bench-npx-"));
  try {
    const packed = await run(NPM, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: ROOT });
    const tarball = join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
    const prefix = join(work, "global");
    await run(NPM, ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--ignore-scripts", tarball], {
      cwd: work,
      timeout: 180_000,
    });
    const globalBin = join(prefix, process.platform === "win32" ? "zcode-acp.cmd" : "bin/zcode-acp");
    const npxEnv: NodeJS.ProcessEnv = {
      ...install.env,
      npm_config_cache: join(work, "npm-cache"),
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    };
    const npx = ["npx", "--yes", "--package", tarball, "zcode-acp"];
    const first = await timed(npx, npxEnv);
    const result: NpxResult = { npmVersion: (await run(NPM, ["--version"])).stdout.trim(), first, npx: [], global: [] };
    for (let i = 0; i < rounds; i++) {
      result.npx.push(await timed(npx, npxEnv));
      result.global.push(await timed([globalBin], install.env));
    }
    return result;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

export function npxSection(result: NpxResult): string {
  const m = (list: Array<{ initializeMs: number; sessionNewMs: number }>, key: "initializeMs" | "sessionNewMs") =>
    median(list.map((r) => r[key]));
  const extra = (key: "initializeMs" | "sessionNewMs") => m(result.npx, key) - m(result.global, key);
  return [
    "## `npx zcode-acp` vs a global install",
    "",
    `The tarball of this build (\`npm pack\`) installed globally into a temporary prefix (\`npm install -g --prefix\`), ` +
      `and run with \`npx --yes --package <tarball> zcode-acp\` (npm ${result.npmVersion}) ` +
      `with a private npm cache that one first run filled; ` +
      `${result.npx.length} alternating rounds, the same SDK client and simulated install as the start-up section.`,
    "",
    "| measure | global install (median) | npx, package cached (median) | npx adds | npx first run (cache empty) |",
    "| --- | --- | --- | --- | --- |",
    `| spawn → initialize answered (ms) | ${fmt(m(result.global, "initializeMs"), 0)} ` +
      `| ${fmt(m(result.npx, "initializeMs"), 0)} | ${fmt(extra("initializeMs"), 0)} | ${fmt(result.first.initializeMs, 0)} |`,
    `| spawn → session/new answered (ms) | ${fmt(m(result.global, "sessionNewMs"), 0)} ` +
      `| ${fmt(m(result.npx, "sessionNewMs"), 0)} | ${fmt(extra("sessionNewMs"), 0)} | ${fmt(result.first.sessionNewMs, 0)} |`,
    "",
    "npx starts npm (itself a Node program) to resolve the package before our CLI starts, on every run. " +
      "With a registry spec (`npx -y zcode-acp`), npm also resolves the version against the registry " +
      "whenever its cached metadata is stale (a network round trip on top of the figure above, not measured here). " +
      "A global install (`npm install -g zcode-acp`, then the command `zcode-acp`) runs no npm at all.",
  ].join("\n");
}
