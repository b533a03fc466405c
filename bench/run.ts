/**
 * `npm run bench`: the streaming, start-up and memory benchmarks in one run against a
 * fresh simulated install, plus a CPU profile of the bridge; results go to bench/results.md in
 * this runner's own sections (summary, stream, startup, memory, profile). The `check` section
 * belongs to bench/check.ts and is left as it is.
 *
 *   npm run bench                         everything (≈ 2 minutes on 2 cores)
 *   npx tsx bench/run.ts --only stream    some parts: stream, turns, startup, memory, profile
 *   npx tsx bench/run.ts --no-write       print only
 *   npx tsx bench/run.ts --only startup --node /path/to/node22   start-up with another Node
 *   npx tsx bench/run.ts --only npx       `npx zcode-acp` vs a global install of the packed tarball (not in the default run)
 *   npx tsx bench/run.ts --only history   turn time and bridge RSS against a 30 × 3 MB history (not in the default run)
 *   npx tsx bench/run.ts --only fanout    V4: bytes the bridge reads per frame with 1, 5, 20 sessions of one workspace (not in the default run)
 */
import { fileURLToPath } from "node:url";
import { createBenchInstall } from "./lib/bench-install.js";
import { machineInfo } from "./lib/machine.js";
import { writeSection } from "./lib/results-file.js";
import { median } from "./lib/stats.js";
import { runMemory, type MemoryPlan } from "./memory.js";
import { profileBridge, profileStartup, type ProfileResult } from "./profile.js";
import {
  memorySection,
  profileSection,
  startupSection,
  streamFigures,
  streamSection,
  summarySection,
  targetVerdicts,
  type Figures,
} from "./report.js";
import { startupTimeline } from "./lib/log-timeline.js";
import { npxSection, runNpx } from "./npx.js";
import { runStartup, startupRatios } from "./startup.js";
import { runStream, type StreamPlan } from "./stream.js";
import { explain } from "./notes.js";
import { historySection, runHistory, type HistoryPlan } from "./history.js";
import { fanoutSection, runFanout, type FanoutPlan } from "./fanout.js";
import { runTurns, turnsSection, type TurnsPlan } from "./turns.js";

const RESULTS = fileURLToPath(new URL("./results.md", import.meta.url));
const args = process.argv.slice(2);
const onlyArg = args.indexOf("--only");
const parts = new Set(onlyArg >= 0 ? (args[onlyArg + 1] ?? "").split(",") : ["stream", "turns", "startup", "memory", "profile"]);
const write = !args.includes("--no-write");

const STREAM: StreamPlan = {
  events: 20_000,
  bytes: 64,
  throughputRuns: 3,
  warmupEvents: 2_000,
  latencyEvents: 8_000,
  latencyRounds: 4,
  rate: 1_000,
  latencyPaths: ["raw", "bridge", "bridge-lines", "bridge-v4read"],
};
const MEMORY: MemoryPlan = { events: 25_600, bytes: 4_096, rate: 2_560, slow: { readMs: 100, pauseMs: 100 } };
const STARTUP_ROUNDS = 9;
const TURNS: TurnsPlan = { turns: 60, events: 20, depth: 3, rounds: 20 };
const HISTORY: HistoryPlan = { turns: 30, mb: 3, smallMb: 0.01, window: 5 };
const FANOUT: FanoutPlan = { sessions: [1, 5, 20], deltas: 3_000, bytes: 64, rate: 2_000 };
const nodeArg = args.indexOf("--node");
/** another node binary for the start-up part (the CLI and its baselines), e.g. a Node 22 or 24 */
const node = nodeArg >= 0 ? args[nodeArg + 1] : undefined;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const started = performance.now();
  const install = await createBenchInstall();
  const figures: Figures = {};
  const sections: Array<[string, string]> = [];
  const profiles: ProfileResult[] = [];
  try {
    if (parts.has("stream")) {
      log("streaming: raw relay, bridge, bridge without merging, bridge reading V4 frames");
      const v4Install = await createBenchInstall("4.0.0");
      const results = await runStream(
        install,
        ["raw", "bridge", "bridge-lines", "bridge-unmerged", "bridge-v4read"],
        STREAM,
        v4Install,
      ).finally(() => v4Install.cleanup());
      streamFigures(results, figures);
      sections.push(["stream", streamSection(results, STREAM, figures)]);
    }
    if (parts.has("turns")) {
      log(`short turns: ${TURNS.turns} one at a time per path, ${TURNS.rounds} × ${TURNS.depth} queued`);
      sections.push(["turns", turnsSection(TURNS, await runTurns(install, TURNS))]);
    }
    if (parts.has("startup")) {
      log("start-up");
      const result = await runStartup(install, { rounds: STARTUP_ROUNDS, ...(node ? { node } : {}) });
      const ratios = startupRatios(result);
      figures.initializeMs = median(result.rounds.map((r) => r.initializeMs));
      figures.sessionNewMs = median(result.rounds.map((r) => r.sessionNewMs));
      figures.initializeRatio = ratios.initialize;
      figures.sessionNewRatio = ratios.sessionNew;
      figures.checkRatio = ratios.check;
      figures.startupNode = result.nodeVersion;
      const profile = await profileStartup(install.env, node);
      figures.startupProfile = profile;
      const timeline = await startupTimeline(install.env, node);
      figures.startupTimeline = timeline;
      figures.bareInitializeMs = median(result.rounds.map((r) => r.bareInitializeMs));
      figures.minimalSessionNewMs = median(result.rounds.map((r) => r.minimalSessionNewMs));
      // another Node gets a section of its own (e.g. startup-node22) and leaves the summary alone
      const name = node ? `startup-node${result.nodeVersion.replace(/^v(\d+).*$/, "$1")}` : "startup";
      sections.push([name, startupSection(result, profile, timeline) + (node ? `\n\n${explain(figures, []).join("\n")}` : "")]);
    }
    if (parts.has("npx")) {
      log("npx vs a global install (npm pack, temp prefixes)");
      sections.push(["npx", npxSection(await runNpx(install, 7))]);
    }
    if (parts.has("history")) {
      log(`history: ${HISTORY.turns} turns × ${HISTORY.mb} MB, then a load; the same with ${HISTORY.smallMb} MB`);
      sections.push(["history", historySection(await runHistory(install, HISTORY))]);
    }
    if (parts.has("fanout")) {
      log(`fanout: ${FANOUT.sessions.join(", ")} sessions of one workspace on the simulated 4.0.0`);
      const v4Install = await createBenchInstall("4.0.0");
      const runs = await runFanout(v4Install, FANOUT).finally(() => v4Install.cleanup());
      sections.push(["fanout", fanoutSection(FANOUT, runs)]);
    }
    if (parts.has("memory")) {
      log("memory: 100 MiB turn, slow client");
      const result = await runMemory(install, MEMORY);
      figures.rssBytes = result.bridgeHwmBytes;
      figures.memoryStop = result.stopReason;
      sections.push(["memory", memorySection(result)]);
    }
    if (parts.has("profile")) {
      log("CPU profiles of the bridge");
      profiles.push(await profileBridge(install, "bridge, 20,000 × 64 B", install.env, STREAM.events, STREAM.bytes));
      profiles.push(
        await profileBridge(
          install,
          "bridge with merging off, 20,000 × 64 B",
          { ...install.env, ZCODE_ACP_MERGE_DELTAS: "0" },
          STREAM.events,
          STREAM.bytes,
        ),
      );
      sections.push(["profile", profileSection(profiles)]);
    }
  } finally {
    await install.cleanup();
  }
  const seconds = (performance.now() - started) / 1000;
  // the summary belongs to the default run; --only runs print it but leave the file's one alone
  const summary: [string, string] = ["summary", summarySection(machine, figures, seconds, explain(figures, profiles))];
  if (onlyArg < 0) sections.unshift(summary);
  else process.stdout.write(`\n${summary[1]}\n`);
  for (const [name, body] of sections) {
    process.stdout.write(`\n${body}\n`);
    if (write) await writeSection(RESULTS, name, body);
  }
  log(`done in ${seconds.toFixed(0)} s${write ? `; ${RESULTS} updated` : ""}`);
  const missed = Object.values(targetVerdicts(figures)).filter((ok) => ok === false).length;
  if (missed > 0) log(`${missed} target(s) missed: see the summary`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
