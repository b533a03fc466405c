/**
 * Start-up benchmark: spawn of the built CLI → `initialize` answered, and spawn → `session/new`
 * answered (the host launched and ready). The first run fills the fingerprint cache (cold); the
 * median is over the runs after it. Reference: spawn of a bare `node` → its first stdout byte.
 */
import { spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";

export interface StartupRun {
  initializeMs: number;
  sessionNewMs: number;
}

export interface StartupResult {
  cold: StartupRun;
  warm: StartupRun[];
  bareNodeMs: number[];
  /** node that imports the ACP SDK (and zod) before its first output */
  sdkImportMs: number[];
}

async function oneRun(install: BenchInstall): Promise<StartupRun> {
  const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-bench-startup-"));
  const client = BridgeClient.start({ env: install.env });
  try {
    await client.initialize();
    const initializeMs = performance.now() - client.spawnedAt;
    await client.newSession(workspace);
    const sessionNewMs = performance.now() - client.spawnedAt;
    return { initializeMs, sessionNewMs };
  } finally {
    await client.close();
  }
}

const REPO = fileURLToPath(new URL("..", import.meta.url));

function firstOutput(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.once("data", () => resolve(performance.now() - started));
    child.once("error", reject);
  });
}

export async function runStartup(install: BenchInstall, runs: number): Promise<StartupResult> {
  const cold = await oneRun(install);
  const warm: StartupRun[] = [];
  const bareNodeMs: number[] = [];
  const sdkImportMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    warm.push(await oneRun(install));
    bareNodeMs.push(await firstOutput(["-e", "process.stdout.write('x')"]));
    sdkImportMs.push(await firstOutput(["--input-type=module", "-e", "await import('@agentclientprotocol/sdk'); process.stdout.write('x')"]));
  }
  return { cold, warm, bareNodeMs, sdkImportMs };
}
