/** Markdown for bench/results.md: one body per section (the runner writes them between markers). */
import type { MachineInfo } from "./lib/machine.js";
import { describeMachine } from "./lib/machine.js";
import { distribution, fmt, median, mib } from "./lib/stats.js";
import type { MemoryResult } from "./memory.js";
import type { ProfileResult, StartupProfile } from "./profile.js";
import type { Timeline } from "./lib/log-timeline.js";
import { STARTUP_TARGETS, startupRatios, type StartupResult, type StartupRound } from "./startup.js";
import type { PathName, PathResult, StreamPlan } from "./stream.js";

export const TARGETS = { throughputRatio: 0.9, addedP99Ms: 2, rssBytes: 150e6, startup: STARTUP_TARGETS } as const;

export interface Figures {
  throughputRatio?: number;
  unmergedRatio?: number;
  addedP50Ms?: number;
  addedP99Ms?: number;
  /** the same with the line reader instead of the SDK client */
  linesAddedP99Ms?: number;
  initializeMs?: number;
  sessionNewMs?: number;
  /** medians of the paired start-up ratios (startup.ts) */
  initializeRatio?: number;
  sessionNewRatio?: number;
  checkRatio?: number;
  startupNode?: string;
  startupProfile?: StartupProfile;
  startupTimeline?: Timeline;
  /** medians of the baselines (ms) */
  bareInitializeMs?: number;
  minimalSessionNewMs?: number;
  rawP99Ms?: number;
  rssBytes?: number;
  memoryStop?: string;
}

const PATH_LABEL: Record<PathName, string> = {
  raw: "raw relay (HostConnection → reader)",
  bridge: "bridge (CLI → SDK client)",
  "bridge-lines": "bridge (CLI → line reader, no SDK)",
  "bridge-unmerged": "bridge, merging off (ZCODE_ACP_MERGE_DELTAS=0)",
  "bridge-v4read": "bridge reading V4 frames (simulated 4.0.0)",
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
    `\`sim:bench n=${plan.events} bytes=${plan.bytes}\`: ` +
      `${plan.events.toLocaleString("en")} text deltas of ${plan.bytes} bytes from the simulated host, as fast as it emits them. ` +
      `Raw relay = the same host and bootstrap launched by HostConnection, events straight to a reader (no validation, no translation, no ACP). ` +
      `Bridge = the built CLI over real pipes to the SDK client. Each path has its own connection; ` +
      `after a ${plan.warmupEvents}-event warm-up turn the paths take turns, ${plan.throughputRuns} throughput turns each. ` +
      "Time = prompt sent → last event received.",
    "",
  );
  lines.push("| path | turns (ms) | median events/s | ratio to raw | notifications per turn |", "| --- | --- | --- | --- | --- |");
  const raw = results.find((r) => r.path === "raw");
  for (const r of results) {
    const ratio = raw ? medianRate(r) / medianRate(raw) : Number.NaN;
    const chunks = r.throughput.map((t) => t.chunks).join(", ");
    lines.push(
      `| ${PATH_LABEL[r.path]} | ${r.throughput.map((t) => fmt(t.turnMs, 0)).join(", ")} | ${fmt(medianRate(r), 0)} | ${fmt(ratio * 100, 0)} % | ${chunks} |`,
    );
  }
  lines.push("");
  const withLatency = results.filter((r) => r.latency);
  if (withLatency.length > 0) {
    const first = withLatency[0]!.latency!;
    lines.push(
      `Latency: \`sim:bench n=${first.n / plan.latencyRounds} bytes=${first.bytes} rate=${first.rate}\` ` +
        `× ${plan.latencyRounds} rounds alternating between the paths (pooled) — ` +
        `an open schedule of ${first.rate.toLocaleString("en")} events/s; every delta carries its emit time ` +
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
    if (r && b)
      lines.push(
        `| **added: bridge + SDK client** (bridge − raw, per percentile) ` +
          `| | ${fmt(b.p50 - r.p50, 3)} | ${fmt(b.p90 - r.p90, 3)} | **${fmt(b.p99 - r.p99, 3)}** | |`,
      );
    if (r && l)
      lines.push(
        `| added: bridge alone (line reader − raw, per percentile) | | ${fmt(l.p50 - r.p50, 3)} | ${fmt(l.p90 - r.p90, 3)} | ${fmt(l.p99 - r.p99, 3)} | |`,
      );
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

function measureRow(label: string, first: number, values: number[]): string {
  return `| ${label} | ${fmt(first, 0)} | **${fmt(median(values), 0)}** | ${fmt(Math.min(...values), 0)} | ${fmt(Math.max(...values), 0)} |`;
}

function ratioRow(label: string, ratio: number, target: number, per: number[]): string {
  return (
    `| ${label} | **${fmt(ratio, 2)}** | ≤ ${fmt(target, 1)} ` +
    `| ${ratio <= target ? "**met**" : "**missed**"} | ${per.map((r) => fmt(r, 2)).join(", ")} |`
  );
}

export function startupSection(result: StartupResult, profile?: StartupProfile, timeline?: Timeline): string {
  const col = (f: (r: StartupRound) => number) => result.rounds.map(f);
  const ratios = startupRatios(result);
  const t = STARTUP_TARGETS;
  const lines = [
    `## Start-up (Node ${result.nodeVersion})`,
    "",
    `Node ${result.nodeVersion} (\`${result.node}\`) for the CLI and every baseline. ` +
      `${result.rounds.length} rounds after a first one; each round runs every measure once, one process at a time, ` +
      "so each ratio is paired within its round (median of the per-round ratios). " +
      "Times are from just before the spawn to the moment the benchmark's SDK client read the answer (or the process exited).",
    "",
    "- **bare initialize**: `node bench/lib/bare-initialize.mjs`, " +
      "a script without imports that answers `initialize` from its first line with an answer of the same size;",
    "- **minimal launch**: `node bench/lib/minimal-host.mjs`, which answers `initialize` from its first line, " +
      "starts the same simulated host with the same bootstrap and configuration when `session/new` arrives " +
      "(zcode-acp's launch policy: it may not start a host for a probe that only sends `initialize`), verifies nothing, " +
      "and answers `session/new` after `ready` and the host calls zcode-acp makes for a new session " +
      "(initialize, readWorkspaceState, createSession, subscribe); " +
      "**launch at spawn** is the same script starting the host before any message (a lower bound, no target);",
    '- **check**: `zcode-acp check` with the fingerprint cache filled by the first round, against `node -e ""` (spawn → exit).',
    "",
    "| measure | first round | median | min | max |",
    "| --- | --- | --- | --- | --- |",
    measureRow(
      "zcode-acp: spawn → initialize answered (ms)",
      result.first.initializeMs,
      col((r) => r.initializeMs),
    ),
    measureRow(
      "bare initialize: spawn → initialize answered (ms)",
      result.first.bareInitializeMs,
      col((r) => r.bareInitializeMs),
    ),
    measureRow(
      "zcode-acp: spawn → session/new answered (ms)",
      result.first.sessionNewMs,
      col((r) => r.sessionNewMs),
    ),
    measureRow(
      "minimal launch: spawn → session/new answered (ms)",
      result.first.minimalSessionNewMs,
      col((r) => r.minimalSessionNewMs),
    ),
    measureRow(
      "minimal launch at spawn: spawn → session/new answered (ms)",
      result.first.eagerSessionNewMs,
      col((r) => r.eagerSessionNewMs),
    ),
    measureRow(
      "zcode-acp check, cached: spawn → exit (ms)",
      result.first.checkMs,
      col((r) => r.checkMs),
    ),
    measureRow(
      "bare node: spawn → exit (ms)",
      result.first.bareNodeMs,
      col((r) => r.bareNodeMs),
    ),
    "",
    "| ratio | median | target | | per round |",
    "| --- | --- | --- | --- | --- |",
    ratioRow(
      "initialize: zcode-acp / bare initialize",
      ratios.initialize,
      t.initialize,
      col((r) => r.initializeMs / r.bareInitializeMs),
    ),
    ratioRow(
      "session/new: zcode-acp / minimal launch",
      ratios.sessionNew,
      t.sessionNew,
      col((r) => r.sessionNewMs / r.minimalSessionNewMs),
    ),
    ratioRow(
      "cached check: zcode-acp check / bare node",
      ratios.check,
      t.check,
      col((r) => r.checkMs / r.bareNodeMs),
    ),
    `| session/new: zcode-acp / minimal launch at spawn (no target) | ${fmt(ratios.sessionNewEager, 2)} | | | ${col(
      (r) => r.sessionNewMs / r.eagerSessionNewMs,
    )
      .map((r) => fmt(r, 2))
      .join(", ")} |`,
  ];
  if (profile) {
    lines.push(
      "",
      `CPU profile of one more start-up (node --cpu-prof, 200 µs interval; initialize answered after ${fmt(profile.initializeMs, 0)} ms, ` +
        `session/new after ${fmt(profile.sessionNewMs, 0)} ms), self time by area:`,
      "",
    );
    for (const w of profile.windows) {
      lines.push(
        `- ${w.label} (${fmt(w.ms, 0)} ms): ` +
          w.areas
            .filter((a) => a.ms >= 1)
            .map((a) => `${a.area} ${fmt(a.ms, 0)}`)
            .join(", ") +
          " (ms).",
      );
    }
  }
  if (timeline) {
    lines.push(
      "",
      `Timeline of one more start-up from the CLI's own debug log (ms after the spawn; ` +
        `initialize read by the client at ${fmt(timeline.initializeMs, 0)} ms, session/new at ${fmt(timeline.sessionNewMs, 0)} ms):`,
      "",
      timeline.entries.map((e) => `${e.ms} ${e.msg}`).join(" · "),
    );
  }
  return lines.join("\n");
}

export function memorySection(result: MemoryResult): string {
  const p = result.plan;
  return [
    "## Memory — 100 MiB turn, slow client",
    "",
    `\`sim:bench n=${p.events} bytes=${p.bytes} rate=${p.rate}\` (${mib(p.events * p.bytes)} of text at ${mib(p.rate * p.bytes)}/s) ` +
      `to an SDK client that stops reading stdout for ${p.slow.pauseMs} ms after every ${p.slow.readMs} ms. ` +
      "Peak RSS of the bridge process: VmHWM from /proc/<pid>/status (and the highest VmRSS sampled every 25 ms).",
    "",
    "| measure | value |",
    "| --- | --- |",
    `| outcome | ${result.stopReason}; ${result.events.toLocaleString("en")} events, ${mib(result.textBytes)} of text in order, ` +
      `in ${result.notifications.toLocaleString("en")} notifications, ${fmt(result.turnMs / 1000, 1)} s |`,
    `| bridge RSS before the turn | ${mib(result.baselineRssBytes)} |`,
    `| **bridge peak RSS (VmHWM)** | **${mib(result.bridgeHwmBytes)}** (${fmt(result.bridgeHwmBytes / 1e6, 0)} MB) |`,
    `| bridge highest sampled VmRSS | ${mib(result.bridgePeakRssBytes)} |`,
    `| host process highest sampled VmRSS (for comparison) | ${mib(result.hostPeakRssBytes)} |`,
  ].join("\n");
}

export function profileSection(profiles: ProfileResult[]): string {
  const lines = ["## Where the bridge spends its time (node --cpu-prof)", ""];
  for (const p of profiles) {
    lines.push(
      `**${p.label}** — busy ${fmt(p.busyMs, 0)} ms of ${fmt(p.totalMs, 0)} ms profiled ` +
        `(whole process: start-up, session/new, a warm-up turn and the measured turn). Top self time:`,
      "",
    );
    lines.push("| self ms | share of busy | function | where |", "| --- | --- | --- | --- |");
    for (const f of p.top)
      lines.push(`| ${fmt(f.selfMs, 0)} | ${fmt(f.share * 100, 1)} % | \`${f.name}\` | ${f.where ? `\`${f.where}\`` : ""} |`);
    lines.push("");
  }
  return lines.join("\n");
}

/** Each target: met (true), missed (false) or not measured (undefined); the summary and run.ts's count read this. */
export function targetVerdicts(figures: Figures) {
  const t = TARGETS.startup;
  const atMost = (v: number | undefined, target: number) => (v === undefined ? undefined : v <= target);
  return {
    throughput: figures.throughputRatio === undefined ? undefined : figures.throughputRatio >= TARGETS.throughputRatio,
    latency: figures.addedP99Ms === undefined ? undefined : figures.addedP99Ms < TARGETS.addedP99Ms,
    initialize: atMost(figures.initializeRatio, t.initialize),
    sessionNew: atMost(figures.sessionNewRatio, t.sessionNew),
    check: atMost(figures.checkRatio, t.check),
    memory: figures.rssBytes === undefined ? undefined : figures.rssBytes < TARGETS.rssBytes && figures.memoryStop === "end_turn",
  };
}

export function summarySection(machine: MachineInfo, figures: Figures, totalSeconds: number, notes: string[]): string {
  const verdict = (ok: boolean | undefined): string => (ok === undefined ? "not measured" : ok ? "**met**" : "**missed**");
  const verdicts = targetVerdicts(figures);
  const rows: string[] = [];
  rows.push(
    `| throughput ≥ ${TARGETS.throughputRatio * 100} % of the raw relay ` +
      `| ${figures.throughputRatio === undefined ? "n/a" : `${fmt(figures.throughputRatio * 100, 0)} %`} ` +
      `| ${verdict(verdicts.throughput)} |`,
  );
  const latency =
    figures.addedP99Ms === undefined
      ? "n/a"
      : `${fmt(figures.addedP99Ms, 3)} ms with the SDK client (p50 ${fmt(figures.addedP50Ms ?? Number.NaN, 3)} ms)` +
        `${figures.linesAddedP99Ms === undefined ? "" : `; the bridge alone (line reader): ${fmt(figures.linesAddedP99Ms, 3)} ms`}`;
  rows.push(`| p99 added latency < ${TARGETS.addedP99Ms} ms at 1,000 events/s | ${latency} ` + `| ${verdict(verdicts.latency)} |`);
  const t = TARGETS.startup;
  const ratioCell = (v: number | undefined) => (v === undefined ? "n/a" : `${fmt(v, 2)}×`);
  const on = figures.startupNode ? ` (Node ${figures.startupNode})` : "";
  rows.push(
    `| spawn → initialize ≤ ${t.initialize}× a bare Node script that answers it${on} ` +
      `| ${ratioCell(figures.initializeRatio)}${figures.initializeMs === undefined ? "" : ` (${fmt(figures.initializeMs, 0)} ms)`} ` +
      `| ${verdict(verdicts.initialize)} |`,
  );
  rows.push(
    `| spawn → session/new ≤ ${t.sessionNew}× a minimal launch of the same host${on} ` +
      `| ${ratioCell(figures.sessionNewRatio)}${figures.sessionNewMs === undefined ? "" : ` (${fmt(figures.sessionNewMs, 0)} ms)`} ` +
      `| ${verdict(verdicts.sessionNew)} |`,
  );
  rows.push(`| cached \`check\` ≤ ${t.check}× a bare Node start${on} | ${ratioCell(figures.checkRatio)} | ${verdict(verdicts.check)} |`);
  rows.push(
    `| bridge RSS < ${fmt(TARGETS.rssBytes / 1e6, 0)} MB in the 100 MiB slow-client turn ` +
      `| ${figures.rssBytes === undefined ? "n/a" : `${fmt(figures.rssBytes / 1e6, 0)} MB (${mib(figures.rssBytes)}), ${figures.memoryStop}`} ` +
      `| ${verdict(verdicts.memory)} |`,
  );
  return [
    "## Reliability and performance — summary (`npm run bench`)",
    "",
    `Measured ${machine.date} in one run of \`npm run bench\` (${fmt(totalSeconds, 0)} s): ${describeMachine(machine)}.`,
    "The machine is shared with other work (builds and test runs of other engineers), " +
      "so absolute times are noisy; ratios come from turns that alternate between the paths.",
    "",
    "| target (this round) | measured | |",
    "| --- | --- | --- |",
    ...rows,
    ...(notes.length > 0 ? ["", ...notes] : []),
  ].join("\n");
}
