/**
 * The session's write order (adr/0036) end to end, per simulated release: a seeded handful of
 * random interleavings of prompts, steering (where the install takes V4 input), `session/cancel`,
 * `$/cancel_request` of one prompt and ZCode's own failed turns (`sim:turn-failed`; from 3.14 on
 * ZCode holds what waits behind it, adr/0038, bounded here by a short `heldQueue`), driven through
 * the built CLI against one simulated install (one host start, one session reused until a failed
 * turn may have left ZCode's queue held). The model-based twin with many more interleavings is
 * test/unit/session/write-order.property.test.ts. Checked from the client's transcript and the
 * simulator's call log:
 *  - every request (prompts, steering) is answered exactly once;
 *  - every update of a turn is written after its prompt's request and before its answer, and
 *    after the answers of the prompts whose turns ZCode started before it (`input-started` order);
 *  - no prompt answered `cancelled` (or QUEUE_HELD: taken out, not run) is started by ZCode after
 *    that answer reached the client (the call log's `input-started` time against the answer's).
 *
 * Each turn's text says whose it is: plain prompts run `sim:plain chunks=1` (one chunk "You said:
 * <token>"), the round's first prompt is a slow turn (`stream-until-cancel`: "tick N", or
 * `steerable`: "Working on it…" / "Steered by: …" / "Nobody steered me."), a failing one says
 * "Trying the model". `ZCODE_ACP_WRITE_ORDER_SEED` / `_ROUNDS` play other interleavings; `ZCODE_ACP_WRITE_ORDER_DUMP=<dir>` writes
 * the transcript and the call log there.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import type { TranscriptLine } from "../../support/acp-transcript.js";

const t = e2e();
const RELEASE = process.env.ZCODE_ACP_SIM_RELEASE ?? "3.11.2";
const SEED = Number(process.env.ZCODE_ACP_WRITE_ORDER_SEED ?? 20261207);
const ROUNDS = Number(process.env.ZCODE_ACP_WRITE_ORDER_ROUNDS ?? 6);
/** the bound of a queue ZCode holds (adr/0038): short, so that a held round ends in about a second */
const HELD_QUEUE_MS = 1200;
/** every round's requests are answered within this (a bound, not a pace) */
const ROUND_MS = 20_000;

/** mulberry32: a small seeded generator, so a failing interleaving can be played again */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Action = "prompt" | "failing" | "steer" | "cancelRequest" | "cancel";

interface Sent {
  token: string;
  kind: "slow" | "plain" | "failing" | "steer";
  round: number;
  sessionId: string;
  controller: AbortController;
  settled: Promise<unknown>;
}

const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error as Error)),
    );
  });

describe("e2e: the session's write order under seeded random interleavings (adr/0036)", () => {
  it(
    `${ROUNDS} rounds (seed ${SEED}): answered once, each turn's updates inside its prompt's answer window, nothing cancelled runs`,
    { timeout: 120_000 },
    async () => {
      const v4Input = t.sim().manifest.protocol.allowlist.agent.includes("sendConversationCommandV4");
      const holdsAfterFailure = ["3.14.4", "4.0.0"].includes(RELEASE);
      const client = await t.start({ env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ heldQueue: HELD_QUEUE_MS }) } });
      await client.initialize();
      const ws = await t.workspace();
      const next = random(SEED);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
      const sent: Sent[] = [];
      const plays: string[] = [];
      let sessionId = (await client.newSession(ws)).sessionId;
      let fresh = false;

      for (let round = 1; round <= ROUNDS; round++) {
        if (fresh) sessionId = (await client.newSession(ws)).sessionId;
        fresh = false;
        const play: string[] = [];
        const send = (kind: Sent["kind"], text: string, token: string): Sent => {
          const controller = new AbortController();
          const method = kind === "steer" ? "_session/steering" : "session/prompt";
          const params =
            kind === "steer"
              ? { sessionId, prompt: [{ type: "text", text }], _meta: { steering: { idleBehavior: "promptRequired" } } }
              : { sessionId, prompt: [{ type: "text", text }] };
          const answered = client.agent.request(method as never, params as never, { cancellationSignal: controller.signal });
          const entry: Sent = {
            token,
            kind,
            round,
            sessionId,
            controller,
            settled: answered.then(
              () => undefined,
              () => undefined,
            ),
          };
          sent.push(entry);
          play.push(`${kind}:${token}`);
          return entry;
        };
        // the round's first prompt: a slow turn, so that what follows queues behind it
        const steerable = v4Input && next() < 0.5;
        const slowToken = `r${round}-p0`;
        const slow = send(
          "slow",
          steerable ? `sim:steerable wait=1500 ${slowToken}` : `sim:stream-until-cancel interval=20 max=25 ${slowToken}`,
          slowToken,
        );
        await client.waitForLine((line) => isChunkOf(line, slow.sessionId) && afterRequest(client, line, slowToken));
        let steered = false;
        const actions = 2 + Math.floor(next() * 3);
        for (let k = 1; k <= actions; k++) {
          const choices: Action[] = ["prompt", "prompt", "cancelRequest", "cancel"];
          // one failing turn a round at most (its text does not say which prompt it is)
          if (!sent.some((s) => s.round === round && s.kind === "failing")) choices.push("failing");
          if (steerable && !steered) choices.push("steer", "steer");
          // every third round has ZCode fail a turn, first, so that what follows waits behind it
          const action = round % 3 === 0 && k === 1 ? "failing" : pick(choices);
          const token = `r${round}-p${k}`;
          if (action === "prompt") send("plain", `sim:plain chunks=1 ${token}`, token);
          else if (action === "failing") {
            send("failing", `sim:turn-failed ${token}`, token);
            if (holdsAfterFailure) fresh = true; // ZCode may hold its queue for good: the next round starts a new session
          } else if (action === "steer") {
            steered = true;
            send("steer", `r${round}-s${k}`, `r${round}-s${k}`);
          } else if (action === "cancel") {
            play.push("cancel");
            await client.cancel(sessionId);
          } else {
            const open = sent.filter((s) => s.round === round && s.kind !== "steer" && s.kind !== "slow");
            if (open.length === 0) continue;
            const target = pick(open);
            play.push(`cancelRequest:${target.token}`);
            target.controller.abort();
          }
        }
        plays.push(`round ${round} (${sessionId.slice(0, 8)}): ${play.join(" ")}`);
        await within(
          Promise.all(sent.filter((s) => s.round === round).map((s) => s.settled)),
          ROUND_MS,
          `round ${round}'s answers (${play.join(" ")})`,
        );
      }
      const log = await t.sim().readCallLog();
      const dump = process.env.ZCODE_ACP_WRITE_ORDER_DUMP;
      if (dump) {
        // a directory to read the interleaving in: the client's transcript and the simulator's call log
        const { writeFileSync } = await import("node:fs");
        writeFileSync(
          `${dump}/transcript.jsonl`,
          client.transcript.lines.map((l) => JSON.stringify({ from: l.from, at: l.at, m: l.message })).join("\n"),
        );
        writeFileSync(`${dump}/call-log.jsonl`, log.map((l) => JSON.stringify(l)).join("\n"));
        console.log(`release ${RELEASE}, seed ${SEED}:\n${plays.join("\n")}\n${outcomes(client)}`);
      }
      try {
        check(client, sent, log);
        client.expectValid();
      } catch (error) {
        console.error(`release ${RELEASE}, seed ${SEED}:\n${plays.join("\n")}\n${outcomes(client)}`);
        throw error;
      }
    },
  );
});

function isChunkOf(line: TranscriptLine, sessionId: string): boolean {
  const m = line.message;
  return (
    line.from === "agent" &&
    m?.method === "session/update" &&
    m.params?.sessionId === sessionId &&
    m.params.update?.sessionUpdate === "agent_message_chunk"
  );
}

function afterRequest(client: AcpTestClient, line: TranscriptLine, token: string): boolean {
  const lines = client.transcript.lines;
  const request = lines.findIndex((l) => l.from === "client" && promptText(l)?.endsWith(token));
  return request >= 0 && lines.indexOf(line) > request;
}

function promptText(line: TranscriptLine): string | undefined {
  const m = line.message;
  if (!m || !("id" in m) || (m.method !== "session/prompt" && m.method !== "_session/steering")) return undefined;
  return m.params?.prompt?.[0]?.text;
}

/** the three properties, from the transcript and the call log */
function check(client: AcpTestClient, sent: readonly Sent[], log: ReadonlyArray<Record<string, unknown>>): void {
  const lines = client.transcript.lines;
  // 1. every request answered exactly once
  const requests = new Map<string, { line: number; token: string | undefined }>();
  lines.forEach((line, index) => {
    const m = line.message;
    if (line.from === "client" && m && "id" in m && typeof m.method === "string") {
      const text = promptText(line);
      requests.set(JSON.stringify(m.id), { line: index, token: text?.split(" ").at(-1) });
    }
  });
  const answers = new Map<string, number[]>();
  lines.forEach((line, index) => {
    const m = line.message;
    if (line.from === "agent" && m && "id" in m && !("method" in m))
      answers.set(JSON.stringify(m.id), [...(answers.get(JSON.stringify(m.id)) ?? []), index]);
  });
  const byToken = new Map<string, { request: number; answer: number; outcome: string; at: number }>();
  for (const [id, request] of requests) {
    const at = answers.get(id) ?? [];
    expect(at, `request ${id} (${request.token ?? lines[request.line]!.message.method}) answered exactly once`).toHaveLength(1);
    if (request.token === undefined) continue;
    const answer = lines[at[0]!]!.message;
    const outcome = answer.result?.stopReason ?? answer.result?.outcome ?? `error ${answer.error?.data?.code ?? answer.error?.code}`;
    byToken.set(request.token, { request: request.line, answer: at[0]!, outcome, at: lines[at[0]!]!.at });
  }
  expect(byToken.size).toBe(sent.length);

  // ZCode's turn order per session (the call log's input-started lines), as tokens
  const started = log
    .filter((e) => e.kind === "input-started")
    .map((e) => ({ sessionId: String(e.sessionId), token: String(e.text).split(" ").at(-1)!, t: Number(e.t) }));
  const startOf = (token: string) => started.findIndex((s) => s.token === token);

  // 2. every update of a turn between its prompt's request and answer, after the answers of the turns started before it
  lines.forEach((line, index) => {
    const m = line.message;
    if (line.from !== "agent" || m?.method !== "session/update" || m.params.update.sessionUpdate !== "agent_message_chunk") return;
    const text: string = m.params.update.content?.text ?? "";
    const owner = ownerOf(text, index, sent, byToken);
    if (owner === undefined) return;
    const own = byToken.get(owner.token)!;
    expect(index, `"${text}" (${owner.token}) after its request`).toBeGreaterThan(own.request);
    expect(index, `"${text}" (${owner.token}) before its answer`).toBeLessThan(own.answer);
    const mine = startOf(owner.token);
    for (const before of started.slice(0, Math.max(0, mine))) {
      if (before.sessionId !== owner.sessionId || !byToken.has(before.token)) continue;
      expect(byToken.get(before.token)!.answer, `${before.token}'s answer before "${text}" of ${owner.token}`).toBeLessThan(index);
    }
  });

  // (the attribution works: every plain prompt that ran to its end said its token, inside its window)
  for (const entry of sent) {
    if (entry.kind !== "plain" || byToken.get(entry.token)!.outcome !== "end_turn") continue;
    const said = lines.findIndex(
      (l) => isChunkOf(l, entry.sessionId) && l.message.params.update.content?.text === `You said: ${entry.token}`,
    );
    expect(said, `${entry.token}'s own text`).toBeGreaterThan(-1);
  }

  // 3. nothing answered cancelled (or taken out of a held queue) started after that answer
  for (const [token, answer] of byToken) {
    if (answer.outcome !== "cancelled" && answer.outcome !== "error QUEUE_HELD") continue;
    const late = started.find((s) => s.token === token && s.t > answer.at);
    expect(late, `${token}, answered ${answer.outcome}, started afterwards`).toBeUndefined();
  }
}

/** whose turn a chunk's text is: its own token, or the round's slow or failing prompt (the text says which) */
function ownerOf(
  text: string,
  index: number,
  sent: readonly Sent[],
  byToken: ReadonlyMap<string, { request: number; answer: number }>,
): Sent | undefined {
  const said = /You said: (r\d+-p\d+)/.exec(text);
  if (said) return sent.find((s) => s.token === said[1]);
  // the round whose first request came last before this line
  const round = [...sent].reverse().find((s) => s.kind === "slow" && byToken.get(s.token)!.request < index)?.round;
  if (round === undefined) return undefined;
  const ofRound = sent.filter((s) => s.round === round);
  if (/tick \d+|Working on it|Steered by|Nobody steered|steer me/.test(text)) return ofRound.find((s) => s.kind === "slow");
  if (text.includes("Trying the model")) {
    const failing = ofRound.filter((s) => s.kind === "failing");
    return failing.length === 1 ? failing[0] : undefined;
  }
  return undefined;
}

/** every prompt's and steering text's answer, for the log */
function outcomes(client: AcpTestClient): string {
  const lines = client.transcript.lines;
  return lines
    .filter((l) => promptText(l) !== undefined)
    .map((l) => {
      const answer = lines.find((a) => a.from === "agent" && a.message?.id === l.message.id && !("method" in a.message));
      const m = answer?.message;
      return `${promptText(l)!.split(" ").at(-1)}=${m?.result?.stopReason ?? m?.result?.outcome ?? m?.error?.data?.code ?? m?.error?.code ?? "?"}`;
    })
    .join(" ");
}
