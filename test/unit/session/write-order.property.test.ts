/**
 * The session's write order under every interleaving (adr/0036), per simulated release
 * (./turns-model.ts `RELEASES`: the input call, whether ZCode queues or refuses a busy send, acks,
 * whether a failed turn holds the queue, whether the read path reports a hold, steering): random
 * sequences of prompts, steering texts, session/cancel, `$/cancel_request` of one prompt, lost
 * acks, failed removals, steering texts that fail before their send, ZCode's own turns and failed
 * turns, its desktop resuming a held queue, host exits and the order in which ZCode's acks, events
 * and usage reads arrive. Asserted:
 *  - every prompt is answered exactly once;
 *  - every update of a prompt's turn is written before its answer, and after the answer of every
 *    prompt whose turn ZCode started before it (no update lands under the wrong prompt);
 *  - no prompt answered `cancelled` (or QUEUE_HELD: "taken out, not run") is ever started by ZCode
 *    after that answer;
 *  - every steering request is answered, and nothing of ours is left waiting at the end.
 *
 * CI runs a fixed seed and a small count per release; `npm run test:property -- --runs 1000` (or
 * ZCODE_ACP_PROPERTY_RUNS / ZCODE_ACP_PROPERTY_SEED) runs more, per release.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RELEASES, settle, TurnsModel, type ReleaseBehaviour } from "./turns-model.js";

const RUNS = Number(process.env.ZCODE_ACP_PROPERTY_RUNS ?? 100);
const SEED = Number(process.env.ZCODE_ACP_PROPERTY_SEED ?? 20261207);
const GRACE_MS = 60_000;

type Step =
  | "prompt"
  | "steer"
  | "steerPromptRequired"
  | "cancel"
  | "cancelRequest"
  | "loseAck"
  | "failRemovals"
  | "removalsWork"
  | "failBeforeSend"
  | "own"
  | "fail"
  | "resume"
  | "slowReleases"
  | "release"
  | "chunk"
  | "end"
  | "drain"
  | "ack"
  | "usage"
  | "deliver"
  | "exit";

const step: fc.Arbitrary<{ step: Step; pick: number }> = fc.record({
  step: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Step>("prompt") },
    { weight: 1, arbitrary: fc.constantFrom<Step>("steer", "steerPromptRequired", "failBeforeSend") },
    { weight: 2, arbitrary: fc.constantFrom<Step>("cancel", "cancelRequest") },
    { weight: 1, arbitrary: fc.constantFrom<Step>("loseAck", "failRemovals", "removalsWork", "own", "exit") },
    { weight: 2, arbitrary: fc.constantFrom<Step>("fail", "fail", "resume", "slowReleases") },
    { weight: 10, arbitrary: fc.constantFrom<Step>("chunk", "end", "drain", "ack", "usage", "deliver", "deliver", "ack", "release") },
  ),
  pick: fc.nat(20),
});

async function play(model: TurnsModel, steps: ReadonlyArray<{ step: Step; pick: number }>): Promise<void> {
  const prompts: string[] = [];
  for (const { step, pick } of steps) {
    switch (step) {
      case "prompt":
        prompts.push(model.prompt());
        break;
      case "steer":
        model.steer("startNewTurn");
        break;
      case "steerPromptRequired":
        model.steer("promptRequired");
        break;
      case "cancel":
        model.turns.cancel();
        break;
      case "cancelRequest": {
        const open = prompts.filter((label) => !model.answers.has(label));
        if (open.length > 0) model.controls.get(open[pick % open.length]!)?.cancel();
        break;
      }
      case "loseAck":
        // the legacy line's lost ack is followed by the engine's resync, which waits for ZCode's idle
        // and drops the stopped turn's events (session-engine.ts `resync`); the model has no engine
        model.loseNextAck = model.line === "v4";
        break;
      case "failRemovals":
        model.failRemovals = true;
        break;
      case "removalsWork":
        model.failRemovals = false;
        break;
      case "failBeforeSend":
        model.failNextBeforeSend = true;
        model.steer("startNewTurn");
        break;
      case "own":
        model.own();
        break;
      case "fail":
        model.fail();
        break;
      case "resume":
        // ZCode's desktop resumes its held queue (its queue panel); a legacy release has no V4 queue
        if (model.line === "v4") model.resume();
        break;
      case "slowReleases":
        // ZCode answers our releases of its held queue late (a send waits on one)
        model.pauseReleases = !model.pauseReleases;
        break;
      case "exit":
        model.exit();
        break;
      default:
        model[step]();
    }
    await settle(1);
  }
  // everything ZCode owes arrives; the graces run out; again
  model.failRemovals = false;
  model.pauseReleases = false;
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 2000 && !model.quiet; i++) {
      if (model.releases.length > 0) model.release();
      else if (model.outbox.length > 0) model.deliver();
      else if (model.acks.length > 0) model.ack();
      else if (model.usageReads.length > 0) model.usage();
      else model.end();
      await settle(2);
    }
    await settle(4);
    vi.advanceTimersByTime(GRACE_MS * 11);
    await settle(4);
  }
}

function check(model: TurnsModel): void {
  const prompts = [...model.controls.keys()];
  // every prompt answered exactly once
  for (const label of prompts) {
    const answer = model.answers.get(label);
    expect(answer, `${label} answered`).toBeDefined();
    expect(answer!.count, `${label} answered once`).toBe(1);
    expect(model.wire.filter((entry) => entry.kind === "answer" && entry.label === label)).toHaveLength(1);
  }
  // every steering request answered
  for (const label of model.steered) expect(model.steerings.has(label), `${label} answered`).toBe(true);
  // nothing of ours left waiting
  expect(model.turns.busy, "the session is idle at the end").toBe(false);
  const startOf = new Map<string, number>();
  for (const start of model.starts) if (!startOf.has(start.label)) startOf.set(start.label, start.seq);
  for (const entry of model.wire) {
    if (entry.kind !== "update" || !entry.label.startsWith("p")) continue;
    const own = model.answers.get(entry.label);
    // its updates before its answer
    expect(entry.seq, `${entry.label} ${entry.what} before its answer`).toBeLessThan(own?.seq ?? Infinity);
    // and after the answers of the prompts ZCode started before it
    const started = startOf.get(entry.label);
    if (started === undefined) continue;
    for (const [label, seq] of startOf) {
      if (label === entry.label || !label.startsWith("p") || seq > started) continue;
      expect(model.answers.get(label)!.seq, `${label}'s answer before ${entry.label}'s ${entry.what}`).toBeLessThan(entry.seq);
    }
  }
  // nothing answered cancelled (or taken out of a held queue) is started afterwards
  for (const [label, answer] of model.answers) {
    if (answer.outcome !== "cancelled" && answer.outcome !== "error QUEUE_HELD") continue;
    const late = model.starts.find((start) => start.label === label && start.seq > answer.seq);
    expect(late, `${label} started after it was answered cancelled`).toBeUndefined();
  }
}

describe.each<ReleaseBehaviour>(RELEASES)("the session's write order (simulated $release: $input input)", (release) => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("answers every prompt once, writes each turn's updates between its prompt and its answer, never runs what it answered cancelled", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), fc.boolean(), async (steps, slowReleases) => {
        const model = new TurnsModel(release, GRACE_MS);
        // ZCode answers our releases of its held queue late from the start (a send waits on one)
        model.pauseReleases = slowReleases;
        await play(model, steps);
        check(model);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 120_000);
});
