import { describe, expect, it } from "vitest";
import { MessageChannel } from "node:worker_threads";
import type { SimRelease } from "../../fixtures/sim-install.js";
import { loadRpcModule, type Any } from "./support/host-harness.js";
import { newInstall, startHost, waitForCallLog, WS } from "./support/session-helpers.js";

const V2: SimRelease[] = ["3.12.3", "3.14.5"];
const PHASES = ["starting", "preparing_host_storage", "preparing_session_storage", "starting_services", "ready"];

/** Resolves "pending" when `promise` has not settled within `ms` (an absence can only be bounded). */
function stillPendingAfter(promise: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([
    promise.then(
      (v) => ({ settled: v }),
      (e) => ({ rejected: String(e) }),
    ),
    new Promise((r) => setTimeout(() => r("pending"), ms)),
  ]);
}

describe.each(V2)("v2 init-local and start-up on %s (docs/runtime-contract.md §4.1)", (release) => {
  it("without zcodeBuiltinProviderConfigFilePath: logged as invalid, the port is closed, no start-up, every call hangs", async () => {
    const install = await newInstall(release);
    const host = startHost(install);
    const port = host.init({ zcodeBuiltinProviderConfigFilePath: undefined });
    const closed = new Promise<void>((resolve) => port.once("close", () => resolve()));
    const rpc = await loadRpcModule(install);
    const agent = rpc.ProxyChannel.toService(new rpc.ChannelClient(new rpc.MessagePortProtocol(port)).getChannel("zcode-agent"));
    const call = agent.initialize({ workspacePath: WS });
    await closed;
    const log = await host.waitForMessage(
      (m) => m.type === "log" && m.message.includes("invalid parentPort message: missing zcodeBuiltinProviderConfigFilePath"),
    );
    expect(log.level).toBe("warn");
    expect(await stillPendingAfter(call, 300)).toBe("pending");
    expect(host.startupStates()).toEqual([]);
    const entries = await install.readCallLog();
    expect(entries.find((e) => e.kind === "parent-message")).toMatchObject({
      type: "init-local",
      valid: false,
      reason: "missing zcodeBuiltinProviderConfigFilePath",
      ports: 1,
    });
    expect(entries.some((e) => e.kind === "call")).toBe(false);
    // an empty path is refused the same way; a later init-local with the path starts the host
    host.init({ zcodeBuiltinProviderConfigFilePath: "" });
    await host.waitForMessage(
      (m) => m.type === "log" && m.message.includes("invalid parentPort message: invalid zcodeBuiltinProviderConfigFilePath"),
    );
    const conn = await host.connect();
    await expect(conn.agent.initialize({ workspacePath: WS })).resolves.toMatchObject({ available: true });
  });

  it("with the path: unknown keys are stripped, not rejected; phases in order, the RPC port attached only after ready", async () => {
    const install = await newInstall(release);
    const host = startHost(install, { profile: { startupDelayMs: 200 } });
    const conn = await host.connect({ surprise: true, hostId: "host-1", runtimeProcessEnvPatch: { ZCODE_X: "1" } });
    await expect(conn.agent.initialize({ workspacePath: WS })).resolves.toMatchObject({ available: true });
    // parentPort and the RPC port are separate channels: wait for the log line rather than assume their order
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("creating ChannelServer"));
    expect(host.startupStates().map((s) => s.phase)).toEqual(PHASES);
    const readyAt = host.messages.findIndex((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    const serverAt = host.messages.findIndex((m) => m.type === "log" && m.message.includes("creating ChannelServer"));
    expect(readyAt).toBeGreaterThanOrEqual(0);
    expect(serverAt).toBeGreaterThan(readyAt);
    expect((await install.readCallLog()).find((e) => e.kind === "parent-message")).toMatchObject({ type: "init-local", valid: true });
  });
});

describe("v2 start-up details", () => {
  it("waitForLockMs: preparing_host_storage reports waiting_for_lock first, then the phases continue", async () => {
    const install = await newInstall("3.12.3");
    const host = startHost(install, { profile: { waitForLockMs: 250 } });
    const started = Date.now();
    const conn = await host.connect();
    await conn.client.whenInitialized();
    expect(Date.now() - started).toBeGreaterThanOrEqual(230);
    await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    const states = host.startupStates();
    expect(states.map((s) => [s.phase, s.databasePhase])).toEqual([
      ["starting", "checking"],
      ["preparing_host_storage", "waiting_for_lock"],
      ["preparing_host_storage", "migrating"],
      ["preparing_session_storage", "migrating"],
      ["starting_services", "maintaining"],
      ["ready", "ready"],
    ]);
    for (let k = 1; k < states.length; k++) expect(states[k].sequence).toBeGreaterThan(states[k - 1].sequence);
  });

  it("startupFailure: failed with failedPhase and errorCode, never Initialize", async () => {
    const install = await newInstall("3.12.3");
    const host = startHost(install, { profile: { startupFailure: true } });
    const conn = await host.connect();
    const failed = await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "failed");
    expect(failed.state).toMatchObject({ failedPhase: "preparing_session_storage", errorCode: "migration_failed" });
    expect(conn.client.initialized).toBe(false);
    expect(host.messages.some((m) => m.type === "plugin-sandbox-register-request")).toBe(false);
  });

  it("attach-service-port before ready is queued, then served with the v2 channels", async () => {
    const install = await newInstall("3.14.5");
    const host = startHost(install, { profile: { startupDelayMs: 200 } });
    host.init();
    const { port1, port2 } = new MessageChannel();
    host.post(
      {
        type: "attach-service-port",
        requestId: "rq",
        attachmentId: "extra",
        clientMode: "web-remote-replayable",
        scope: { kind: "local" },
      },
      [port2],
    );
    const rpc = await loadRpcModule(install);
    const client = new rpc.ChannelClient(new rpc.MessagePortProtocol(port1));
    const view = await rpc.ProxyChannel.toService(client.getChannel("model-selection")).getView();
    expect(view.providers.length).toBeGreaterThan(0);
    await host.waitForMessage((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    const readyAt = host.messages.findIndex((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    expect(host.messages.findIndex((m) => m.type === "log" && m.message.includes("local services ready"))).toBeGreaterThan(readyAt);
    client.dispose();
  });
});

describe.each(V2)("plugin-sandbox registration on %s (docs/runtime-contract.md §4.1)", (release) => {
  it("after ready the host posts the request; the bridge's refusal is matched and logged", async () => {
    const install = await newInstall(release);
    const host = startHost(install);
    await (await host.connect()).client.whenInitialized();
    const request = await host.waitForMessage((m) => m.type === "plugin-sandbox-register-request");
    expect(request).toMatchObject({
      requestId: expect.stringMatching(/^plugin-sandbox-/),
      sandboxId: expect.any(String),
      pluginId: expect.any(String),
      entryUrl: expect.stringMatching(/^zcode-plugin:\/\//),
    });
    const readyAt = host.messages.findIndex((m) => m.type === "database-startup-state" && m.state.phase === "ready");
    expect(host.messages.indexOf(request)).toBeGreaterThan(readyAt);
    const log = await waitForCallLog(
      install,
      (e) => e.some((x) => x.kind === "reverse-answer" && x.requestKind === "plugin-sandbox"),
      "the plugin-sandbox answer",
    );
    expect(log.find((e) => e.kind === "reverse-request" && e.requestKind === "plugin-sandbox")).toMatchObject({
      requestId: request.requestId,
      type: "plugin-sandbox-register-request",
    });
    expect(log.find((e) => e.kind === "reverse-answer" && e.requestKind === "plugin-sandbox")).toMatchObject({
      requestId: request.requestId,
      ok: false,
      matched: true,
      error: "Plugin sandboxes are unavailable headless",
    });
    expect(log.find((e) => e.kind === "parent-message" && e.type === "plugin-sandbox-register-result")).toMatchObject({
      valid: true,
      requestId: request.requestId,
    });
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("refused by main: Plugin sandboxes are unavailable headless"));
  });
});

describe("plugin-sandbox edge cases", () => {
  it("unanswered: a reverse-timeout after pluginSandboxWaitMs; RPC is unaffected", async () => {
    const install = await newInstall("3.12.3");
    const host = startHost(install, { answerReverse: false, profile: { pluginSandboxWaitMs: 200 } });
    const conn = await host.connect();
    await expect(conn.agent.initialize({ workspacePath: WS })).resolves.toMatchObject({ available: true });
    const request = await host.waitForMessage((m) => m.type === "plugin-sandbox-register-request");
    const log = await waitForCallLog(install, (e) => e.some((x) => x.kind === "reverse-timeout"), "the plugin-sandbox timeout");
    expect(log.find((e) => e.kind === "reverse-timeout")).toMatchObject({ requestKind: "plugin-sandbox", requestId: request.requestId });
    await host.waitForMessage((m) => m.type === "log" && m.message.includes("plugin sandbox registration got no answer"));
  });

  it("the result is strictly validated; pluginSandbox:false posts no request; v1 neither posts nor accepts it", async () => {
    const install = await newInstall("3.12.3");
    const host = startHost(install, { answerReverse: false, profile: { pluginSandbox: false } });
    await (await host.connect()).client.whenInitialized();
    host.post({ type: "plugin-sandbox-register-result", requestId: "r1", ok: false, error: "no", extra: 1 });
    host.post({ type: "plugin-sandbox-register-result", requestId: "r2", ok: false });
    const log = await waitForCallLog(install, (e) => e.filter((x) => x.kind === "parent-message").length >= 3, "both results");
    expect(
      log.filter((e) => e.kind === "parent-message" && e.type === "plugin-sandbox-register-result").map((e) => [e.valid, e.reason]),
    ).toEqual([
      [false, "unknown key extra"],
      [true, undefined],
    ]);
    await host.waitForMessage(
      (m) => m.type === "log" && m.message.includes("plugin-sandbox-register-result for unknown requestId ignored"),
    );
    expect(host.messages.some((m) => m.type === "plugin-sandbox-register-request")).toBe(false);

    const v1 = await newInstall("3.11.2");
    const v1Host = startHost(v1);
    await (await v1Host.connect()).client.whenInitialized();
    v1Host.post({ type: "plugin-sandbox-register-result", requestId: "r3", ok: false });
    await v1Host.waitForMessage(
      (m) => m.type === "log" && m.message.includes("invalid parentPort message: unknown type plugin-sandbox-register-result"),
    );
    expect(v1Host.messages.some((m: Any) => m.type === "plugin-sandbox-register-request")).toBe(false);
  });
});
