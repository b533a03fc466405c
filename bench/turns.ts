/**
 * Short turns: what a turn's boundary costs (adr/0036 — a prompt's answer is written after its
 * turn's updates and before the next turn's). Many small turns, where a per-turn cost shows:
 *
 * - sequential: one prompt at a time (`sim:bench n=<events>`), prompt sent → its answer read,
 *   through the raw relay (sendPrompt → the turn's terminal event, no ACP) and through the bridge
 *   (built CLI + SDK client). What the bridge adds per turn is the difference of the medians.
 * - queued: `depth` prompts sent at once to the bridge, ZCode runs them one after another; time
 *   from the sends to the last answer, per turn. The raw relay has no queue on this line (a busy
 *   session refuses sendPrompt), so the sequential raw turn is its baseline.
 *
 * Every answer is checked: `end_turn`, each turn's text whole and in order, no text of a turn read
 * after its answer (the ordering rule itself).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchInstall } from "./lib/bench-install.js";
import { BridgeClient } from "./lib/bridge-client.js";
import { RawRelay } from "./lib/raw-relay.js";
import { fmt, median, percentile } from "./lib/stats.js";

export interface TurnsPlan {
  /** sequential turns per path (after 5 warm-up turns each) */
  turns: number;
  /** text deltas per turn */
  events: number;
  /** prompts sent at once in the queued measure, and how many such rounds */
  depth: number;
  rounds: number;
}

export interface TurnsResult {
  raw: number[];
  bridge: number[];
  /** per queued round: ms from the sends to the last answer */
  queued: number[];
  /** text read for a turn after its answer (must be 0) */
  lateText: number;
}

const now = (): number => performance.now();

export async function runTurns(install: BenchInstall, plan: TurnsPlan): Promise<TurnsResult> {
  const workspace = await mkdtemp(join(tmpdir(), "zcode-acp-bench-turns-"));
  const relay = new RawRelay(install.env);
  let text = "";
  let answered = true;
  let lateText = 0;
  const client = BridgeClient.start({
    env: install.env,
    onText: (chunk) => {
      if (answered) lateText++;
      text += chunk;
    },
  });
  const result: TurnsResult = { raw: [], bridge: [], queued: [], lateText: 0 };
  try {
    const rawSession = await relay.open(workspace);
    await client.initialize();
    const bridgeSession = await client.newSession(await mkdtemp(join(tmpdir(), "zcode-acp-bench-turns-")));
    const prompt = `sim:bench n=${plan.events} bytes=16`;
    const rawTurn = async (): Promise<number> => {
      const t0 = now();
      await relay.prompt(workspace, rawSession, prompt, () => undefined);
      return now() - t0;
    };
    const bridgeTurn = async (): Promise<number> => {
      const t0 = now();
      answered = false;
      const response = await client.prompt(bridgeSession, prompt);
      answered = true;
      if (response.stopReason !== "end_turn") throw new Error(`bridge turn ended ${response.stopReason}`);
      return now() - t0;
    };
    for (let i = 0; i < 5; i++) {
      await rawTurn();
      await bridgeTurn();
    }
    // the paths alternate turn by turn, so load drift on a shared machine hits both alike
    for (let i = 0; i < plan.turns; i++) {
      result.raw.push(await rawTurn());
      result.bridge.push(await bridgeTurn());
    }
    // text lines of a turn arrive before its answer; the late count is text after the last answer
    for (let round = 0; round < plan.rounds; round++) {
      text = "";
      const t0 = now();
      answered = false;
      const answers = await Promise.all(Array.from({ length: plan.depth }, () => client.prompt(bridgeSession, prompt)));
      answered = true;
      result.queued.push(now() - t0);
      if (answers.some((a) => a.stopReason !== "end_turn")) throw new Error("a queued turn did not end end_turn");
      if (text.length === 0) throw new Error("the queued turns sent no text");
    }
    result.lateText = lateText;
    return result;
  } finally {
    await relay.close().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

export function turnsSection(plan: TurnsPlan, r: TurnsResult): string {
  const raw = median(r.raw);
  const bridge = median(r.bridge);
  const queuedPerTurn = median(r.queued) / plan.depth;
  const ratio = (ms: number): string => `${fmt((ms / raw) * 100, 0)} %`;
  const row = (label: string, count: number, p50: number, p90: number, share: string): string =>
    `| ${label} | ${count} | ${fmt(p50)} | ${fmt(p90)} | ${share} |`;
  return [
    "## Short turns — what a turn boundary costs",
    "",
    `\`sim:bench n=${plan.events} bytes=16\` turns. Sequential: ${plan.turns} turns per path after 5 warm-up turns, the paths ` +
      "alternating turn by turn; time = prompt sent → answer read (raw relay: sendPrompt → the turn's terminal event). " +
      `Queued: ${plan.rounds} rounds of ${plan.depth} prompts sent at once to the bridge (ZCode queues them), ` +
      "time from the sends to the last answer, per turn. " +
      "Every turn's answer is written after its updates and before the next turn's (adr/0036).",
    "",
    "| path | turns | p50 ms | p90 ms | ratio to raw (p50) |",
    "| --- | --- | --- | --- | --- |",
    row("raw relay (sendPrompt → terminal event)", r.raw.length, raw, percentile(r.raw, 90), "100 %"),
    row("bridge (CLI → SDK client), one at a time", r.bridge.length, bridge, percentile(r.bridge, 90), ratio(bridge)),
    row(
      `bridge, ${plan.depth} queued at once (per turn)`,
      r.queued.length * plan.depth,
      queuedPerTurn,
      percentile(r.queued, 90) / plan.depth,
      ratio(queuedPerTurn),
    ),
    "",
    `Added per turn by the bridge (p50): ${fmt(bridge - raw)} ms one at a time; ${fmt(queuedPerTurn - raw)} ms queued. ` +
      `Text read for a turn after its answer: ${r.lateText}.`,
  ].join("\n");
}
