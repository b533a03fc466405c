import { describe, expect, it } from "vitest";
import { fork } from "node:child_process";
import { MessageChannel } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { until } from "../support/until.js";
import type { Any } from "./support/host-harness.js";
import { newInstall, startHost, WS } from "./support/session-helpers.js";

const PHASES = ["starting", "preparing_host_storage", "preparing_session_storage", "starting_services", "ready"];

describe("start-up (docs/zcode-host.md §2.6, §2.9)", () => {
  it("publishes the phases in order with one startupId / attemptId and an increasing sequence, then Initialize", async () => {
    const install = await newInstall();
    const host = startHost(install);
    const conn = await host.connect({ databaseStartupId: "st-test-1" });
    await conn.client.whenInitialized();
    await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    const states = host.startupStates();
    expect(states.map((s) => s.phase)).toEqual(PHASES);
    for (const [k, state] of states.entries()) {
      expect(state).toMatchObject({ schemaVersion: 1, startupId: "st-test-1", attemptId: states[0].attemptId, disk: [] });
      if (k > 0) expect(state.sequence).toBeGreaterThan(states[k - 1].sequence);
    }
    expect(states.at(-1)).toMatchObject({ databasePhase: "ready", migration: { kind: "initialize" } });
    // parentPort and the RPC port are separate channels: wait for the log lines rather than assume their order
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("creating ChannelServer (deferInit=false)"));
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("local services ready, all channels registered"));
    await expect(conn.agent.initialize({ workspacePath: WS })).resolves.toMatchObject({ available: true });
  });

  it("waits startupDelayMs before ready; calls made meanwhile are buffered by the client, not failed", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { startupDelayMs: 400 } });
    const started = Date.now();
    const conn = await host.connect();
    const result = await conn.agent.initialize({ workspacePath: WS });
    expect(result.available).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    expect(host.startupStates().map((s) => s.phase)).toEqual(PHASES);
  });

  it("a failed start-up reports phase failed and never sends Initialize; retry fails again with a new attempt", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { startupFailure: true } });
    const conn = await host.connect();
    const failed = await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "failed");
    expect(failed.state).toMatchObject({
      schemaVersion: 1,
      failedPhase: "preparing_session_storage",
      errorCode: "migration_failed",
      disk: [],
    });
    host.post({ type: "database-startup-control", control: { action: "retry", attemptId: "att-retry" } });
    const retried = await host.waitForMessage(
      (m) => m.type === "database-startup-state" && m.state.attemptId === "att-retry" && m.state.phase === "failed",
    );
    expect(retried.state.sequence).toBeGreaterThan(failed.state.sequence);
    expect(conn.client.initialized).toBe(false);
    expect(host.messages.some((m) => m.type === "log" && m.message.includes("creating ChannelServer"))).toBe(false);
  });
});

describe("strict parentPort validation (docs/zcode-host.md §2.3, §12.1 item 2)", () => {
  function portClosed(port: Any): Promise<void> {
    return new Promise((resolve) => port.once("close", resolve));
  }

  it("logs, closes the transferred ports and ignores an unknown type", async () => {
    const install = await newInstall();
    const host = startHost(install);
    const { port1, port2 } = new MessageChannel();
    const closed = portClosed(port1);
    host.post({ type: "start-oauth-login" }, [port2]);
    await closed;
    const log = await host.waitForMessage((m) => m.type === "log" && m.message.includes("invalid parentPort message"));
    expect(log).toMatchObject({ level: "warn", source: "host" });
    port1.close();
  });

  it("rejects init-local with an unknown key (closing its port) and starts nothing", async () => {
    const install = await newInstall();
    const host = startHost(install);
    const { port1, port2 } = new MessageChannel();
    const closed = portClosed(port1);
    host.post({ type: "init-local", deviceMid: "x", surprise: true }, [port2]);
    await closed;
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("unknown key surprise"));
    expect(host.startupStates()).toEqual([]);
    const log = await install.readCallLog();
    expect(log.find((e) => e.kind === "parent-message")).toMatchObject({
      type: "init-local",
      valid: false,
      reason: "unknown key surprise",
      ports: 1,
    });
    port1.close();
  });

  it("ignores init-local without a port, and a second init-local closes its port and re-publishes the state", async () => {
    const install = await newInstall();
    const host = startHost(install);
    host.post({ type: "init-local", deviceMid: "x" });
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("init-local without a service port ignored"));
    expect(host.startupStates()).toEqual([]);
    const conn = await host.connect();
    await conn.client.whenInitialized();
    await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    const before = host.startupStates();
    const { port1, port2 } = new MessageChannel();
    const closed = portClosed(port1);
    host.post({ type: "init-local", deviceMid: "again" }, [port2]);
    await closed;
    await until(() => host.startupStates().length === before.length + 1, {
      timeoutMs: 3000,
      intervalMs: 5,
      what: "the re-published state",
    });
    expect(host.startupStates().at(-1)).toEqual(before.at(-1));
    await expect(conn.agent.initialize({ workspacePath: WS })).resolves.toMatchObject({ available: true });
    port1.close();
  });

  it("rejects malformed reverse results (strict) and records every parent message in the call log", async () => {
    const install = await newInstall();
    const host = startHost(install);
    host.post({
      type: "browser-execute-result",
      requestId: "r1",
      result: { ok: false, elapsedMs: 0, error: { code: "nope", message: "x" } },
    });
    host.post({ type: "local-media-preview-path-authorize-result", requestId: "r2", ok: false, error: "x", extra: 1 });
    host.post({ type: "cron-run", automationId: "a" });
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("ignoring cron-run"));
    const entries = (await install.readCallLog()).filter((e) => e.kind === "parent-message");
    expect(entries.map((e) => [e.type, e.valid])).toEqual([
      ["browser-execute-result", false],
      ["local-media-preview-path-authorize-result", false],
      ["cron-run", true],
    ]);
  });
});

describe("shutdown (docs/zcode-host.md §2.9, §12.1 item 11)", () => {
  it("dispose: the RPC port closes, pending calls reject, the host exits 0 well within 3.5 s", async () => {
    const install = await newInstall();
    const host = startHost(install);
    const conn = await host.connect();
    await conn.agent.initialize({ workspacePath: WS });
    const started = Date.now();
    const code = await host.dispose();
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(3500);
    await expect(conn.agent.initialize({ workspacePath: WS })).rejects.toMatchObject({ name: "ConnectionClosed" });
    const log = await install.readCallLog();
    expect(log.at(-1)).toMatchObject({ kind: "exit", code: 0, reason: "dispose" });
  });

  it("disposeDelayMs: dispose is acted on that late (a host busy winding down), then the host exits 0", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { disposeDelayMs: 300 } });
    await (await host.connect()).client.whenInitialized();
    host.post({ type: "dispose" });
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("dispose: winding down for 300 ms"));
    expect((await install.readCallLog()).some((e) => e.kind === "exit")).toBe(false);
    expect(await host.exited).toBe(0);
    expect((await install.readCallLog()).at(-1)).toMatchObject({ kind: "exit", code: 0, reason: "dispose" });
  });

  it("database-startup-control exit ends the host with 0", async () => {
    const install = await newInstall();
    const host = startHost(install);
    await (await host.connect()).client.whenInitialized();
    host.post({ type: "database-startup-control", control: { action: "exit" } });
    expect(await host.exited).toBe(0);
  });

  it("SIGTERM cleans up and exits 0 (host as a child process)", async () => {
    const install = await newInstall();
    const script = fileURLToPath(new URL("./support/child-host.mjs", import.meta.url));
    const child = fork(script, [join(install.appArchive, "out/host/index.js")], {
      env: { ...process.env, ...install.env },
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) =>
      child.on("message", (m: Any) => {
        if (m?.type === "database-startup-state" && m.state.phase === "ready") resolve();
      }),
    );
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect((await install.readCallLog()).at(-1)).toMatchObject({ kind: "exit", code: 0, reason: "SIGTERM" });
  });
});

describe("profiles: noise and late channels", () => {
  it("noise: telemetry and log messages flow while serving", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { noise: true } });
    const conn = await host.connect();
    await conn.agent.initialize({ workspacePath: WS });
    for (const type of [
      "network-telemetry-batch",
      "host-resource-sample",
      "off-peak-scheduler-wake-request",
      "agent-process-spawned",
      "agent-process-ready",
    ]) {
      await host.waitForMessage((m) => m.type === type, 3000, type);
    }
  });

  it("taskChannelNever: a zcode-task call fails with Unknown channel after 1000 ms", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { taskChannelNever: true } });
    const conn = await host.connect();
    await expect(conn.task.stopGeneration({ taskId: "x" })).rejects.toMatchObject({
      name: "Unknown channel",
      message: "Channel name 'zcode-task' timed out after 1000ms",
    });
    expect((await install.readCallLog()).some((e) => e.kind === "unknown-channel-timeout" && e.service === "zcode-task")).toBe(true);
  });

  it("taskChannelDelayMs below the timeout: the parked call is replayed once the channel registers", async () => {
    const install = await newInstall();
    const host = startHost(install, { profile: { taskChannelDelayMs: 300 } });
    const conn = await host.connect();
    await expect(conn.task.respondPermission({ taskId: "nobody", requestId: "r", optionId: "o" })).resolves.toBe(false);
  });

  it("attach-service-port serves the same sessions on an extra port", async () => {
    const install = await newInstall();
    const host = startHost(install);
    const conn = await host.connect();
    const snapshot = await conn.agent.createSession({ workspacePath: WS });
    const { port1, port2 } = new MessageChannel();
    host.post(
      { type: "attach-service-port", requestId: "rq", attachmentId: "extra", clientMode: "desktop-continuous", scope: { kind: "local" } },
      [port2],
    );
    const client = new conn.rpc.ChannelClient(new conn.rpc.MessagePortProtocol(port1));
    const agent = conn.rpc.ProxyChannel.toService(client.getChannel("zcode-agent"));
    const read = await agent.readSession({ workspacePath: WS, sessionId: snapshot.session.sessionId });
    expect(read.session.sessionId).toBe(snapshot.session.sessionId);
    port1.close();
  });
});
