/**
 * Streaming benchmark: `sim:bench` turns through the whole bridge (built CLI + SDK client over
 * real pipes) and through the raw relay (same host and bootstrap, no translation). Every path has
 * its own connection, opened first; then the paths take turns (so load drift on a shared machine
 * hits them alike): a warm-up turn each, the throughput turns (as fast as the host can emit)
 * alternating, then a latency turn each at a fixed open rate.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { LineClient } from "./lib/line-client.js";
import { RawRelay } from "./lib/raw-relay.js";
import { StampTracker, wallNow } from "./lib/stamps.js";

/**
 * raw relay; the bridge with the SDK client; the bridge read by a line client (JSON.parse only,
 * no SDK: what the bridge alone adds); the bridge with delta merging off (ZCODE_ACP_MERGE_DELTAS=0);
 * the bridge reading turns through ZCode's V4 conversation frames (a simulated 4.0.0 install: no
 * legacy event stream; the same simulator, its turns projected into rows; adr/0024)
 */
export type PathName = "raw" | "bridge" | "bridge-lines" | "bridge-unmerged" | "bridge-v4read";

export interface TurnMeasure {
  n: number;
  bytes: number;
  rate: number;
  /** prompt sent → last event received */
  turnMs: number;
  /** first event → last event */
  streamMs: number;
  eventsPerSecond: number;
  /** text chunks the reader got (fewer than n when the bridge merged deltas) */
  chunks: number;
  latencies: Float64Array;
}

export interface PathResult {
  path: PathName;
  throughput: TurnMeasure[];
  latency: TurnMeasure | undefined;
}

export interface StreamPlan {
  events: number;
  bytes: number;
  throughputRuns: number;
  latencyEvents: number;
  /** the latency turns are split into this many rounds that alternate between the paths (pooled) */
  latencyRounds: number;
  rate: number;
  warmupEvents: number;
  /** paths that also run the latency turn */
  latencyPaths: PathName[];
}

interface Driver {
  prompt(text: string, onText: (text: string) => void): Promise<void>;
  close(): Promise<void>;
}

async function measure(driver: Driver, n: number, bytes: number, rate: number): Promise<TurnMeasure> {
  const tracker = new StampTracker(n);
  const t0 = wallNow();
  const turn = driver.prompt(`sim:bench n=${n} bytes=${bytes} rate=${rate}`, (text) => tracker.add(text));
  await Promise.all([turn, tracker.whenComplete(120_000)]);
  if (tracker.problem) throw new Error(`stream out of order: ${tracker.problem}`);
  if (tracker.count !== n) throw new Error(`expected ${n} events, got ${tracker.count}`);
  const turnMs = tracker.lastArrival - t0;
  return {
    n,
    bytes,
    rate,
    turnMs,
    streamMs: tracker.lastArrival - tracker.firstArrival,
    eventsPerSecond: (n * 1000) / turnMs,
    chunks: tracker.chunks,
    latencies: tracker.latencies,
  };
}

/** Two latency turns as one measure (their latencies together). */
function pool(a: TurnMeasure | undefined, b: TurnMeasure): TurnMeasure {
  if (!a) return b;
  const latencies = new Float64Array(a.latencies.length + b.latencies.length);
  latencies.set(a.latencies);
  latencies.set(b.latencies, a.latencies.length);
  return { ...b, n: a.n + b.n, turnMs: a.turnMs + b.turnMs, streamMs: a.streamMs + b.streamMs, chunks: a.chunks + b.chunks, latencies };
}

async function bridgeDriver(env: NodeJS.ProcessEnv, workspace: string): Promise<Driver> {
  let sink: (text: string) => void = () => undefined;
  const client = BridgeClient.start({ env, onText: (text) => sink(text) });
  await client.initialize();
  const sessionId = await client.newSession(workspace);
  return {
    prompt: async (text, onText) => {
      sink = onText;
      const response = await client.prompt(sessionId, text);
      if (response.stopReason !== "end_turn") throw new Error(`bridge turn ended ${response.stopReason}`);
    },
    close: async () => {
      const code = await client.close();
      if (code !== 0) throw new Error(`the bridge exited with ${code}`);
    },
  };
}

async function lineDriver(env: NodeJS.ProcessEnv, workspace: string): Promise<Driver> {
  let sink: (text: string) => void = () => undefined;
  const client = new LineClient(env, (text) => sink(text));
  await client.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {},
    clientInfo: { name: "zcode-acp-bench-lines", version: "0.0.0" },
  });
  const { sessionId } = (await client.request("session/new", { cwd: workspace, mcpServers: [] })) as { sessionId: string };
  return {
    prompt: async (text, onText) => {
      sink = onText;
      const response = (await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] })) as { stopReason: string };
      if (response.stopReason !== "end_turn") throw new Error(`bridge turn ended ${response.stopReason}`);
    },
    close: async () => {
      const code = await client.close();
      if (code !== 0) throw new Error(`the bridge exited with ${code}`);
    },
  };
}

async function rawDriver(env: NodeJS.ProcessEnv, workspace: string): Promise<Driver> {
  const relay = new RawRelay(env);
  const sessionId = await relay.open(workspace);
  return {
    prompt: (text, onText) => relay.prompt(workspace, sessionId, text, onText),
    close: () => relay.close(),
  };
}

async function openDriver(path: PathName, install: BenchInstall, v4Install?: BenchInstall): Promise<Driver> {
  const workspace = await mkdtemp(join(tmpdir(), `zcode-acp-bench-${path}-`));
  if (path === "bridge-v4read") {
    if (!v4Install) throw new Error("the V4-read path needs a simulated 4.0.0 install");
    return bridgeDriver(v4Install.env, workspace);
  }
  if (path === "raw") return rawDriver(install.env, workspace);
  if (path === "bridge-lines") return lineDriver(install.env, workspace);
  return bridgeDriver(path === "bridge" ? install.env : { ...install.env, ZCODE_ACP_MERGE_DELTAS: "0" }, workspace);
}

export async function runStream(
  install: BenchInstall,
  paths: PathName[],
  plan: StreamPlan,
  v4Install?: BenchInstall,
): Promise<PathResult[]> {
  const drivers = new Map<PathName, Driver>();
  try {
    for (const path of paths) drivers.set(path, await openDriver(path, install, v4Install));
    const results = paths.map((path): PathResult => ({ path, throughput: [], latency: undefined }));
    for (const path of paths) await measure(drivers.get(path)!, plan.warmupEvents, plan.bytes, 0);
    for (let run = 0; run < plan.throughputRuns; run++) {
      for (const result of results) result.throughput.push(await measure(drivers.get(result.path)!, plan.events, plan.bytes, 0));
    }
    const perRound = Math.ceil(plan.latencyEvents / plan.latencyRounds);
    for (let round = 0; round < plan.latencyRounds; round++) {
      for (const result of results) {
        if (!plan.latencyPaths.includes(result.path)) continue;
        result.latency = pool(result.latency, await measure(drivers.get(result.path)!, perRound, plan.bytes, plan.rate));
      }
    }
    return results;
  } finally {
    for (const driver of drivers.values())
      await driver.close().catch((error: unknown) => console.error(`closing a driver failed: ${String(error)}`));
  }
}
