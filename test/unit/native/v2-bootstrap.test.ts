/**
 * The zcode-task-v2 line inside the Electron process (docs/runtime-contract.md §2.1, §4.1), driven with raw
 * NDJSON frames against a simulated ZCode 3.12.3: init-local carries the builtin provider config,
 * getView leaves the process reduced (the secret key never crosses the channel), the plugin-sandbox
 * request is refused at once, and host files changed after verification are refused before any
 * host code runs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SIM_PROVIDER_SECRET } from "../../../fixtures/sim-install.js";
import { startRawBootstrap, type RawBootstrap } from "../host/support/raw-bootstrap.js";
import { createTestInstall, readCallLog, type TestInstall } from "../host/support/sim.js";

let install: TestInstall | undefined;
const running: RawBootstrap[] = [];

afterEach(async () => {
  for (const b of running.splice(0)) {
    if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill("SIGKILL");
    await b.exited;
  }
  await install?.cleanup();
  install = undefined;
});

async function start(options?: Parameters<typeof startRawBootstrap>[1]): Promise<RawBootstrap> {
  install = await createTestInstall({ release: "3.12.3" });
  const b = startRawBootstrap(install, options);
  running.push(b);
  return b;
}

describe("zcode-task-v2 bootstrap", () => {
  it("starts the host with the builtin provider config and serves a reduced model view only", async () => {
    const b = await start();
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "modelSelection", method: "getView", params: {} } });
    const answer = await b.waitFor((f) => f.id === 1);
    const view = answer.result as {
      providers: Array<{ providerId: string; providerName: string; models: Array<Record<string, unknown>> }>;
    };
    expect(view.providers.length).toBeGreaterThan(0);
    for (const provider of view.providers) {
      expect(Object.keys(provider).sort()).toEqual(["models", "providerId", "providerName"]);
      for (const model of provider.models)
        expect(Object.keys(model).every((k) => ["modelId", "name", "contextWindow", "reasoningLevels"].includes(k))).toBe(true);
    }
    // the raw view holds the key; nothing of it crossed the channel
    const channelBytes = b.frames.map((f) => JSON.stringify(f)).join("\n");
    expect(channelBytes).not.toContain(SIM_PROVIDER_SECRET);
    expect(channelBytes).not.toContain("apiKey");

    const log = readCallLog(install!.callLogPath);
    const init = log.find((e) => e.kind === "parent-message" && e.type === "init-local");
    expect(init).toMatchObject({ valid: true });
    // the plugin-sandbox request was answered with a refusal at once
    const request = log.find((e) => e.kind === "reverse-request" && e.requestKind === "plugin-sandbox");
    expect(request).toBeDefined();
    await expect
      .poll(() => readCallLog(install!.callLogPath).find((e) => e.kind === "reverse-answer" && e.requestId === request!.requestId), {
        timeout: 5000,
      })
      .toMatchObject({ ok: false, matched: true });
  });

  it("refuses a readWorkspaceState call before dispatch (not in the v2 allowlist)", async () => {
    const b = await start();
    await b.waitFor((f) => f.method === "ready");
    b.send({ id: 1, method: "__call", params: { service: "agent", method: "readWorkspaceState", params: { workspacePath: "/w" } } });
    expect(((await b.waitFor((f) => f.id === 1)).error as { code: string }).code).toBe("METHOD_NOT_ALLOWED");
  });

  it("refuses host files that differ from the verified SHA-256 before any host code runs", async () => {
    const b = await start({ config: (config) => ({ ...config, expectedSha256: { ...config.expectedSha256, rpcModule: "0".repeat(64) } }) });
    const exit = await b.waitFor((f) => f.method === "host-exit");
    expect(exit.params).toMatchObject({ reason: "integrity" });
    expect(JSON.stringify(exit.params)).toMatch(/RPC module .* changed after zcode-acp verified it/);
    expect((await b.exited).code).toBe(1);
    // the host never ran: it would have logged the parent messages it received
    expect(readCallLog(install!.callLogPath)).toEqual([]);
  });
});
