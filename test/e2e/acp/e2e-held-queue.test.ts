/**
 * A queue ZCode holds for its own reasons (review 2026-12-07 #17, adr/0038), end to end through the
 * built CLI. ZCode 3.15.1 holds what is queued behind a turn that failed (`queue.autoDrain` false,
 * `pauseReason: "error"`, product-projection.ts `onTurnError`), behind a stop (`"stopped"`) and
 * after a pause in its desktop (`"manual"`); only `setAutoDrain(true)` resumes it. The bridge does
 * not resume it itself: it tells the client (V4 read path: a `session_info_update` whose
 * `_meta.zcode.queueHold` says why), a cancel still removes exactly the cancelled prompt, the
 * prompts run in order when ZCode resumes its queue, and the wait is bounded (the timeout table's
 * `heldQueue`): then each is taken out of ZCode's queue and answered QUEUE_HELD, never run.
 *
 * Per line: 4.0.0 reports the hold (V4 read path); 3.14.4 holds too (the official 3.14.3 bundle has
 * the same `pauseReason: "error"`) but its legacy reading does not say so, so only the bound
 * applies; the simulated 3.11.2 and 3.12.3 do not hold after a failed turn (GUESS, sim-v4.js).
 * The desktop's acts come through the simulator's desktop-control file, appended once the test saw
 * what it waits for (no timing).
 */
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { until } from "../../support/until.js";

const t = e2e();
const RELEASE = process.env.ZCODE_ACP_SIM_RELEASE ?? "3.11.2";
/** the simulated ZCode holds what waits behind a failed turn */
const HOLDS = ["3.14.4", "4.0.0"].includes(RELEASE);
/** and the bridge reads the hold (the V4 read path) */
const REPORTED = RELEASE === "4.0.0";

async function session(env: Record<string, string> = {}) {
  const client = await t.start({ simProfile: { v4DesktopControl: true }, env });
  await client.initialize();
  const ws = await t.workspace();
  const { sessionId } = await client.newSession(ws);
  return { client, sessionId };
}

/** settles with what the prompt answered: its result, or its error */
const settled = <T>(answer: Promise<T>): Promise<{ ok: T } | { error: any }> =>
  answer.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error }),
  );

/** the desktop acts on the session (sim-v4.js, profile knob v4DesktopControl) */
async function desktop(sessionId: string, action: "resumeQueue" | "pauseQueue" | "stop"): Promise<void> {
  await appendFile(join(t.sim().dataDir, ".zcode", "sim", "desktop-control.jsonl"), `${JSON.stringify({ sessionId, action })}\n`);
  await until(
    async () =>
      (await t.sim().readCallLog()).some(
        (e) =>
          e.kind === "desktop" && (e as { sessionId?: string }).sessionId === sessionId && (e as { action?: string }).action === action,
      ),
    { what: `the desktop's ${action}` },
  );
}

/** the inputs ZCode started a turn for (call log), by their text */
async function started(sessionId: string): Promise<string[]> {
  return (await t.sim().readCallLog())
    .filter((e) => e.kind === "input-started" && (e as { sessionId?: string }).sessionId === sessionId)
    .map((e) => String((e as { text?: unknown }).text));
}

type Envelope = { commandId: string; payload: Record<string, any> };
const sendTexts = async (sessionId: string): Promise<Envelope[]> =>
  forSession(await t.commands("sendText"), sessionId).map((e) => e.params as Envelope);

const holdNotices = (client: { updates(sessionId?: string): any[] }, sessionId: string): any[] =>
  client
    .updates(sessionId)
    .filter((u) => u.sessionUpdate === "session_info_update" && u._meta?.zcode?.queueHold !== undefined)
    .map((u) => u._meta.zcode.queueHold);

describe("e2e: a queue ZCode holds for its own reasons (adr/0038)", () => {
  it.runIf(REPORTED)(
    "behind a failed turn: the client is told why, a cancel removes only its prompt, the rest run in order once ZCode resumes",
    async () => {
      const { client, sessionId } = await session();
      const first = settled(client.prompt(sessionId, "sim:turn-failed queued=3"));
      const waiting = ["held one", "held two", "held three"].map((text) => {
        const controller = new AbortController();
        const answer = settled(
          client.agent.request(
            "session/prompt",
            { sessionId, prompt: [{ type: "text", text }] },
            { cancellationSignal: controller.signal },
          ),
        );
        return { text, controller, answer };
      });
      const failed = await first;
      expect(failed).toHaveProperty("error");
      // told: ZCode paused its queue after the failed turn, three prompts wait in it
      const notice = await client.waitForUpdate(
        sessionId,
        (u) => u.sessionUpdate === "session_info_update" && u._meta?.zcode?.queueHold?.held === true,
      );
      expect(notice._meta.zcode.queueHold).toMatchObject({ held: true, pauseReason: "error", waitingPrompts: 3 });
      expect(notice._meta.zcode.queueHold.message).toMatch(/paused this session's queue after a turn failed/);
      // nothing was released by the bridge, nothing ran
      expect(forSession(await t.commands("setAutoDrain"), sessionId)).toHaveLength(0);
      expect(await started(sessionId)).toHaveLength(1);
      // $/cancel_request of the second one: only it leaves ZCode's queue
      waiting[1]!.controller.abort();
      await expect(waiting[1]!.answer).resolves.toMatchObject({ ok: { stopReason: "cancelled" } });
      const ids = await sendTexts(sessionId);
      const removals = forSession(await t.commands("deleteQueueItem"), sessionId).map((e) => (e.params as Envelope).payload.queueItemId);
      expect([...new Set(removals)]).toEqual([`queue_${ids[2]!.commandId}`]);
      // the desktop resumes the queue: the others run, in order, each answered once
      await desktop(sessionId, "resumeQueue");
      await expect(waiting[0]!.answer).resolves.toMatchObject({ ok: { stopReason: "end_turn" } });
      await expect(waiting[2]!.answer).resolves.toMatchObject({ ok: { stopReason: "end_turn" } });
      const text = client.text(sessionId);
      expect(text.indexOf("You said: held one")).toBeGreaterThan(-1);
      expect(text.indexOf("You said: held three")).toBeGreaterThan(text.indexOf("You said: held one"));
      expect(text).not.toContain("You said: held two");
      expect((await started(sessionId)).filter((s) => s.startsWith("held"))).toEqual(["held one", "held three"]);
      // and told that nothing of ours is held any more
      expect(holdNotices(client, sessionId).at(-1)).toEqual({ held: false });
      client.expectValid();
    },
  );

  it.runIf(REPORTED)("after a stop in ZCode's desktop: told why (stopped); the queued prompt runs once the desktop resumes", async () => {
    const { client, sessionId } = await session();
    const first = settled(client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=5000"));
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const second = settled(client.prompt(sessionId, "behind the stop"));
    await until(async () => (await sendTexts(sessionId)).length === 2, { what: "the second prompt at ZCode" });
    await desktop(sessionId, "stop");
    await expect(first).resolves.toMatchObject({ ok: { stopReason: "cancelled" } });
    const notice = await client.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "session_info_update" && u._meta?.zcode?.queueHold?.held === true,
    );
    expect(notice._meta.zcode.queueHold).toMatchObject({ held: true, pauseReason: "stopped", waitingPrompts: 1 });
    expect(forSession(await t.commands("setAutoDrain"), sessionId)).toHaveLength(0);
    await desktop(sessionId, "resumeQueue");
    await expect(second).resolves.toMatchObject({ ok: { stopReason: "end_turn" } });
    expect(client.text(sessionId)).toContain("You said: behind the stop");
    client.expectValid();
  });

  it.runIf(HOLDS)(
    "a hold nobody resumes is bounded: the waiting prompts are taken out of ZCode's queue, answered QUEUE_HELD, never run",
    async () => {
      const { client, sessionId } = await session({ ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ heldQueue: 1500 }) });
      const first = settled(client.prompt(sessionId, "sim:turn-failed queued=2"));
      const waiting = [settled(client.prompt(sessionId, "never run one")), settled(client.prompt(sessionId, "never run two"))];
      expect(await first).toHaveProperty("error");
      const answers = await Promise.all(waiting);
      for (const answer of answers) {
        expect(answer).toHaveProperty("error");
        expect((answer as { error: any }).error.data?.code).toBe("QUEUE_HELD");
      }
      const ids = await sendTexts(sessionId);
      const removals = forSession(await t.commands("deleteQueueItem"), sessionId).map((e) => (e.params as Envelope).payload.queueItemId);
      // (a compare-and-set removal may be sent again after a `stale`)
      expect([...new Set(removals)]).toEqual([`queue_${ids[1]!.commandId}`, `queue_${ids[2]!.commandId}`]);
      expect(forSession(await t.commands("setAutoDrain"), sessionId)).toHaveLength(0);
      expect((await started(sessionId)).some((s) => s.startsWith("never run"))).toBe(false);
      if (REPORTED) expect(holdNotices(client, sessionId).map((n) => n.held)).toEqual([true, false]);
      // the session goes on
      await expect(client.prompt(sessionId, "after the hold")).resolves.toMatchObject({ stopReason: "end_turn" });
      expect(client.text(sessionId)).toContain("You said: after the hold");
      client.expectValid();
    },
  );

  it.runIf(!HOLDS)("where ZCode does not hold after a failed turn, the prompts behind it run", async () => {
    const { client, sessionId } = await session();
    const first = settled(client.prompt(sessionId, "sim:turn-failed queued=1"));
    const second = client.prompt(sessionId, "runs after the failure");
    expect(await first).toHaveProperty("error");
    await expect(second).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(holdNotices(client, sessionId)).toEqual([]);
    client.expectValid();
  });
});
