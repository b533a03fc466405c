/**
 * Memory benchmark: one 100 MiB streamed turn (`sim:bench`, 4 KiB deltas at a fixed rate) to a
 * client that reads slowly (it stops reading stdout for pauseMs after every readMs), so the
 * bridge's writes back up. Peak RSS of the bridge process from /proc/<pid>/status (VmHWM, and the
 * highest sampled VmRSS); the host's RSS for comparison. The text is checked complete and in order.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient, type SlowReading } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { childPids, MemorySampler, readMemory } from "./lib/proc-memory.js";
import { StampTracker } from "./lib/stamps.js";

export interface MemoryPlan {
  events: number;
  bytes: number;
  rate: number;
  slow: SlowReading;
}

export interface MemoryResult {
  plan: MemoryPlan;
  stopReason: string;
  turnMs: number;
  events: number;
  textBytes: number;
  notifications: number;
  /** RSS of the bridge after session/new, before the turn */
  baselineRssBytes: number;
  bridgePeakRssBytes: number;
  bridgeHwmBytes: number;
  hostPeakRssBytes: number;
}

export async function runMemory(install: BenchInstall, plan: MemoryPlan, env: NodeJS.ProcessEnv = install.env): Promise<MemoryResult> {
  const tracker = new StampTracker(plan.events);
  const client = BridgeClient.start({ env, onText: (text) => tracker.add(text), slow: plan.slow });
  try {
    await client.initialize();
    const sessionId = await client.newSession(await mkdtemp(join(tmpdir(), "zcode-acp-bench-memory-")));
    const baselineRssBytes = readMemory(client.pid)?.rssBytes ?? Number.NaN;
    const bridge = new MemorySampler(() => client.pid);
    let hostPid: number | undefined;
    const host = new MemorySampler(() => (hostPid ??= childPids(client.pid)[0]));
    const started = performance.now();
    const response = await client
      .prompt(sessionId, `sim:bench n=${plan.events} bytes=${plan.bytes} rate=${plan.rate}`)
      .catch((error: Error & { data?: { code?: string } }) => ({ stopReason: `error ${error.data?.code ?? String(error)}` }));
    const turnMs = performance.now() - started;
    bridge.stop();
    host.stop();
    if (tracker.problem) throw new Error(`memory run: stream out of order: ${tracker.problem}`);
    return {
      plan,
      stopReason: response.stopReason,
      turnMs,
      events: tracker.count,
      textBytes: tracker.bytes,
      notifications: tracker.chunks,
      baselineRssBytes,
      bridgePeakRssBytes: bridge.maxRssBytes,
      bridgeHwmBytes: bridge.hwmBytes,
      hostPeakRssBytes: host.maxRssBytes,
    };
  } finally {
    await client.close();
  }
}
