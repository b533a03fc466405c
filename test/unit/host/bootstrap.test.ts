/**
 * The bootstrap (src/runtime/) run for real under the simulated install, driven with raw NDJSON
 * frames on fd 3: allowlist refusal before dispatch, null results, limits, fail-closed on bad
 * frames, exit when the pipe closes, reverse requests answered at once.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "../../support/until.js";
import { startRawBootstrap, type RawBootstrap } from "./support/raw-bootstrap.js";
import { createTestInstall, readCallLog, type TestInstall } from "./support/sim.js";

let install: TestInstall;
let running: RawBootstrap[] = [];

beforeEach(async () => {
  install = await createTestInstall();
  running = [];
});

afterEach(async () => {
  for (const b of running) if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill("SIGKILL");
  await Promise.all(running.map((b) => b.exited));
  await install.cleanup();
});

function start(options?: Parameters<typeof startRawBootstrap>[1]): RawBootstrap {
  const b = startRawBootstrap(install, options);
  running.push(b);
  return b;
}

const byId = (id: number) => (f: Record<string, unknown>) => f.id === id;

describe("bootstrap", () => {
  it("reports ready, serves allowlisted calls, answers null for undefined, refuses the rest before dispatch", async () => {
    const b = start();
    const ready = await b.waitFor((f) => f.method === "ready");
    expect(ready.params).toEqual({ pid: b.child.pid });

    b.send({ id: 1, method: "__call", params: { service: "agent", method: "initialize", params: { workspacePath: "/w" } } });
    const init = await b.waitFor(byId(1));
    expect((init.result as { available: boolean }).available).toBe(true);

    // not in the manifest's allowlist: refused; an event name used as a method: refused; unknown service: refused
    b.send({ id: 2, method: "__call", params: { service: "agent", method: "deleteEverything", params: {} } });
    b.send({ id: 3, method: "__call", params: { service: "agent", method: "onDynamicSessionEvent", params: {} } });
    b.send({ id: 4, method: "__call", params: { service: "oauth", method: "getProviders", params: {} } });
    b.send({ id: 5, method: "__call", params: { service: "task", method: "initialize", params: {} } });
    // an event that is not allowlisted
    b.send({ id: 6, method: "__subscribe", params: { subscriptionId: "x1", service: "task", event: "onDynamicTaskEvent", target: {} } });
    for (const id of [2, 3, 4, 5, 6]) {
      const refused = await b.waitFor(byId(id));
      expect((refused.error as { code: string }).code, `frame ${id}`).toBe("METHOD_NOT_ALLOWED");
    }

    // stopGeneration returns undefined in the host: the answer is an explicit null
    b.send({
      id: 7,
      method: "__call",
      params: { service: "task", method: "stopGeneration", params: { taskId: "nope", workspacePath: "/w" } },
    });
    const stop = await b.waitFor(byId(7));
    expect(stop).toEqual({ id: 7, result: null });

    const calls = readCallLog(install.callLogPath).filter((e) => e.kind === "call" || e.kind === "listen");
    expect(calls.map((e) => `${e.service}.${String(e.method ?? e.event)}`)).toEqual([
      "zcode-agent.initialize",
      "zcode-task.stopGeneration",
    ]);
  });

  it("passes a V4 command envelope only with a command type the bridge sends, before the host sees it (adr/0022)", async () => {
    const b = start();
    await b.waitFor((f) => f.method === "ready");
    const command = (id: number, envelope: unknown) =>
      b.send({
        id,
        method: "__call",
        params: { service: "agent", method: "sendConversationCommandV4", params: { workspacePath: "/w", envelope } },
      });
    command(1, { commandId: "c1", clientId: "x", sessionId: "s", type: "reorderQueueItem", payload: {} });
    command(2, { commandId: "c2", clientId: "x", sessionId: "s", type: "editQueueItem", payload: {} });
    command(3, "not an envelope");
    for (const id of [1, 2, 3]) {
      const refused = await b.waitFor(byId(id));
      expect((refused.error as { code: string }).code, `frame ${id}`).toBe("METHOD_NOT_ALLOWED");
    }
    // an allowed type reaches the host (which refuses it: no handshake yet)
    command(4, { commandId: "c4", clientId: "x", sessionId: "s", type: "stop", payload: {} });
    const reached = await b.waitFor(byId(4));
    expect(reached.error).toMatchObject({ code: "HOST_CALL_FAILED", data: { code: -32600 } });
    const calls = readCallLog(install.callLogPath).filter((e) => e.kind === "call");
    expect(calls.map((e) => (e.params as { envelope?: { type?: string } }).envelope?.type)).toEqual(["stop"]);
  });

  it("relays subscription events and unsubscribes", async () => {
    const b = start();
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "agent", method: "createSession", params: { workspacePath: "/w" } } });
    const created = (await b.waitFor(byId(1))).result as { session?: { sessionId?: string }; sessionId?: string };
    const sessionId = created.session?.sessionId ?? created.sessionId;
    expect(typeof sessionId).toBe("string");
    b.send({
      id: 2,
      method: "__subscribe",
      params: {
        subscriptionId: "s1",
        service: "agent",
        event: "onDynamicSessionEvent",
        target: { workspacePath: "/w", sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true },
      },
    });
    expect(await b.waitFor(byId(2))).toEqual({ id: 2, result: { subscribed: true } });
    const snapshot = await b.waitFor((f) => f.method === "event");
    expect((snapshot.params as { subscriptionId: string }).subscriptionId).toBe("s1");
    expect((snapshot.params as { event: { type: string } }).event.type).toBe("snapshot");
    b.send({ id: 3, method: "__unsubscribe", params: { subscriptionId: "s1" } });
    expect(await b.waitFor(byId(3))).toEqual({ id: 3, result: null });
  });

  it("answers the browser request before every prompt at once, with backend_unavailable", async () => {
    const b = start();
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "agent", method: "createSession", params: { workspacePath: "/w" } } });
    const created = (await b.waitFor(byId(1))).result as { session?: { sessionId?: string }; sessionId?: string };
    const sessionId = created.session?.sessionId ?? created.sessionId;
    const started = Date.now();
    b.send({
      id: 2,
      method: "__call",
      params: {
        service: "agent",
        method: "sendPrompt",
        params: { workspacePath: "/w", sessionId, content: [{ type: "text", text: "hello" }] },
      },
    });
    const ack = await b.waitFor(byId(2));
    expect((ack.result as { accepted: boolean }).accepted).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000); // not the host's 30 s browser timeout
    const answers = readCallLog(install.callLogPath).filter((e) => e.kind === "reverse-answer");
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({
      requestKind: "browser",
      ok: false,
      matched: true,
      errorCode: "backend_unavailable",
      sideEffect: "none",
      elapsedMs: 0,
    });
  });

  it.each([
    ["malformed JSON", "{this is not json}\n", "CHANNEL_PROTOCOL"],
    ["an unknown frame method", `${JSON.stringify({ id: 1, method: "__eval", params: {} })}\n`, "CHANNEL_PROTOCOL"],
    ["a frame with extra keys", `${JSON.stringify({ id: 1, method: "__call", params: {}, jsonrpc: "2.0" })}\n`, "CHANNEL_PROTOCOL"],
  ])("fails closed on %s: host-exit, dispose, non-zero exit", async (_name, line, code) => {
    const b = start();
    await b.waitFor((f) => f.method === "ready");
    b.send(line);
    const exit = await b.waitFor((f) => f.method === "host-exit");
    expect(exit.params).toMatchObject({ reason: "protocol", error: { code } });
    expect((await b.exited).code).toBe(1);
    expect(readCallLog(install.callLogPath).some((e) => e.kind === "parent-message" && e.type === "dispose")).toBe(true);
  });

  it("fails closed on an inbound frame over the limit, before its newline arrives", async () => {
    const b = start({ config: (c) => ({ ...c, frameLimitBytes: 4096 }) });
    await b.waitFor((f) => f.method === "ready");
    b.send(`{"id":1,"method":"__call","params":{"pad":"${"p".repeat(8192)}`); // no newline
    const exit = await b.waitFor((f) => f.method === "host-exit");
    expect(exit.params).toMatchObject({ reason: "protocol", error: { code: "FRAME_TOO_LARGE" } });
    expect((await b.exited).code).toBe(1);
  });

  it("answers FRAME_TOO_LARGE instead of sending an oversized result, and keeps serving", async () => {
    const b = start({ config: (c) => ({ ...c, frameLimitBytes: 2048 }) });
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "agent", method: "createSession", params: { workspacePath: "/w" } } });
    const tooLarge = await b.waitFor(byId(1));
    expect((tooLarge.error as { code: string }).code).toBe("FRAME_TOO_LARGE");
    b.send({ id: 2, method: "__call", params: { service: "task", method: "stopGeneration", params: { taskId: "x" } } });
    expect(await b.waitFor(byId(2))).toEqual({ id: 2, result: null });
  });

  it("disposes the host and exits when the bridge closes the pipe", async () => {
    const b = start();
    await b.waitFor((f) => f.method === "ready");
    b.pipe.end();
    expect(await b.exited).toEqual({ code: 0, signal: null });
    const log = readCallLog(install.callLogPath);
    expect(log.some((e) => e.kind === "parent-message" && e.type === "dispose")).toBe(true);
  });

  it("reports a database start-up failure with its phase and code", async () => {
    const b = start({ env: { ZCODE_SIM_PROFILE: JSON.stringify({ startupFailure: true }) } });
    const exit = await b.waitFor((f) => f.method === "host-exit");
    expect(exit.params).toMatchObject({ reason: "startup-failed" });
    const params = exit.params as { failedPhase?: string; errorCode?: string };
    expect(typeof params.failedPhase).toBe("string");
    expect(typeof params.errorCode).toBe("string");
    expect(b.frames.some((f) => f.method === "ready")).toBe(false);
    expect((await b.exited).code).toBe(1);
  });

  it("reports RPC exports of the wrong shape and never serves", async () => {
    const b = start({ config: (c) => ({ ...c, exports: { ...c.exports, service: "FrameType" } }) });
    const exit = await b.waitFor((f) => f.method === "host-exit");
    expect(exit.params).toMatchObject({ reason: "rpc-wiring" });
    expect(JSON.stringify(exit.params)).toContain("toService");
    expect((await b.exited).code).toBe(1);
  });

  it("refuses an invalid configuration with exit code 2", async () => {
    const b = start({ rawConfigArg: JSON.stringify({ schema: 1, hostIndex: "relative/index.js" }) });
    expect((await b.exited).code).toBe(2);
    expect(b.stderr()).toContain("invalid bootstrap configuration");
  });

  it("keeps the host's output off the channel", async () => {
    const b = start({ env: { ZCODE_SIM_PROFILE: JSON.stringify({ noise: true }) } });
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "agent", method: "initialize", params: { workspacePath: "/w" } } });
    await b.waitFor(byId(1));
    // every frame on fd 3 is one of ours; the host's console output went to stdout/stderr
    for (const frame of b.frames)
      expect(frame.id !== undefined || ["ready", "event", "host-exit", "subscription-end"].includes(String(frame.method))).toBe(true);
    await until(() => (b.stdout() + b.stderr()).includes("[zcode-host"), {
      timeoutMs: 5000,
      intervalMs: 50,
      what: "host output on stdout/stderr",
    });
  });
});
