/**
 * Every wait of a session ends (adr/0033): a subscription that ends before its snapshot fails the
 * open with its own end's error at once (review #8), a resync whose answers never come is bounded
 * and answers the prompt waiting on it, and after ZCode's agent runtime restarted (the send is
 * refused "no such session") the session subscribes again before the input is resent (review #7).
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log/logger.js";
import { SessionService } from "../../../src/session/session-service.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { BridgeError } from "../../../src/util/errors.js";
import type { HostEventSink, SessionEventTarget } from "../../../src/host/types.js";
import { FakeHost } from "../../support/fake-host.js";
import { FakeClient } from "../../support/fake-client.js";
import { StubBroker } from "../../support/stub-broker.js";
import { until } from "../../support/until.js";
import { CWD } from "./harness.js";

function service(host: FakeHost, options: { subscribeConfirmMs?: number; resyncTimeoutMs?: number } = {}) {
  return new SessionService({
    native: new CurrentLineApi(host),
    client: new FakeClient(),
    broker: new StubBroker(),
    logger: silentLogger,
    cancelGraceMs: 2000,
    mergeDeltas: true,
    defaultCwd: CWD,
    ...options,
  });
}

describe("session waits end", () => {
  it("a subscription that ends before its snapshot fails the open with that end's error, not the confirmation bound", async () => {
    const host = new FakeHost();
    // the bound is far beyond the test's own timeout: only the end can finish the wait
    const sessions = service(host, { subscribeConfirmMs: 600_000 });
    host.subscribe = async (_target: SessionEventTarget, sink: HostEventSink) => {
      queueMicrotask(() => sink.onEnd(new BridgeError("CHANNEL_OVERFLOW", "the bridge is not reading host events fast enough")));
      return { id: "sub-ending", incarnation: 1, dispose: async () => undefined };
    };
    const opened = sessions.newSession({ cwd: CWD, mcpServers: [] });
    await expect(opened).rejects.toMatchObject({ code: "CHANNEL_OVERFLOW" });
    await expect(opened).rejects.toThrow(/before its first snapshot: the bridge is not reading host events fast enough/);
  });

  it("a subscription that ends after its snapshot but before the open holds it (a fatal early frame) fails the open; it is never kept as live", async () => {
    const host = new FakeHost();
    const sessions = service(host, { subscribeConfirmMs: 600_000 });
    const subscribe = host.subscribe.bind(host);
    const disposed: string[] = [];
    host.subscribe = async (target: SessionEventTarget, sink: HostEventSink) => {
      const subscription = await subscribe({ ...target, includeSnapshot: false }, sink);
      // the V4 reader replays its early frames in one synchronous pass: the snapshot confirms,
      // the next frame is fatal and ends the subscription, all before subscribe() returns
      await sink.onEvent(structuredClone({ type: "snapshot", snapshot: host.session(target.sessionId).snapshot }));
      sink.onEnd(new BridgeError("CHANNEL_OVERFLOW", "an early frame could not be read"));
      return { ...subscription, dispose: async () => void disposed.push(subscription.id) };
    };
    const opened = sessions.newSession({ cwd: CWD, mcpServers: [] });
    await expect(opened).rejects.toMatchObject({ code: "CHANNEL_OVERFLOW" });
    await expect(opened).rejects.toThrow(/right after its first snapshot: an early frame could not be read/);
    expect(disposed).toHaveLength(1);
  });

  it("a resync whose answer never comes is bounded: the prompt waiting on it is answered with a typed error", async () => {
    const host = new FakeHost();
    const sessions = service(host, { resyncTimeoutMs: 300 });
    const opened = await sessions.newSession({ cwd: CWD, mcpServers: [] });
    opened.afterResponse();
    const engine = sessions.get(opened.sessionId);
    const native = host.session(opened.sessionId);
    // the subscription ends while the host runs: the next prompt resyncs (resume, subscribe, read)
    for (const sink of [...native.sinks]) sink.onEnd(new BridgeError("CHANNEL_OVERFLOW", "behind"));
    await until(() => engine.diagnostics().subscribed === false, { what: "the lost subscription" });
    host.handlers.set("agent.resumeSession", () => new Promise(() => undefined));
    await expect(engine.prompt([{ type: "text", text: "hi" }])).rejects.toMatchObject({ code: "HOST_TIMEOUT" });
    expect(host.callsOf("sendPrompt")).toHaveLength(0);
  });

  it("after ZCode's agent runtime restarted (the send is refused: no such session) subscribes again before the input is resent", async () => {
    const host = new FakeHost();
    const sessions = service(host);
    const opened = await sessions.newSession({ cwd: CWD, mcpServers: [] });
    opened.afterResponse();
    const engine = sessions.get(opened.sessionId);
    const native = host.session(opened.sessionId);
    // the restarted runtime: the session is no longer held and its subscriptions produce nothing any more
    host.handlers.set("agent.sendPrompt", () => {
      host.handlers.delete("agent.sendPrompt");
      native.sinks.clear();
      throw new BridgeError("HOST_CALL_FAILED", "Session not found", { details: { code: -32004 } });
    });
    host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("after the restart");
      s.complete("success");
    };
    await expect(engine.prompt([{ type: "text", text: "hi" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(host.callsOf("resumeSession")).toHaveLength(1);
    expect(host.callsOf("sendPrompt")).toHaveLength(2);
    expect(engine.diagnostics().subscribed).toBe(true);
  });
});
