/**
 * Fan-out benchmark (review 2026-12-07 #5, docs/zcode-host.md §16): on the V4 read path ZCode's
 * frame event is workspace-wide, so what the bridge reads per frame must not grow with the number
 * of sessions open in the workspace. For N = 1, 5, 20 sessions of one workspace on the simulated
 * 4.0.0: one of them streams `sim:bench n=<deltas> bytes=<bytes>`; the bytes the bridge process
 * read meanwhile (/proc/<pid>/io `rchar`: the channel, and the client's few lines) are divided by
 * the V4 frames the simulated host sent for that turn (its call log). Ratios are against N = 1 of
 * the same run.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BridgeClient } from "./lib/bridge-client.js";
import type { BenchInstall } from "./lib/bench-install.js";
import { fmt } from "./lib/stats.js";

export interface FanoutPlan {
  sessions: number[];
  deltas: number;
  bytes: number;
  /** deltas per second (spread over many 30 ms frames) */
  rate: number;
}

export interface FanoutRun {
  sessions: number;
  frames: number;
  readBytes: number;
  bytesPerFrame: number;
  ms: number;
}

async function rchar(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, "utf8");
  const match = /^rchar:\s*(\d+)$/m.exec(io);
  if (!match) throw new Error(`no rchar in /proc/${pid}/io`);
  return Number(match[1]);
}

/** the host's V4 frames of a session so far (its call log) */
async function framesOf(install: BenchInstall, sessionId: string): Promise<number> {
  const log = await install.sim.readCallLog();
  return log.filter((e) => e.kind === "v4-frame" && (e as { sessionId?: unknown }).sessionId === sessionId).length;
}

async function runOnce(install: BenchInstall, plan: FanoutPlan, sessions: number): Promise<FanoutRun> {
  const cwd = await mkdtemp(join(tmpdir(), "zcode-acp-bench-fanout-"));
  // the call log counts the frames (one line per logical frame, not per delta)
  const client = BridgeClient.start({ env: { ...install.env, ZCODE_SIM_CALL_LOG: install.sim.env.ZCODE_SIM_CALL_LOG } });
  try {
    await client.initialize();
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) ids.push(await client.newSession(cwd));
    const streaming = ids[0]!;
    await client.prompt(streaming, "warm up");
    const framesBefore = await framesOf(install, streaming);
    const before = await rchar(client.pid);
    const started = performance.now();
    await client.prompt(streaming, `sim:bench n=${plan.deltas} bytes=${plan.bytes} rate=${plan.rate}`);
    const ms = performance.now() - started;
    const readBytes = (await rchar(client.pid)) - before;
    const frames = (await framesOf(install, streaming)) - framesBefore;
    return { sessions, frames, readBytes, bytesPerFrame: readBytes / Math.max(1, frames), ms };
  } finally {
    await client.close();
  }
}

export async function runFanout(install: BenchInstall, plan: FanoutPlan): Promise<FanoutRun[]> {
  const runs: FanoutRun[] = [];
  for (const sessions of plan.sessions) runs.push(await runOnce(install, plan, sessions));
  return runs;
}

export function fanoutSection(plan: FanoutPlan, runs: FanoutRun[]): string {
  const base = runs[0]!;
  const ratio = (run: FanoutRun): number => run.bytesPerFrame / base.bytesPerFrame;
  const total = (run: FanoutRun): number => run.readBytes / base.readBytes;
  const last = runs.at(-1)!;
  return [
    "## V4 frames per workspace — bytes the bridge reads per frame against the sessions open (review 2026-12-07 #5)",
    "",
    `Simulated 4.0.0; N sessions opened in one workspace, one of them streams \`sim:bench n=${plan.deltas} bytes=${plan.bytes} rate=${plan.rate}\`. ` +
      "Bytes read = the bridge process's `rchar` (/proc/<pid>/io) over that prompt; frames = the V4 logical frames the simulated host " +
      `sent for it (its call log). Ratio against ${base.sessions} session(s) in the same run.`,
    "",
    "| sessions | frames | bytes read | ratio | bytes per frame | ratio per frame | prompt ms |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...runs.map(
      (run) =>
        `| ${run.sessions} | ${run.frames} | ${run.readBytes} | ${fmt(total(run), 2)} | ${fmt(run.bytesPerFrame, 0)} | ` +
        `${fmt(ratio(run), 2)} | ${fmt(run.ms, 0)} |`,
    ),
    "",
    `- **${last.sessions} sessions: ${fmt(total(last), 2)}× the bytes read for the same stream, ${fmt(ratio(last), 2)}× per frame** ` +
      `(goal ≈ 1: one frame listener per workspace, each frame read once): ${total(last) <= 1.25 ? "**met**" : "**missed**"}. ` +
      "The host batches deltas into frames every 30 ms, so the frame count of the same stream varies a little between runs: " +
      "the bytes read for the same stream are the steadier figure.",
    "- Before (c9a283b, a listener per session, measured the same way on this machine): 1 session 410,511 bytes, " +
      "5 sessions 2,032,887 (4.95×), 20 sessions 8,026,138 (19.6×).",
  ].join("\n");
}
