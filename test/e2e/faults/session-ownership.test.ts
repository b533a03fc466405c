/**
 * One owner per session (adr/0017), through the built CLI: a second load (or a load and a resume)
 * of one session joins the first (one engine, one host subscription, the client asked, nothing
 * left after close); a resync whose subscribe fails leaves the session marked; a prompt whose
 * acknowledgement times out stops the native turn; close and cancel during a resync are answered
 * at once and leave no subscription and no resume behind.
 */
import { describe, expect, it } from "vitest";
import type { CallLogEntry } from "../../../fixtures/sim-install.js";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { RawAcpClient, resultLine } from "../../support/raw-acp-client.js";
import { until } from "../../support/until.js";
import { answersFor, V3 } from "../answers.js";

const t = e2e();

const DIAGNOSTICS = { ZCODE_ACP_DIAGNOSTICS: "1" };

/** A session with one finished turn (so ZCode keeps it), made by a first process that then exits. */
async function keptSession(): Promise<{ sessionId: string; ws: string }> {
  const ws = await t.workspace();
  const first = await t.start();
  await first.initialize();
  const { sessionId } = await first.newSession(ws);
  await first.prompt(sessionId, "a first turn");
  await first.close();
  return { sessionId, ws };
}

/** zcode-task-v3: a session's event listen is its V4 conversation subscription */
const v4Subscribes = (log: CallLogEntry[], sessionId: string): CallLogEntry[] =>
  log.filter(
    (e) => e.kind === "call" && e.method === "subscribeConversationV4" && (e.params as { sessionId?: string })?.sessionId === sessionId,
  );

const listensOf = (log: CallLogEntry[], sessionId: string): CallLogEntry[] =>
  V3
    ? v4Subscribes(log, sessionId)
    : log.filter((e) => e.kind === "listen" && (e.arg as { sessionId?: string } | undefined)?.sessionId === sessionId);

/** listens of the session on the running host (the log's last run) that were never disposed */
const openListens = (log: CallLogEntry[], sessionId: string): CallLogEntry[] => {
  const run = log.at(-1)?.run;
  if (V3) {
    // subscriptions of the session (named by its frames) that were not unsubscribed
    const ofRun = log.filter((e) => e.run === run);
    const ids = new Set(ofRun.filter((e) => e.kind === "v4-frame" && e.sessionId === sessionId).map((e) => e.subscriptionId));
    const unsubscribed = ofRun.filter(
      (e) =>
        e.kind === "call" && e.method === "unsubscribeConversationV4" && ids.has((e.params as { subscriptionId?: string })?.subscriptionId),
    );
    return v4Subscribes(ofRun, sessionId).slice(unsubscribed.length);
  }
  return listensOf(log, sessionId).filter(
    (l) => l.run === run && !log.some((e) => e.kind === "listen-dispose" && e.id === l.id && e.run === l.run),
  );
};

/** The raw client's session/prompt: the permission request is answered with `optionId`; resolves with the prompt's response. */
async function promptAnsweringPermission(client: RawAcpClient, sessionId: string, text: string, optionId: string): Promise<any> {
  const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  await client.write([prompt.line]);
  const asked = await client.waitForAgent((m) => m.method === "session/request_permission", "the permission request");
  await client.write([resultLine(asked.id, { outcome: { outcome: "selected", optionId } })]);
  return client.response(prompt.id);
}

async function expectNothingLeft(client: RawAcpClient, sessionId: string): Promise<void> {
  const diagnostics = await client.request("_zcode/diagnostics", {});
  expect(diagnostics.result.sessions).toMatchObject({ sessions: 0, subscriptions: 0, turns: 0, pendingInteractions: 0 });
  await until(async () => openListens(await t.sim().readCallLog(), sessionId).length === 0, {
    intervalMs: 50,
    what: "every host subscription of the session to be disposed",
  });
}

describe("faults: one owner per session", () => {
  for (const second of ["session/load", "session/resume"] as const) {
    it(`a load and a ${second} of one session in one write share one engine and one subscription; the client is asked; nothing left after close`, async () => {
      const { sessionId, ws } = await keptSession();
      const before = (await t.sim().readCallLog()).length;
      const client = RawAcpClient.start({ env: { ...t.sim().env, ...DIAGNOSTICS } });
      try {
        await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
        const load = client.requestLine("session/load", { sessionId, cwd: ws, mcpServers: [] });
        const other = client.requestLine(second, { sessionId, cwd: ws, mcpServers: [] });
        await client.write([load.line, other.line]);
        const [loaded, joined] = await Promise.all([client.response(load.id), client.response(other.id)]);
        expect(loaded.result?.modes?.currentModeId).toBe("build");
        expect(joined.result?.modes?.currentModeId).toBe("build");

        const answered = await promptAnsweringPermission(client, sessionId, "sim:permission command=ls", "allow_once");
        expect(answered.result).toMatchObject({ stopReason: "end_turn" });
        const asked = client.transcript.agentMessages().filter((m) => m.method === "session/request_permission");
        expect(asked).toHaveLength(1);
        const log = (await t.sim().readCallLog()).slice(before);
        expect(listensOf(log, sessionId)).toHaveLength(1);
        expect(
          forSession(
            log.filter((e) => e.kind === "call" && e.method === "resumeSession"),
            sessionId,
          ),
        ).toHaveLength(1);
        const answers = answersFor(log, "respondPermission", sessionId).map((e) => e.optionId);
        expect(answers).toEqual(["allow_once"]);
        // each tool call of the turn reaches the client once (one engine forwards the events)
        const toolCalls = client.transcript
          .agentMessages()
          .filter((m) => m.method === "session/update" && m.params.update.sessionUpdate === "tool_call")
          .map((m) => m.params.update.toolCallId);
        expect(new Set(toolCalls).size).toBe(toolCalls.length);

        expect((await client.request("session/close", { sessionId })).result).toEqual({});
        await expectNothingLeft(client, sessionId);
      } finally {
        await client.close();
      }
    });
  }

  it("a resync whose subscription is never confirmed fails that prompt clearly; the next prompt resyncs and runs", async () => {
    const client = await t.start({ env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ subscribe: 1500 }) } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    // the host dies; its next run drops the first subscription (a native subscribe that failed only logs)
    await expect(client.prompt(sessionId, "sim:crash how=exit dropSubscribe=1")).rejects.toMatchObject({ code: expect.any(Number) });
    await expect(client.prompt(sessionId, "after the crash")).rejects.toMatchObject({
      message: expect.stringMatching(/did not confirm the event subscription/),
    });
    await expect(client.prompt(sessionId, "and again")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("and again");
    const log = await t.sim().readCallLog();
    expect(log.filter((e) => e.kind === "fault" && e.fault === "drop-subscribe")).toHaveLength(1);
    expect(
      forSession(
        log.filter((e) => e.kind === "call" && e.method === "resumeSession"),
        sessionId,
      ),
    ).toHaveLength(2);
    client.expectValid();
  });

  it("a prompt whose acknowledgement times out stops the native turn; the next prompt runs", async () => {
    const client = await t.start({ env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ sendPrompt: 400 }) } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    // ZCode starts the turn but answers sendPrompt 5 s late: the bridge gives up after 400 ms
    await expect(client.prompt(sessionId, "sim:stream-until-cancel interval=50 ackDelay=5000")).rejects.toMatchObject({
      data: { code: "HOST_TIMEOUT" },
    });
    await until(async () => (await t.stops(sessionId)).length === 1, {
      intervalMs: 50,
      what: "the stop of the abandoned turn",
    });
    await expect(client.prompt(sessionId, "after the timeout")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    client.expectValid();
  });

  /** Is the delayed resumeSession of the session still held by the host (not answered yet)? */
  async function resumeHeld(sessionId: string): Promise<boolean> {
    const log = await t.sim().readCallLog();
    const held = log.some((e) => e.kind === "fault" && e.fault === "resume-delay" && e.sessionId === sessionId);
    return held && !log.some((e) => e.kind === "fault" && e.fault === "resume-delay-over" && e.sessionId === sessionId);
  }

  /** A session whose host died; its next prompt's resync is held in a resumeSession that answers `delayMs` late. */
  async function resyncInFlight(delayMs: number) {
    const client = await t.start({ env: DIAGNOSTICS });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await client.prompt(sessionId, "keep this session");
    await expect(client.prompt(sessionId, `sim:crash how=exit resumeDelay=${delayMs}`)).rejects.toBeDefined();
    const prompt = client.prompt(sessionId, "during the resync");
    prompt.catch(() => undefined);
    await until(
      async () => (await t.sim().readCallLog()).some((e) => e.kind === "fault" && e.fault === "resume-delay" && e.sessionId === sessionId),
      {
        intervalMs: 20,
        what: "the delayed resumeSession",
      },
    );
    return { client, sessionId, prompt };
  }

  it("close during a resync is answered at once; no subscription is left and the session is not resumed after its close", async () => {
    const { client, sessionId, prompt } = await resyncInFlight(5000);
    await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
    expect(await resumeHeld(sessionId)).toBe(true); // answered without waiting for the resync
    await expect(prompt).resolves.toMatchObject({ stopReason: "cancelled" });
    // once the held resume answers, the bridge closes the session natively and subscribes to nothing
    await until(
      async () => {
        const log = await t.sim().readCallLog();
        const resumed = forSession(
          log.filter((e) => e.kind === "call" && e.method === "resumeSession"),
          sessionId,
        ).at(-1);
        const closed = forSession(
          log.filter((e) => e.kind === "call" && e.method === "closeSession"),
          sessionId,
        ).at(-1);
        return resumed !== undefined && closed !== undefined && closed.run === resumed.run && closed.seq > resumed.seq;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: "closeSession after the held resumeSession" },
    );
    const diagnostics = await client.agent.request("_zcode/diagnostics" as never, {} as never);
    expect((diagnostics as { sessions: object }).sessions).toMatchObject({ sessions: 0, subscriptions: 0, turns: 0 });
    const log = await t.sim().readCallLog();
    expect(openListens(log, sessionId)).toEqual([]);
    const lastRun = log.filter((e) => e.kind === "fault" && e.fault === "resume-delay").at(-1)!.run;
    expect(listensOf(log, sessionId).filter((e) => e.run === lastRun)).toEqual([]);
    client.expectValid();
  });

  it("cancel during a resync is answered while the resync still waits; the next prompt resyncs and runs", async () => {
    const { client, sessionId, prompt } = await resyncInFlight(5000);
    await client.cancel(sessionId);
    await expect(prompt).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(await resumeHeld(sessionId)).toBe(true); // answered without waiting for the resync
    await expect(client.prompt(sessionId, "after the cancel")).resolves.toMatchObject({ stopReason: "end_turn" });
    const diagnostics = await client.agent.request("_zcode/diagnostics" as never, {} as never);
    expect((diagnostics as { sessions: object }).sessions).toMatchObject({ sessions: 1, subscriptions: 1, turns: 0 });
    client.expectValid();
  });
});
