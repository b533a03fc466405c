/**
 * CPU profile of the bridge process (node --cpu-prof) over one warmed-up 20,000-event turn: where
 * the bridge spends its time per event. Self time per function, the top entries.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { hotFunctions, type HotFunction } from "./lib/cpu-profile.js";
import { StampTracker } from "./lib/stamps.js";

export interface ProfileResult {
  label: string;
  /** profiled wall time of the whole process, ms */
  totalMs: number;
  /** samples that were not idle, ms */
  busyMs: number;
  top: HotFunction[];
}

export async function profileBridge(install: BenchInstall, label: string, env: NodeJS.ProcessEnv, events: number, bytes: number): Promise<ProfileResult> {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-bench-prof-"));
  let tracker = new StampTracker(0);
  const client = BridgeClient.start({ env, onText: (text) => tracker.add(text), nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`] });
  try {
    await client.initialize();
    const sessionId = await client.newSession(await mkdtemp(join(tmpdir(), "zcode-acp-bench-prof-ws-")));
    for (const n of [2000, events]) {
      tracker = new StampTracker(n);
      await client.prompt(sessionId, `sim:bench n=${n} bytes=${bytes} rate=0`);
      if (tracker.count !== n) throw new Error(`profile run: ${tracker.count} of ${n} events`);
    }
  } finally {
    await client.close();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no CPU profile was written");
  const { totalMs, functions } = await hotFunctions(join(dir, file), 40);
  await rm(dir, { recursive: true, force: true });
  const idle = functions.filter((f) => f.name === "(idle)").reduce((sum, f) => sum + f.selfMs, 0);
  const busyMs = totalMs - idle;
  const top = functions.filter((f) => f.name !== "(idle)").slice(0, 12).map((f) => ({ ...f, share: f.selfMs / busyMs }));
  return { label, totalMs, busyMs, top };
}

export interface StartupProfile {
  initializeMs: number;
  totalMs: number;
  /** self time by area: "node (module loading and internals)", "zod", "ACP SDK", "garbage collector", "zcode-acp", … */
  areas: Array<{ area: string; ms: number }>;
}

function areaOf(name: string, where: string): string {
  if (name === "(garbage collector)") return "garbage collector";
  if (name === "(idle)") return "idle";
  if (where.startsWith("zod/")) return "zod";
  if (where.startsWith("@agentclientprotocol/")) return "ACP SDK";
  if (where.startsWith("dist/") || where.startsWith("src/")) return "zcode-acp";
  if (/^[^:]+\/[^:]*\.m?js:/.test(where) && !where.startsWith("node:")) return "other packages";
  return "node (module loading and internals)";
}

/** CPU profile of the bridge from spawn to the initialize answer, grouped by area. */
export async function profileStartup(env: NodeJS.ProcessEnv): Promise<StartupProfile> {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-bench-prof-"));
  const client = BridgeClient.start({ env, nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval=200"] });
  let initializeMs: number;
  try {
    await client.initialize();
    initializeMs = performance.now() - client.spawnedAt;
  } finally {
    await client.close();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no CPU profile was written");
  const { totalMs, functions } = await hotFunctions(join(dir, file), 1_000_000);
  await rm(dir, { recursive: true, force: true });
  const areas = new Map<string, number>();
  for (const f of functions) areas.set(areaOf(f.name, f.where), (areas.get(areaOf(f.name, f.where)) ?? 0) + f.selfMs);
  return { initializeMs, totalMs, areas: [...areas.entries()].map(([area, ms]) => ({ area, ms })).sort((a, b) => b.ms - a.ms) };
}
