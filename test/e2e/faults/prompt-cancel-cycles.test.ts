/**
 * 100 prompt / cancel cycles through the built CLI: each turn is cancelled mid-stream
 * (session/cancel or $/cancel_request), each resolves `cancelled` with one stop, and
 * afterwards every count the bridge exposes through `_zcode/diagnostics` (ZCODE_ACP_DIAGNOSTICS=1)
 * is back at its baseline: no running turn, no pending interaction, no queued update, no waiter,
 * no pending host request, no extra subscription route or exit listener, no extra timer or
 * process listener.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { V3 } from "../answers.js";

const t = e2e();
const CYCLES = 100;

type Diagnostics = {
  process: { resources: Record<string, number>; listeners: Record<string, number> };
  sessions: Record<string, number>;
  host: Record<string, number | boolean>;
};

const diagnostics = (client: AcpTestClient): Promise<Diagnostics> => client.agent.request("_zcode/diagnostics" as never, {} as never);

/** The counts that must come back to the baseline (memory is left out: it is not a count). */
function counts(d: Diagnostics): Record<string, unknown> {
  return {
    sessions: d.sessions,
    // on zcode-task-v3 a V4 frame batches ~30 ms of ops, so the largest frame (a high-water mark, not
    // a count) moves with timing: there it must stay small, not equal
    host: { ...d.host, readingPaused: false, ...(V3 ? { largestFrameBytes: Number(d.host.largestFrameBytes) < 64 * 1024 } : {}) },
    listeners: d.process.listeners,
    timers: d.process.resources.Timeout ?? 0,
    immediates: d.process.resources.Immediate ?? 0,
    processes: d.process.resources.ProcessWrap ?? 0,
    pipes: d.process.resources.PipeWrap ?? 0,
  };
}

/** Polls until the counts equal `baseline` (settling work may finish a moment after a response). */
async function settlesTo(client: AcpTestClient, baseline: Record<string, unknown>): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  for (let i = 0; i < 50; i++) {
    last = counts(await diagnostics(client));
    if (JSON.stringify(last) === JSON.stringify(baseline)) return last;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return last;
}

describe("faults: prompt / cancel cycles", () => {
  it(`${CYCLES} prompt/cancel cycles: each cancelled with one stop, every count back at its baseline`, async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "warm up")).resolves.toMatchObject({ stopReason: "end_turn" });
    const baseline = counts(await diagnostics(client));
    expect(baseline).toMatchObject({
      sessions: { sessions: 1, turns: 0, pendingInteractions: 0, queuedUpdates: 0, activityWaiters: 0 },
      host: { running: true, pendingRequests: 0, pendingDeliveries: 0 },
    });
    const stopsBefore = (await t.stops(sessionId)).length;

    for (let i = 0; i < CYCLES; i++) {
      const seen = client.transcript.lines.length;
      const controller = new AbortController();
      const turn = client.agent.request(
        "session/prompt",
        { sessionId, prompt: [{ type: "text", text: `sim:stream-until-cancel interval=5 max=400 cycle ${i}` }] },
        { cancellationSignal: controller.signal },
      );
      await client.waitForLine(
        (l) =>
          l.from === "agent" &&
          l.message.method === "session/update" &&
          l.message.params.update.sessionUpdate === "agent_message_chunk" &&
          client.transcript.lines.indexOf(l) >= seen,
      );
      if (i % 2 === 0) await client.cancel(sessionId);
      else controller.abort();
      await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    }

    await expect(client.prompt(sessionId, "after the cycles")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect((await t.stops(sessionId)).length - stopsBefore).toBe(CYCLES);
    expect(await settlesTo(client, baseline)).toEqual(baseline);
    client.expectValid();
  });

  it("the diagnostics request does not exist without ZCODE_ACP_DIAGNOSTICS=1", async () => {
    const client = await t.start();
    await client.initialize();
    await expect(diagnostics(client)).rejects.toMatchObject({ code: -32601 });
  });
});
