/**
 * CPU profile of the bridge process (node --cpu-prof) over one warmed-up 20,000-event turn: where
 * the bridge spends its time per event. Self time per function, the top entries.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { hotFunctions, selfTimeByWindow, type HotFunction } from "./lib/cpu-profile.js";
import { StampTracker } from "./lib/stamps.js";

export interface ProfileResult {
  label: string;
  /** profiled wall time of the whole process, ms */
  totalMs: number;
  /** samples that were not idle, ms */
  busyMs: number;
  top: HotFunction[];
}

export async function profileBridge(
  install: BenchInstall,
  label: string,
  env: NodeJS.ProcessEnv,
  events: number,
  bytes: number,
): Promise<ProfileResult> {
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
  const top = functions
    .filter((f) => f.name !== "(idle)")
    .slice(0, 12)
    .map((f) => ({ ...f, share: f.selfMs / busyMs }));
  return { label, totalMs, busyMs, top };
}

export interface StartupWindow {
  label: string;
  /** wall time of the window, ms */
  ms: number;
  /** self time by area, ms, largest first; "idle" is waiting (the host, child processes, the client) */
  areas: Array<{ area: string; ms: number }>;
}

export interface StartupProfile {
  initializeMs: number;
  sessionNewMs: number;
  windows: StartupWindow[];
}

function areaOf(name: string, where: string): string {
  if (name === "(garbage collector)") return "garbage collector";
  if (name === "(idle)" || name === "(program)") return name === "(idle)" ? "idle" : "node (module loading and internals)";
  if (where.startsWith("dist/") || where.startsWith("src/")) return "zcode-acp";
  if (where.startsWith("@agentclientprotocol/")) return "ACP SDK";
  const pkg = /^((?:@[^/]+\/)?[^/:]+)\//.exec(where)?.[1];
  if (pkg && !where.startsWith("node:")) return pkg;
  return "node (module loading and internals)";
}

function byArea(self: Map<string, number>): Array<{ area: string; ms: number }> {
  const areas = new Map<string, number>();
  for (const [key, ms] of self) {
    const [name = "", where = ""] = key.split("\t");
    const area = areaOf(name, where);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  }
  return [...areas.entries()].map(([area, ms]) => ({ area, ms })).sort((a, b) => b.ms - a.ms);
}

const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * CPU profile (node --cpu-prof) of one start-up of the CLI through initialize and session/new,
 * split at the moments the client read each answer: self time by area in each window.
 */
export async function profileStartup(env: NodeJS.ProcessEnv, node?: string): Promise<StartupProfile> {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-bench-prof-"));
  const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-bench-prof-ws-"));
  const client = BridgeClient.start({
    env,
    ...(node ? { node } : {}),
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval=200"],
  });
  let initializeMs: number;
  let sessionNewMs: number;
  const cuts: number[] = [];
  try {
    await client.initialize();
    cuts.push(monotonicUs());
    initializeMs = performance.now() - client.spawnedAt;
    await client.newSession(workspace);
    cuts.push(monotonicUs());
    sessionNewMs = performance.now() - client.spawnedAt;
  } finally {
    await client.close();
  }
  const file = (await readdir(dir)).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no CPU profile was written");
  const [init, session] = await selfTimeByWindow(join(dir, file), cuts);
  await rm(dir, { recursive: true, force: true });
  await rm(workspace, { recursive: true, force: true });
  return {
    initializeMs,
    sessionNewMs,
    windows: [
      { label: "spawn → initialize answered", ms: initializeMs, areas: byArea(init!.self) },
      { label: "initialize → session/new answered", ms: sessionNewMs - initializeMs, areas: byArea(session!.self) },
    ],
  };
}
