/**
 * HostConnection against the simulated install, with real child processes: lazy start,
 * allowlist, null results, semantic operations, timeouts from the one table, start-up
 * budget and failures, frame limits, subscriptions, graceful close.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BridgeError } from "../../../src/util/errors.js";
import { EventCollector, openConnection, rejectionOf, type TestConnection } from "./support/connect.js";
import { processAlive } from "../../support/processes.js";
import { createTestInstall, readCallLog, supportedAssessment, type TestInstall } from "./support/sim.js";
import { HostConnection } from "../../../src/host/host-connection.js";
import { silentLogger } from "../../../src/log/logger.js";
import { until } from "../../support/until.js";

let install: TestInstall;
let opened: TestConnection[] = [];

beforeEach(async () => {
  install = await createTestInstall();
  opened = [];
});

afterEach(async () => {
  const pids = opened.map((c) => c.host.pid).filter((p): p is number => p !== undefined);
  await Promise.all(opened.map((c) => c.host.close()));
  for (const pid of pids) expect(processAlive(pid), `host ${pid} left behind`).toBe(false);
  await install.cleanup();
});

function connect(options?: Parameters<typeof openConnection>[1]): TestConnection {
  const c = openConnection(install, options);
  opened.push(c);
  return c;
}

const W = { workspacePath: "/w" };

async function newSession(c: TestConnection): Promise<string> {
  const created = await c.host.call<{ session: { sessionId: string } }>("agent", "createSession", W);
  return created.session.sessionId;
}

/** the content of the first tool.updated result among `events` */
function toolResult(events: unknown[]): string {
  for (const event of events as Array<{
    type: string;
    event?: { type: string; payload: { kind?: string; result?: { content: string } } };
  }>) {
    if (event.type === "session.event" && event.event?.type === "tool.updated" && event.event.payload.kind === "result") {
      return event.event.payload.result!.content;
    }
  }
  throw new Error("no tool result among the events");
}

describe("HostConnection", () => {
  it("starts lazily, once, for concurrent first calls", async () => {
    const c = connect();
    expect(c.host.incarnation).toBe(0);
    expect(c.host.pid).toBeUndefined();
    const [a, b] = await Promise.all([c.host.call("agent", "initialize", W), c.host.call("agent", "readWorkspaceState", W)]);
    expect((a as { available: boolean }).available).toBe(true);
    expect(b).toHaveProperty("workspace");
    expect(c.host.incarnation).toBe(1);
    expect(typeof c.host.pid).toBe("number");
    expect(readCallLog(install.callLogPath).filter((e) => e.kind === "parent-message" && e.type === "init-local")).toHaveLength(1);
  });

  it("refuses a method outside the manifest's allowlist before it reaches the host", async () => {
    const c = connect();
    await c.host.call("agent", "initialize", W);
    const error = await rejectionOf(c.host.call("agent", "deleteWorkspace", W));
    expect(error).toBeInstanceOf(BridgeError);
    expect(error.code).toBe("METHOD_NOT_ALLOWED");
    expect(readCallLog(install.callLogPath).some((e) => e.method === "deleteWorkspace")).toBe(false);
    expect(c.host.incarnation).toBe(1);
    await expect(c.host.call("agent", "initialize", W)).resolves.toBeTruthy();
  });

  it("answers null for a void method and maps sessionId to the descriptor's key", async () => {
    const c = connect();
    const sessionId = await newSession(c);
    await expect(c.host.operate("cancelGeneration", sessionId, W)).resolves.toBeNull();
    const stop = readCallLog(install.callLogPath).find((e) => e.method === "stopGeneration");
    expect(stop).toMatchObject({ service: "zcode-task", params: { workspacePath: "/w", taskId: sessionId } });
  });

  it("refuses an unsupported install with its message and launches nothing", async () => {
    const c = connect();
    const refused = new HostConnection({
      logger: silentLogger,
      env: process.env,
      resolveInstall: async () => ({
        ...supportedAssessment(install),
        supported: false,
        failedStep: "version",
        message: "ZCode 9.9.9 is not supported",
      }),
    });
    const error = await rejectionOf(refused.call("agent", "initialize", W));
    expect([error.code, error.message]).toEqual(["UNSUPPORTED_ZCODE", "ZCode 9.9.9 is not supported"]);
    expect(refused.incarnation).toBe(0);
    expect(readCallLog(install.callLogPath)).toEqual([]);
    void c;
  });

  it("times out one call from the timeout table, ignores its late answer and keeps the host", async () => {
    const c = connect({ profile: { taskChannelDelayMs: 700 }, timeouts: { cancel: 200 } });
    await c.host.call("agent", "initialize", W);
    const error = await rejectionOf(c.host.call("task", "stopGeneration", { ...W, taskId: "t1" }, { timeout: "cancel" }));
    expect(error.code).toBe("HOST_TIMEOUT");
    expect(c.readLog()).not.toContain("late internal channel response ignored"); // it did not wait for the answer
    // the parked call is served once the channel registers: its answer arrives late and is ignored
    await until(() => c.readLog().includes("late internal channel response ignored"), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: "the late answer",
    });
    await expect(c.host.call("task", "stopGeneration", { ...W, taskId: "t2" }, { timeout: "cancel" })).resolves.toBeNull();
    expect(c.host.incarnation).toBe(1);
    expect(c.exits).toEqual([]);
  });

  it("waits for a slow start-up without timing out the first call", async () => {
    const c = connect({ profile: { startupDelayMs: 2500 }, timeouts: { initialize: 1000 } });
    const started = Date.now();
    await expect(c.host.call("agent", "initialize", W, { timeout: "initialize" })).resolves.toMatchObject({ available: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });

  it("reports a start-up failure with phase and code, leaves no process, and retries on the next call", async () => {
    const c = connect({ profile: { startupFailure: true } });
    const error = await rejectionOf(c.host.call("agent", "initialize", W));
    expect(error.code).toBe("HOST_START_FAILED");
    expect(error.details).toMatchObject({ reason: "startup-failed", incarnation: 1 });
    expect(typeof error.details?.failedPhase).toBe("string");
    expect(typeof error.details?.errorCode).toBe("string");
    await until(() => c.exits.length === 1, { timeoutMs: 5000, intervalMs: 50, what: "the exit notification" });
    expect(c.exits[0]?.incarnation).toBe(1);
    const again = await rejectionOf(c.host.call("agent", "initialize", W));
    expect(again.code).toBe("HOST_START_FAILED");
    expect(c.host.incarnation).toBe(2);
  });

  it("gives up on a host that never becomes ready within the start-up budget", async () => {
    const c = connect({ profile: { startupDelayMs: 60_000 }, timeouts: { startup: 500 } });
    const error = await rejectionOf(c.host.call("agent", "initialize", W));
    expect(error.code).toBe("HOST_START_FAILED");
    expect(error.message).toContain("500 ms");
    await until(() => readCallLog(install.callLogPath).some((e) => e.kind === "exit"), {
      timeoutMs: 8000,
      intervalMs: 50,
      what: "the host to exit",
    });
  });

  it("close() during a start abandons it at once: the waiting call fails, the process is gone, nothing is relaunched (adr/0019)", async () => {
    const c = connect({ profile: { startupDelayMs: 60_000 } });
    const first = rejectionOf(c.host.call("agent", "initialize", W));
    await until(() => readCallLog(install.callLogPath).some((e) => e.kind === "parent-message" && e.type === "init-local"), {
      timeoutMs: 8000,
      intervalMs: 20,
      what: "the start-up under way",
    });
    const pid = c.host.pid!;
    expect(processAlive(pid)).toBe(true);
    const closing = c.host.close();
    // bounded by the abandon steps (channel close → SIGTERM → SIGKILL, 400 ms each), not by the start
    const closedIn = await Promise.race([closing.then(() => "closed"), new Promise((r) => setTimeout(() => r("late"), 1500).unref())]);
    expect(closedIn).toBe("closed");
    expect(processAlive(pid)).toBe(false);
    const error = await first;
    expect(error.code).toBe("HOST_START_FAILED");
    expect(error.message).toContain("abandoned");
    expect(c.host.incarnation).toBe(1);
    expect((await rejectionOf(c.host.call("agent", "initialize", W))).code).toBe("CHANNEL_CLOSED");
  });

  it("refuseStarts() keeps a ready host for the last calls and refuses a relaunch after it", async () => {
    const c = connect();
    await c.host.call("agent", "initialize", W);
    await c.host.refuseStarts();
    await expect(c.host.call("agent", "initialize", W)).resolves.toBeTruthy();
    const pid = c.host.pid!;
    c.host.killNow();
    await until(() => !processAlive(pid), { timeoutMs: 2000, intervalMs: 20, what: "the SIGKILLed host gone" });
    expect((await rejectionOf(c.host.call("agent", "initialize", W))).code).toBe("CHANNEL_CLOSED");
  });

  it("refuses an oversized outbound frame locally; an event over the channel's bound arrives reduced, the subscription goes on", async () => {
    const c = connect({ frameLimitBytes: 64 * 1024 });
    const error = await rejectionOf(c.host.call("agent", "initialize", { ...W, pad: "p".repeat(100_000) }));
    expect(error.code).toBe("FRAME_TOO_LARGE");
    const sessionId = await newSession(c);
    const sink = new EventCollector();
    await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true }, sink);
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text: "sim:large-output bytes=200000" }] });
    await sink.until((s) => s.sessionEventTypes().includes("turn.completed"));
    expect(sink.ended).toBeUndefined();
    const result = toolResult(sink.events);
    // a 64 KiB channel bounds one event to 16 KiB: its strings keep their heads, then the marker
    expect(result.length).toBeLessThan(16 * 1024);
    expect(result).toMatch(/^0123456789abcdef/);
    expect(result).toMatch(/\n… \[zcode-acp: 19\d\.\d kB more not shown\]$/);
    // the host and the channel are fine
    expect(c.host.incarnation).toBe(1);
    await expect(c.host.call("agent", "initialize", W)).resolves.toBeTruthy();
  });

  it("reduces a tool result of several MB to its head and a marker inside the Electron process", async () => {
    const c = connect();
    const sessionId = await newSession(c);
    const sink = new EventCollector();
    await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous" }, sink);
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text: "sim:large-output bytes=5000000" }] });
    await sink.until((s) => s.sessionEventTypes().includes("turn.completed"));
    const result = toolResult(sink.events);
    expect(result.slice(0, 256 * 1024)).toBe(
      "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz012345678\n".repeat(4000).slice(0, 256 * 1024),
    );
    expect(result.slice(256 * 1024)).toBe("\n… [zcode-acp: 4.7 MB more not shown]");
    expect(JSON.stringify(sink.events).length).toBeLessThan(1_000_000);
    expect(sink.ended).toBeUndefined();
  });

  it("answers snapshots without their messages and holds a history read for paging (__history next / close)", async () => {
    const c = connect();
    const sessionId = await newSession(c);
    const sink = new EventCollector();
    await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous" }, sink);
    for (const text of ["one", "two"]) {
      await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text }] });
      await sink.until((s) => s.sessionEventTypes().filter((t) => t === "turn.completed").length === (text === "one" ? 1 : 2));
    }
    const ref = { ...W, sessionId };
    for (const method of ["resumeSession", "readSession", "setMode"]) {
      const params = method === "setMode" ? { ...ref, mode: "edit" } : ref;
      const snapshot = await c.host.call<{ messages: unknown[]; session: { sessionId: string } }>("agent", method, params);
      expect([method, snapshot.session.sessionId, snapshot.messages]).toEqual([method, sessionId, []]);
    }
    const handle = await c.host.call<{ historyId: string; total: number }>("agent", "readSessionMessages", ref);
    expect(handle).toEqual({ historyId: expect.stringMatching(/^h\d+$/), total: 4 });
    const piece = (await c.host.history(handle.historyId, "next")) as { messages: Array<{ info: { role: string } }>; done: boolean };
    expect(piece.messages.map((m) => m.info.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(piece.done).toBe(true);
    // released after its last piece; a second read is released by close
    await expect(c.host.history(handle.historyId, "next")).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
      message: expect.stringContaining("no longer held"),
    });
    const again = await c.host.call<{ historyId: string }>("agent", "readSessionMessages", ref);
    await expect(c.host.history(again.historyId, "close")).resolves.toBeNull();
    await expect(c.host.history(again.historyId, "close")).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    await expect(c.host.history("not-an-id", "next")).rejects.toMatchObject({ code: "CHANNEL_PROTOCOL" });
  });

  it("delivers subscription events in order and ends the subscription with null on dispose", async () => {
    const c = connect();
    const sessionId = await newSession(c);
    const sink = new EventCollector();
    const sub = await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true }, sink);
    expect(sub.incarnation).toBe(1);
    await sink.until((s) => s.events.length > 0);
    expect((sink.events[0] as { type: string }).type).toBe("snapshot");
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text: "sim:stream n=500 bytes=16" }] });
    await sink.until((s) => s.sessionEventTypes().includes("turn.completed"));
    const seqs = sink.events
      .filter((e): e is { type: string; event: { seq: number } } => (e as { type: string }).type === "session.event")
      .map((e) => e.event.seq);
    expect(seqs.length).toBeGreaterThan(500);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    await sub.dispose();
    expect(sink.ended).toBeNull();
    expect(sink.endCount).toBe(1);
    await until(() => readCallLog(install.callLogPath).some((e) => e.kind === "listen-dispose"), {
      timeoutMs: 5000,
      intervalMs: 50,
      what: "listen-dispose",
    });
  });

  it("holds back reading while a slow consumer is behind, without losing events", async () => {
    const c = connect({ maxPendingDeliveries: 8 });
    const sessionId = await newSession(c);
    const seen: number[] = [];
    let completed = false;
    await c.host.subscribe(
      { ...W, sessionId, deliveryKind: "desktop-continuous" },
      {
        onEvent: async (event) => {
          const e = event as { type: string; event?: { seq: number; type: string } };
          if (e.type !== "session.event" || !e.event) return;
          await new Promise((resolve) => setImmediate(resolve));
          seen.push(e.event.seq);
          if (e.event.type === "turn.completed") completed = true;
        },
        onEnd: () => undefined,
      },
    );
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text: "sim:stream n=2000 bytes=8" }] });
    await until(() => completed, { timeoutMs: 20_000, intervalMs: 50, what: "turn.completed" });
    expect(seen.length).toBeGreaterThan(2000);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("ends the subscription with CHANNEL_OVERFLOW when its consumer never catches up (no unbounded queue)", async () => {
    const c = connect({ frameLimitBytes: 16 * 1024, maxPendingDeliveries: 4 });
    const sessionId = await newSession(c);
    const releases: Array<() => void> = [];
    let delivered = 0;
    let ended: unknown;
    await c.host.subscribe(
      { ...W, sessionId, deliveryKind: "desktop-continuous" },
      {
        onEvent: () => {
          delivered += 1;
          return new Promise<void>((resolve) => releases.push(resolve));
        },
        onEnd: (error) => (ended = error),
      },
    );
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: [{ type: "text", text: "sim:stream n=20000 bytes=64" }] });
    // the host fires everything at its own pace; the bridge holds back reading meanwhile
    await until(() => readCallLog(install.callLogPath).some((e) => e.kind === "fire" && e.type === "turn.completed"), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: "the host to finish the turn",
    });
    expect(delivered).toBeLessThan(100);
    // the consumer catches up: what was in the pipe arrives, then the end (not 20000 queued events)
    await until(
      () => {
        for (const release of releases.splice(0)) release();
        return ended !== undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: "the subscription to end" },
    );
    expect((ended as BridgeError).code).toBe("CHANNEL_OVERFLOW");
    expect(delivered).toBeLessThan(20_000);
    expect(c.host.incarnation).toBe(1);
    await expect(c.host.call("agent", "initialize", W)).resolves.toBeTruthy();
  });

  it("closes gracefully: dispose reaches the host, it exits 0, later calls are refused", async () => {
    const c = connect();
    await c.host.call("agent", "initialize", W);
    const pid = c.host.pid as number;
    await c.host.close();
    expect(processAlive(pid)).toBe(false);
    const log = readCallLog(install.callLogPath);
    expect(log.some((e) => e.kind === "parent-message" && e.type === "dispose")).toBe(true);
    expect(log.find((e) => e.kind === "exit")).toMatchObject({ code: 0 });
    expect(c.exits.map((e) => e.incarnation)).toEqual([1]);
    expect((await rejectionOf(c.host.call("agent", "initialize", W))).code).toBe("CHANNEL_CLOSED");
    await c.host.close();
  });
});
