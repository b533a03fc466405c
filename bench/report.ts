/** Markdown for bench/results.md: one body per section (the runner writes them between markers). */
import type { MachineInfo } from "./lib/machine.js";
import { describeMachine } from "./lib/machine.js";
import { distribution, fmt, median, mib } from "./lib/stats.js";
import type { MemoryResult } from "./memory.js";
import type { ProfileResult, StartupProfile } from "./profile.js";
import type { StartupResult } from "./startup.js";
import type { PathName, PathResult, StreamPlan } from "./stream.js";

export const TARGETS = { throughputRatio: 0.5, addedP99Ms: 2, initializeMs: 150, rssBytes: 150e6 } as const;

export interface Figures {
  throughputRatio?: number;
  unmergedRatio?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  /** the same with the line reader instead of the SDK client */
  linesAddedP99Ms?: number;
  initializeMs?: number;
  sessionNewMs?: number;
  bareNodeMs?: number;
  sdkImportMs?: number;
  startupAreas?: StartupProfile["areas"];
  rawP99Ms?: number;
  rssBytes?: number;
  memoryStop?: string;
}

const PATH_LABEL: Record<PathName, string> = {
  raw: "raw relay (HostConnection → reader)",
  bridge: "bridge (CLI → SDK client)",
  "bridge-lines": "bridge (CLI → line reader, no SDK)",
  "bridge-unmerged": "bridge, merging off (ZCODE_ACP_MERGE_DELTAS=0)",
};

const medianRate = (r: PathResult): number => median(r.throughput.map((t) => t.eventsPerSecond));

export function streamFigures(results: PathResult[], figures: Figures): void {
  const raw = results.find((r) => r.path === "raw");
  const bridge = results.find((r) => r.path === "bridge");
  const unmerged = results.find((r) => r.path === "bridge-unmerged");
  if (raw && bridge) figures.throughputRatio = medianRate(bridge) / medianRate(raw);
  if (raw && unmerged) figures.unmergedRatio = medianRate(unmerged) / medianRate(raw);
  if (raw?.latency && bridge?.latency) {
    const r = distribution(Array.from(raw.latency.latencies));
    const b = distribution(Array.from(bridge.latency.latencies));
    figures.addedP50Ms = b.p50 - r.p50;
    figures.addedP99Ms = b.p99 - r.p99;
    figures.rawP99Ms = r.p99;
    const lines = results.find((x) => x.path === "bridge-lines")?.latency;
    if (lines) figures.linesAddedP99Ms = distribution(Array.from(lines.latencies)).p99 - r.p99;
  }
}

export function streamSection(results: PathResult[], plan: StreamPlan, figures: Figures): string {
  const lines: string[] = [];
  lines.push("## Streaming — bridge vs raw relay", "");
  lines.push(
    `\`sim:bench n=${plan.events} bytes=${plan.bytes}\`: ${plan.events.toLocaleString("en")} text deltas of ${plan.bytes} bytes from the simulated host, as fast as it emits them. ` +
      `Raw relay = the same host and bootstrap launched by HostConnection, events straight to a reader (no validation, no translation, no ACP). ` +
      `Bridge = the built CLI over real pipes to the SDK client. Each path has its own connection; after a ${plan.warmupEvents}-event warm-up turn the paths take turns, ${plan.throughputRuns} throughput turns each. ` +
      "Time = prompt sent → last event received.",
    "",
  );
  lines.push("| path | turns (ms) | median events/s | ratio to raw | notifications per turn |", "| --- | --- | --- | --- | --- |");
  const raw = results.find((r) => r.path === "raw");
  for (const r of results) {
    const ratio = raw ? medianRate(r) / medianRate(raw) : Number.NaN;
    const chunks = r.throughput.map((t) => t.chunks).join(", ");
    lines.push(`| ${PATH_LABEL[r.path]} | ${r.throughput.map((t) => fmt(t.turnMs, 0)).join(", ")} | ${fmt(medianRate(r), 0)} | ${fmt(ratio * 100, 0)} % | ${chunks} |`);
  }
  lines.push("");
  const withLatency = results.filter((r) => r.latency);
  if (withLatency.length > 0) {
    const first = withLatency[0]!.latency!;
    lines.push(
      `Latency: \`sim:bench n=${first.n / plan.latencyRounds} bytes=${first.bytes} rate=${first.rate}\` × ${plan.latencyRounds} rounds alternating between the paths (pooled) — an open schedule of ${first.rate.toLocaleString("en")} events/s; every delta carries its emit time ` +
        "(`performance.timeOrigin + performance.now()` in the host) and the reader records arrival − emit per event (ms).",
      "",
      "| path | events | p50 | p90 | p99 | max |",
      "| --- | --- | --- | --- | --- | --- |",
    );
    const dists = new Map(withLatency.map((r) => [r.path, distribution(Array.from(r.latency!.latencies))]));
    for (const r of withLatency) {
      const d = dists.get(r.path)!;
      lines.push(`| ${PATH_LABEL[r.path]} | ${d.count} | ${fmt(d.p50, 3)} | ${fmt(d.p90, 3)} | ${fmt(d.p99, 3)} | ${fmt(d.max, 2)} |`);
    }
    const r = dists.get("raw");
    const b = dists.get("bridge");
    const l = dists.get("bridge-lines");
    if (r && b) lines.push(`| **added: bridge + SDK client** (bridge − raw, per percentile) | | ${fmt(b.p50 - r.p50, 3)} | ${fmt(b.p90 - r.p90, 3)} | **${fmt(b.p99 - r.p99, 3)}** | |`);
    if (r && l) lines.push(`| added: bridge alone (line reader − raw, per percentile) | | ${fmt(l.p50 - r.p50, 3)} | ${fmt(l.p90 - r.p90, 3)} | ${fmt(l.p99 - r.p99, 3)} | |`);
    lines.push("");
  }
  if (figures.throughputRatio !== undefined) {
    lines.push(
      `Throughput ratio bridge/raw: **${fmt(figures.throughputRatio * 100, 0)} %**` +
        (figures.unmergedRatio !== undefined ? ` (merging off: ${fmt(figures.unmergedRatio * 100, 0)} %).` : "."),
    );
  }
  return lines.join("\n");
}

export function startupSection(result: StartupResult, profile?: StartupProfile): string {
  const init = result.warm.map((r) => r.initializeMs);
  const session = result.warm.map((r) => r.sessionNewMs);
  return [
    "## Start-up",
    "",
    "Spawn of `node dist/cli/main.js` → the `initialize` response read by the SDK client, and → the `session/new` response " +
      "(install check, host launch, ready, initialize/readWorkspaceState, createSession, subscribe). The first run fills the fingerprint cache (cold); " +
      `the median is over the ${result.warm.length} runs after it. Reference: spawn of a bare \`node -e\` → its first stdout byte.`,
    "",
    "| measure | cold (first run) | median | min | max |",
    "| --- | --- | --- | --- | --- |",
    `| spawn → initialize answered (ms) | ${fmt(result.cold.initializeMs, 0)} | **${fmt(median(init), 0)}** | ${fmt(Math.min(...init), 0)} | ${fmt(Math.max(...init), 0)} |`,
    `| spawn → session/new answered (ms) | ${fmt(result.cold.sessionNewMs, 0)} | **${fmt(median(session), 0)}** | ${fmt(Math.min(...session), 0)} | ${fmt(Math.max(...session), 0)} |`,
    `| bare node: spawn → first output (ms) | | ${fmt(median(result.bareNodeMs), 0)} | ${fmt(Math.min(...result.bareNodeMs), 0)} | ${fmt(Math.max(...result.bareNodeMs), 0)} |`,
    `| node importing the ACP SDK: spawn → first output (ms) | | ${fmt(median(result.sdkImportMs), 0)} | ${fmt(Math.min(...result.sdkImportMs), 0)} | ${fmt(Math.max(...result.sdkImportMs), 0)} |`,
    ...(profile
      ? [
          "",
          `CPU profile of one more start-up (node --cpu-prof, initialize answered after ${fmt(profile.initializeMs, 0)} ms), self time by area: ` +
            profile.areas.filter((a) => a.ms >= 0.5).map((a) => `${a.area} ${fmt(a.ms, 0)} ms`).join(", ") + ".",
        ]
      : []),
  ].join("\n");
}

export function memorySection(result: MemoryResult): string {
  const p = result.plan;
  return [
    "## Memory — 100 MiB turn, slow client",
    "",
    `\`sim:bench n=${p.events} bytes=${p.bytes} rate=${p.rate}\` (${mib(p.events * p.bytes)} of text at ${mib(p.rate * p.bytes)}/s) to an SDK client that stops reading stdout for ${p.slow.pauseMs} ms after every ${p.slow.readMs} ms. ` +
      "Peak RSS of the bridge process: VmHWM from /proc/<pid>/status (and the highest VmRSS sampled every 25 ms).",
    "",
    "| measure | value |",
    "| --- | --- |",
    `| outcome | ${result.stopReason}; ${result.events.toLocaleString("en")} events, ${mib(result.textBytes)} of text in order, in ${result.notifications.toLocaleString("en")} notifications, ${fmt(result.turnMs / 1000, 1)} s |`,
    `| bridge RSS before the turn | ${mib(result.baselineRssBytes)} |`,
    `| **bridge peak RSS (VmHWM)** | **${mib(result.bridgeHwmBytes)}** (${fmt(result.bridgeHwmBytes / 1e6, 0)} MB) |`,
    `| bridge highest sampled VmRSS | ${mib(result.bridgePeakRssBytes)} |`,
    `| host process highest sampled VmRSS (for comparison) | ${mib(result.hostPeakRssBytes)} |`,
  ].join("\n");
}

export function profileSection(profiles: ProfileResult[]): string {
  const lines = ["## Where the bridge spends its time (node --cpu-prof)", ""];
  for (const p of profiles) {
    lines.push(`**${p.label}** — busy ${fmt(p.busyMs, 0)} ms of ${fmt(p.totalMs, 0)} ms profiled (whole process: start-up, session/new, a warm-up turn and the measured turn). Top self time:`, "");
    lines.push("| self ms | share of busy | function | where |", "| --- | --- | --- | --- |");
    for (const f of p.top) lines.push(`| ${fmt(f.selfMs, 0)} | ${fmt(f.share * 100, 1)} % | \`${f.name}\` | ${f.where ? `\`${f.where}\`` : ""} |`);
    lines.push("");
  }
  return lines.join("\n");
}

export function summarySection(machine: MachineInfo, figures: Figures, totalSeconds: number, notes: string[]): string {
  const verdict = (ok: boolean | undefined): string => (ok === undefined ? "not measured" : ok ? "**met**" : "**missed**");
  const rows: string[] = [];
  rows.push(`| throughput ≥ ${TARGETS.throughputRatio * 100} % of the raw relay | ${figures.throughputRatio === undefined ? "n/a" : `${fmt(figures.throughputRatio * 100, 0)} %`} | ${verdict(figures.throughputRatio === undefined ? undefined : figures.throughputRatio >= TARGETS.throughputRatio)} |`);
  rows.push(`| p99 added latency < ${TARGETS.addedP99Ms} ms at 1,000 events/s | ${figures.addedP99Ms === undefined ? "n/a" : `${fmt(figures.addedP99Ms, 3)} ms with the SDK client (p50 ${fmt(figures.addedP50Ms ?? Number.NaN, 3)} ms)${figures.linesAddedP99Ms === undefined ? "" : `; the bridge alone (line reader): ${fmt(figures.linesAddedP99Ms, 3)} ms`}`} | ${verdict(figures.addedP99Ms === undefined ? undefined : figures.addedP99Ms < TARGETS.addedP99Ms)} |`);
  rows.push(`| initialize < ${TARGETS.initializeMs} ms after spawn (median) | ${figures.initializeMs === undefined ? "n/a" : `${fmt(figures.initializeMs, 0)} ms`} | ${verdict(figures.initializeMs === undefined ? undefined : figures.initializeMs < TARGETS.initializeMs)} |`);
  rows.push(`| bridge RSS < 150 MB in the 100 MiB slow-client turn | ${figures.rssBytes === undefined ? "n/a" : `${fmt(figures.rssBytes / 1e6, 0)} MB (${mib(figures.rssBytes)}), ${figures.memoryStop}`} | ${verdict(figures.rssBytes === undefined ? undefined : figures.rssBytes < TARGETS.rssBytes && figures.memoryStop === "end_turn")} |`);
  return [
    "## Reliability and performance — summary (`npm run bench`)",
    "",
    `Measured ${machine.date} in one run of \`npm run bench\` (${fmt(totalSeconds, 0)} s): ${describeMachine(machine)}.`,
    "The machine is shared with other work (builds and test runs of other engineers), so absolute times are noisy; ratios come from turns that alternate between the paths.",
    "",
    "| target (this round) | measured | |",
    "| --- | --- | --- |",
    ...rows,
    ...(notes.length > 0 ? ["", ...notes] : []),
  ].join("\n");
}
