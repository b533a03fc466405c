/**
 * Start-up benchmark: the built CLI against baselines measured side by side, in alternating
 * rounds (each round runs every measure once, one process at a time):
 *
 * - spawn → `initialize` answered: the CLI vs a bare Node script that answers `initialize` from
 *   its first line (bench/lib/bare-initialize.mjs), both read by the same SDK client;
 * - spawn → `session/new` answered: the CLI (verification, host launch, ready, the host calls of
 *   a new session) vs a minimal bridge that launches the same simulated host with the same
 *   bootstrap and configuration, without verifying anything (bench/lib/minimal-host.mjs), when
 *   `session/new` arrives (the target's baseline: zcode-acp may not start the host for a probe
 *   that only sends `initialize`) and, as a lower bound, at its own spawn;
 * - spawn → exit of a cached `zcode-acp check` vs a bare `node -e ""`.
 *
 * Round 0 fills the fingerprint cache and Node's compile cache and is reported as "first run";
 * ratios are the median of the per-round ratios of the rounds after it.
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_FRAME_LIMIT_BYTES } from "../src/channel/limits.js";
import { resolveConfig } from "../src/cli/config.js";
import { installOptionsFrom } from "../src/cli/install-options.js";
import { assessInstall } from "../src/compat/assess.js";
import { builtinProviderConfig, buildBootstrapConfig } from "../src/host/bootstrap-config.js";
import { DEFAULT_BOOTSTRAP_SCRIPT, requireSupported } from "../src/host/launcher.js";
import { BridgeClient, CLI_PATH } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { median } from "./lib/stats.js";

const BARE_INITIALIZE = fileURLToPath(new URL("./lib/bare-initialize.mjs", import.meta.url));
const MINIMAL_HOST = fileURLToPath(new URL("./lib/minimal-host.mjs", import.meta.url));

export const STARTUP_TARGETS = { initialize: 1.3, sessionNew: 1.1, check: 2 } as const;

export interface StartupRound {
  /** the CLI: spawn → initialize answered, → session/new answered (ms) */
  initializeMs: number;
  sessionNewMs: number;
  /** bare-initialize.mjs: spawn → initialize answered */
  bareInitializeMs: number;
  /** minimal-host.mjs, host launched on session/new: spawn → session/new answered */
  minimalSessionNewMs: number;
  /** minimal-host.mjs, host launched at its spawn: spawn → session/new answered */
  eagerSessionNewMs: number;
  /** `zcode-acp check` (cache filled by round 0): spawn → exit */
  checkMs: number;
  /** `node -e ""`: spawn → exit */
  bareNodeMs: number;
}

export interface StartupResult {
  node: string;
  nodeVersion: string;
  first: StartupRound;
  rounds: StartupRound[];
}

export interface StartupOptions {
  rounds: number;
  /** node binary for the CLI and every baseline (default: this one) */
  node?: string;
}

async function bridgeRun(
  env: NodeJS.ProcessEnv,
  node: string,
  script?: string,
  args?: string[],
): Promise<{ initializeMs: number; sessionNewMs: number }> {
  const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-bench-startup-"));
  const client = BridgeClient.start({ env, node, ...(script ? { script } : {}), ...(args ? { args } : {}) });
  try {
    await client.initialize();
    const initializeMs = performance.now() - client.spawnedAt;
    await client.newSession(workspace);
    return { initializeMs, sessionNewMs: performance.now() - client.spawnedAt };
  } finally {
    await client.close();
  }
}

async function initializeOnly(env: NodeJS.ProcessEnv, node: string, script: string): Promise<number> {
  const client = BridgeClient.start({ env, node, script });
  try {
    await client.initialize();
    return performance.now() - client.spawnedAt;
  } finally {
    await client.close();
  }
}

/** spawn → exit, in ms; rejects on a non-zero exit */
function timeToExit(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(node, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", reject);
    child.once("exit", (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve(ms);
      else reject(new Error(`${args.join(" ")} exited with ${String(code)}: ${stderr.slice(-500)}`));
    });
  });
}

type Launch = "session" | "spawn";

/** The minimal launcher's argument: the executable and the bootstrap configuration zcode-acp would use. */
async function minimalHostSpec(install: BenchInstall): Promise<(launch: Launch) => string[]> {
  const supported = requireSupported(await assessInstall(installOptionsFrom(resolveConfig([], install.env), install.env)));
  const config = buildBootstrapConfig(supported, {
    frameLimitBytes: DEFAULT_FRAME_LIMIT_BYTES,
    disposeTimeoutMs: 5_000,
    builtinProviderConfig: builtinProviderConfig(supported, install.env),
  });
  return (launch) => [
    JSON.stringify({ executable: supported.paths.executable, args: [DEFAULT_BOOTSTRAP_SCRIPT, JSON.stringify(config)], launch }),
  ];
}

async function round(install: BenchInstall, node: string, minimal: (launch: Launch) => string[]): Promise<StartupRound> {
  const bareInitializeMs = await initializeOnly(install.env, node, BARE_INITIALIZE);
  const bridge = await bridgeRun(install.env, node);
  const lazy = await bridgeRun(install.env, node, MINIMAL_HOST, minimal("session"));
  const eager = await bridgeRun(install.env, node, MINIMAL_HOST, minimal("spawn"));
  const bareNodeMs = await timeToExit(node, ["-e", ""], install.env);
  const checkMs = await timeToExit(node, [CLI_PATH, "check"], install.env);
  return {
    ...bridge,
    bareInitializeMs,
    minimalSessionNewMs: lazy.sessionNewMs,
    eagerSessionNewMs: eager.sessionNewMs,
    bareNodeMs,
    checkMs,
  };
}

export async function runStartup(install: BenchInstall, options: StartupOptions): Promise<StartupResult> {
  const node = options.node ?? process.execPath;
  const minimal = await minimalHostSpec(install);
  const first = await round(install, node, minimal);
  const rounds: StartupRound[] = [];
  for (let i = 0; i < options.rounds; i++) rounds.push(await round(install, node, minimal));
  const nodeVersion = await new Promise<string>((resolve, reject) => {
    const child = spawn(node, ["--version"], { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.once("error", reject);
    child.once("exit", () => resolve(out.trim()));
  });
  return { node, nodeVersion, first, rounds };
}

export interface StartupRatios {
  initialize: number;
  sessionNew: number;
  /** against the launch at spawn (no target: a lower bound) */
  sessionNewEager: number;
  check: number;
}

/** medians of the per-round (paired) ratios */
export function startupRatios(result: StartupResult): StartupRatios {
  const ratio = (f: (r: StartupRound) => number) => median(result.rounds.map(f));
  return {
    initialize: ratio((r) => r.initializeMs / r.bareInitializeMs),
    sessionNew: ratio((r) => r.sessionNewMs / r.minimalSessionNewMs),
    sessionNewEager: ratio((r) => r.sessionNewMs / r.eagerSessionNewMs),
    check: ratio((r) => r.checkMs / r.bareNodeMs),
  };
}
