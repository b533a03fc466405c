/** One owner per session (adr/0017): joins, paired subscriptions, close and cancel in every state, stops, releases. */
import { describe, expect, it } from "vitest";
import { makeSnapshot } from "../../support/fake-host.js";
import type { HostEventSink, HostSubscription, SessionEventTarget } from "../../../src/host/types.js";
import { BridgeError } from "../../../src/util/errors.js";
import { MAX_ATTACHED_SESSIONS, MAX_RELEASED_SESSIONS } from "../../../src/session/session-service.js";
import { until } from "../../support/until.js";
import { CWD, openSession, setup, updatesWritten } from "./harness.js";

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const stops = (h: ReturnType<typeof setup>, sessionId: string) =>
  h.host.operations.filter((o) => o.operation === "cancelGeneration" && o.sessionId === sessionId);

describe("session ownership", () => {
  /** a service whose first session has had a prompt (released, it is resumed, not created again); prompts complete at once */
  async function promptedFirst() {
    const h = setup();
    const first = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete();
    };
    await first.engine.prompt([{ type: "text", text: "keep me" }]);
    return { h, first };
  }

  it("a load and a resume of one session in flight together share one engine, one resume and one subscription", async () => {
    const h = setup();
    h.host.addSession(makeSnapshot("old1", CWD));
    const [loaded, resumed, again] = await Promise.all([
      h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: true }),
      h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: false }),
      h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: true }),
    ]);
    expect([loaded.sessionId, resumed.sessionId, again.sessionId]).toEqual(["old1", "old1", "old1"]);
    expect(h.host.callsOf("resumeSession")).toHaveLength(1);
    expect(h.host.session("old1").sinks.size).toBe(1);
    // the two loads in flight together replayed once, and announce nothing after their responses
    expect(h.host.callsOf("readSessionMessages")).toHaveLength(1);
    expect(again).toBe(loaded);
    loaded.afterResponse();
    again.afterResponse();
    await updatesWritten(h);
    expect(h.client.kinds("old1").filter((k) => k === "available_commands_update")).toHaveLength(1);
    expect(h.service.diagnostics()).toMatchObject({ sessions: 1, subscriptions: 1 });
    await h.service.closeSession("old1");
    expect(h.host.session("old1").sinks.size).toBe(0);
    expect(h.service.diagnostics()).toMatchObject({ sessions: 0, subscriptions: 0 });
  });

  it("a failed open is shared by the requests that joined it, and leaves nothing registered", async () => {
    const h = setup();
    const results = await Promise.allSettled([
      h.service.resumeSession({ sessionId: "missing", cwd: CWD, replay: true }),
      h.service.resumeSession({ sessionId: "missing", cwd: CWD, replay: false }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(h.host.callsOf("resumeSession")).toHaveLength(1);
    expect(h.service.diagnostics()).toMatchObject({ sessions: 0, subscriptions: 0 });
  });

  it("close while the open's subscription is in flight: the subscription is disposed when it arrives, closed natively after its resume", async () => {
    const h = setup();
    h.host.addSession(makeSnapshot("old1", CWD));
    const held = gate();
    const subscribe = h.host.subscribe.bind(h.host);
    h.host.subscribe = async (target: SessionEventTarget, sink: HostEventSink): Promise<HostSubscription> => {
      await held.promise;
      return subscribe(target, sink);
    };
    const opening = h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: false });
    await until(() => h.host.callsOf("resumeSession").length === 1);
    await expect(h.service.closeSession("old1")).resolves.toBeUndefined(); // answered without waiting for the subscription
    held.open();
    await expect(opening).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
    await until(() => h.host.callsOf("closeSession").length === 1);
    expect(h.host.session("old1").sinks.size).toBe(0);
    expect(h.service.diagnostics()).toMatchObject({ sessions: 0, subscriptions: 0 });
  });

  it("a resync whose subscribe fails fails that prompt clearly and leaves the session marked: the next prompt resyncs", async () => {
    const h = setup();
    const { engine, opened } = await openSession(h);
    h.host.crash();
    const subscribe = h.host.subscribe.bind(h.host);
    let failures = 1;
    h.host.subscribe = async (target, sink) => {
      if (failures-- > 0) throw new BridgeError("CHANNEL_OVERFLOW", "too many subscriptions");
      return subscribe(target, sink);
    };
    await expect(engine.prompt([{ type: "text", text: "one" }])).rejects.toMatchObject({
      code: "CHANNEL_OVERFLOW",
      message: expect.stringMatching(/Could not resynchronise session .*too many subscriptions.*Send the prompt again/),
    });
    expect(h.host.callsOf("sendPrompt")).toHaveLength(0); // never sent without a subscription
    expect(engine.lifecycle.state).toBe("detached");
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete();
    };
    await expect(engine.prompt([{ type: "text", text: "two" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("resumeSession")).toHaveLength(2);
    expect(h.host.session(opened.sessionId).sinks.size).toBe(1);
  });

  it("a subscription that ends while the host lives stops the native turn and resyncs; a host exit does not stop", async () => {
    const h = setup();
    const { engine, opened, native } = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    for (const sink of native.sinks) sink.onEnd(new BridgeError("CHANNEL_OVERFLOW", "the bridge is not reading host events fast enough"));
    native.sinks.clear();
    await expect(turn).rejects.toMatchObject({ code: "CHANNEL_OVERFLOW" });
    expect(stops(h, opened.sessionId)).toHaveLength(1);

    const h2 = setup();
    const second = await openSession(h2);
    h2.host.script.onPrompt = (s) => void s.startTurn();
    const crashed = second.engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h2.host.callsOf("sendPrompt").length === 1);
    h2.host.crash();
    await expect(crashed).rejects.toMatchObject({ code: "HOST_EXITED" });
    expect(stops(h2, second.opened.sessionId)).toHaveLength(0);
  });

  it("a sendPrompt that times out stops the native turn", async () => {
    const h = setup();
    const { engine, opened } = await openSession(h);
    h.host.handlers.set("agent.sendPrompt", () => {
      throw new BridgeError("HOST_TIMEOUT", "the host did not answer agent.sendPrompt within 60000 ms");
    });
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toMatchObject({ code: "HOST_TIMEOUT" });
    expect(stops(h, opened.sessionId)).toHaveLength(1);
  });

  it("cancel during a resync answers at once; close during a resync leaves no subscription", async () => {
    const h = setup({ cancelGraceMs: 10_000 });
    const { engine, opened } = await openSession(h);
    h.host.crash();
    const held = gate();
    h.host.handlers.set("agent.resumeSession", async () => {
      await held.promise;
      return structuredClone(h.host.session(opened.sessionId).snapshot);
    });
    const turn = engine.prompt([{ type: "text", text: "x" }]);
    await until(() => h.host.callsOf("resumeSession").length === 1);
    engine.cancel();
    await expect(turn).resolves.toEqual({ stopReason: "cancelled" });
    const second = engine.prompt([{ type: "text", text: "y" }]); // queued behind the held resync
    const closing = h.service.closeSession(opened.sessionId);
    await expect(second).resolves.toEqual({ stopReason: "cancelled" });
    await closing;
    held.open();
    await until(() => h.host.callsOf("closeSession").length === 1);
    expect(h.host.session(opened.sessionId).sinks.size).toBe(0);
    expect(h.host.callsOf("sendPrompt")).toHaveLength(0);
  });

  it(`releases the least recently used idle sessions above ${MAX_ATTACHED_SESSIONS} and reopens them at their next use`, async () => {
    const { h, first } = await promptedFirst();
    const second = await openSession(h);
    await second.engine.setMode("yolo");
    for (let i = 2; i <= MAX_ATTACHED_SESSIONS + 1; i++) await openSession(h);
    await until(() => h.host.callsOf("closeSession").length === 2);
    expect(h.service.diagnostics()).toMatchObject({
      sessions: MAX_ATTACHED_SESSIONS,
      releasedSessions: 2,
      subscriptions: MAX_ATTACHED_SESSIONS,
    });
    expect(first.native.sinks.size).toBe(0);
    expect(() => h.service.get(first.opened.sessionId)).toThrow(/Unknown session/);

    // prompted: resumed; never prompted: created again with its id, its mode set again
    const reopened = await h.service.acquire(first.opened.sessionId);
    await expect(reopened.prompt([{ type: "text", text: "again" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("resumeSession").map((c) => c.params.sessionId)).toEqual([first.opened.sessionId]);
    const recreated = await h.service.acquire(second.opened.sessionId);
    expect(h.host.callsOf("createSession").at(-1)!.params).toMatchObject({ sessionId: second.opened.sessionId, persistence: "deferred" });
    expect(recreated.modes().currentModeId).toBe("yolo");
    expect(h.host.callsOf("setMode").map((c) => c.params.mode)).toEqual(["yolo", "yolo"]);
    // every reopen released another idle one: the bound holds
    await until(() => h.service.diagnostics().subscriptions === MAX_ATTACHED_SESSIONS);
    expect(h.service.diagnostics()).toMatchObject({ sessions: MAX_ATTACHED_SESSIONS, releasedSessions: 2 });
  });

  it("a cancel while a released session reopens for its prompt cancels that prompt: no turn is sent", async () => {
    const { h, first } = await promptedFirst();
    for (let i = 1; i <= MAX_ATTACHED_SESSIONS; i++) await openSession(h);
    await until(() => h.host.callsOf("closeSession").length === 1);
    const sent = h.host.callsOf("sendPrompt").length;
    // as the prompt handler does: the engine at once, the cancel count, then the wait for the reopen
    const reopening = h.service.opening(first.opened.sessionId);
    const cancelsBefore = reopening.cancelCount;
    h.service.get(first.opened.sessionId).cancel();
    await reopening.whenOpen();
    await expect(reopening.prompt([{ type: "text", text: "cancelled before it ran" }], cancelsBefore)).resolves.toEqual({
      stopReason: "cancelled",
    });
    expect(h.host.callsOf("sendPrompt")).toHaveLength(sent);
    // the next prompt runs
    await expect(reopening.prompt([{ type: "text", text: "now" }])).resolves.toMatchObject({ stopReason: "end_turn" });
  });

  it("never releases a session with a running turn", async () => {
    const h = setup();
    const first = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    const turn = first.engine.prompt([{ type: "text", text: "long" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    for (let i = 1; i <= MAX_ATTACHED_SESSIONS; i++) await openSession(h);
    expect(first.native.sinks.size).toBe(1);
    expect(h.service.get(first.opened.sessionId)).toBe(first.engine);
    h.host.session(first.opened.sessionId).complete();
    await expect(turn).resolves.toMatchObject({ stopReason: "end_turn" });
  });
});

describe("the bound on released sessions", () => {
  it(`refuses one more session past ${MAX_RELEASED_SESSIONS} released ones, with what to do`, { timeout: 60_000 }, async () => {
    const h = setup();
    const first = await h.service.newSession({ cwd: CWD, mcpServers: [] });
    for (let i = 1; i < MAX_RELEASED_SESSIONS + MAX_ATTACHED_SESSIONS; i++) await h.service.newSession({ cwd: CWD, mcpServers: [] });
    await until(() => h.service.diagnostics().releasedSessions === MAX_RELEASED_SESSIONS, { timeoutMs: 10_000 });
    await expect(h.service.newSession({ cwd: CWD, mcpServers: [] })).rejects.toMatchObject({
      code: "SESSION_BUSY",
      message: expect.stringMatching(/already has 10032 open sessions.*session\/close.*restart the agent/),
    });
    // closing a released one (no host call) makes room
    const closes = h.host.callsOf("closeSession").length;
    await h.service.closeSession(first.sessionId);
    expect(h.host.callsOf("closeSession")).toHaveLength(closes);
    await expect(h.service.newSession({ cwd: CWD, mcpServers: [] })).resolves.toMatchObject({ sessionId: expect.any(String) });
  });
});
