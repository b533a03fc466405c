/**
 * The zcode-task-v2 line through the built CLI against a simulated ZCode 3.12.3: `check` names the
 * line and the RPC roles found by shape; `session/new` offers the models and reasoning levels of
 * getView and the modes and slash commands of the workspace presentation; plan is the planEnabled
 * flag; the provider key of the raw model view appears in no output. (Every other e2e suite runs on
 * this line too: vitest.config.ts.)
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSimulatedInstall,
  SIM_PROVIDER_SECRET,
  SIM_RELEASES,
  V2_DEFAULT_SELECTION,
  V2_PROVIDERS,
  type SimInstall,
} from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { runCli } from "../../support/cli-process.js";
import { implementedLinesPattern } from "../../support/verified-releases.js";

let sim: SimInstall;
const clients: AcpTestClient[] = [];

beforeAll(async () => {
  sim = await createSimulatedInstall({ release: "3.12.3" });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await sim.cleanup();
});

async function start(env: Record<string, string> = {}): Promise<AcpTestClient> {
  const client = await AcpTestClient.start({ env: { ...sim.env, ...env } });
  clients.push(client);
  await client.initialize();
  return client;
}

const workspace = () => mkdtemp(join(dirname(sim.root), "ws-"));

describe("zcode-task-v2 (simulated ZCode 3.12.3) through the built CLI", () => {
  it("check passes, names the release line and how the RPC module was found", async () => {
    const { code, stdout, stderr } = await runCli(["check"], { env: sim.env });
    if (code !== 0) throw new Error(`check failed (exit ${code}):\n${stdout}${stderr}`);
    const { protocol, client, service } = SIM_RELEASES["3.12.3"].exports;
    expect(stdout).toContain("release line zcode-task-v2");
    expect(stdout).toContain(`by shape: ${SIM_RELEASES["3.12.3"].rpcModule}, protocol ${protocol}, client ${client}, service ${service}`);
    expect([protocol, client, service]).not.toEqual(["g", "i", "j"]);
  });

  it("session/new offers getView's models and levels and the presentation's modes and commands", async () => {
    const client = await start();
    const created = await client.newSession(await workspace());
    const model = created.configOptions!.find((o) => o.id === "model") as {
      currentValue: string;
      options: Array<{ value: string; name: string; description?: string }>;
    };
    const expected = V2_PROVIDERS.flatMap((p) => p.models.map((m) => `${p.providerId}/${m.modelId}`));
    expect(model.options.map((o) => o.value)).toEqual(expected);
    expect(model.options[0]).toMatchObject({ name: V2_PROVIDERS[0]!.models[0]!.displayName, description: V2_PROVIDERS[0]!.providerName });
    expect(model.currentValue).toBe(`${V2_DEFAULT_SELECTION.providerId}/${V2_DEFAULT_SELECTION.modelId}`);
    const thought = created.configOptions!.find((o) => o.id === "thought_level") as {
      currentValue: string;
      options: Array<{ value: string }>;
    };
    const levels = V2_PROVIDERS[0]!.models[0]!.reasoningLevels!;
    expect(thought.options.map((o) => o.value)).toEqual(levels);
    expect(thought.currentValue).toBe(V2_DEFAULT_SELECTION.options?.reasoningLevel ?? levels.at(-1));
    expect(created.modes!.availableModes.map((m) => m.id)).toEqual(["build", "edit", "plan", "yolo"]);
    expect(created.modes!.currentModeId).toBe("build");
    const commands = await client.waitForUpdate(created.sessionId, (u) => u.sessionUpdate === "available_commands_update");
    expect(commands.availableCommands.map((c: { name: string }) => c.name)).toEqual(["compact", "plan", "review", "init"]);

    // a model without reasoning levels: no thought_level option; the selection is sent as a ModelSelection
    const plain = expected.find((v) => v.endsWith("/GLM-4.5-Air"))!;
    const switched = await client.agent.request("session/set_config_option", {
      sessionId: created.sessionId,
      configId: "model",
      value: plain,
    });
    expect(switched.configOptions.map((o) => o.id)).toEqual(["model", "mode"]);
    const calls = (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === "setModel");
    expect(calls.at(-1)!.params).toMatchObject({ model: { providerId: "account:bigmodel-start-plan", modelId: "GLM-4.5-Air" } });
    client.expectValid();
  });

  it("plan is the planEnabled flag: set_mode plan keeps the editing mode, an editing mode turns plan off", async () => {
    const client = await start();
    const { sessionId } = await client.newSession(await workspace());
    await client.agent.request("session/set_mode", { sessionId, modeId: "edit" });
    await client.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    const planned = await client.agent.request("session/set_config_option", { sessionId, configId: "mode", value: "plan" });
    expect(planned.configOptions.find((o) => o.id === "mode")).toMatchObject({ currentValue: "plan" });
    const read = (await sim.readCallLog())
      .filter((e) => e.kind === "call" && e.method === "setMode")
      .map((e) => (e.params as { mode: string }).mode);
    expect(read).toEqual(["edit", "plan", "plan"]);
    await client.agent.request("session/set_mode", { sessionId, modeId: "yolo" });
    const left = await client.waitForUpdate(
      sessionId,
      (u) =>
        u.sessionUpdate === "config_option_update" && u.configOptions.find((o: { id: string }) => o.id === "mode").currentValue === "yolo",
    );
    expect(left).toBeDefined();
    client.expectValid();
  });

  it("a cold resume after a host crash re-applies plan (3.12.3 does not keep it)", async () => {
    const client = await start();
    const { sessionId } = await client.newSession(await workspace());
    await client.agent.request("session/set_mode", { sessionId, modeId: "plan" });
    await expect(client.prompt(sessionId, "sim:crash")).rejects.toBeDefined();
    await expect(client.prompt(sessionId, "after the crash")).resolves.toMatchObject({ stopReason: "end_turn" });
    // a V4 command counts for the session of its envelope, named by its type (the prompt is `sendText`; adr/0022)
    const calls = (await sim.readCallLog())
      .map((e) =>
        e.method === "sendConversationCommandV4"
          ? { ...e, method: `v4.${(e.params as any).envelope.type}`, params: (e.params as any).envelope }
          : e,
      )
      .filter((e) => e.kind === "call" && (e.params as { sessionId?: string } | undefined)?.sessionId === sessionId);
    const resumed = calls.findLastIndex((e) => e.method === "resumeSession");
    expect(resumed).toBeGreaterThanOrEqual(0);
    // the restarted host resumed the session without plan; the bridge set it again before prompting
    const after = calls
      .slice(resumed + 1)
      .map((e) => `${e.method}${e.method === "setMode" ? `:${(e.params as { mode: string }).mode}` : ""}`);
    expect(after.indexOf("setMode:plan")).toBeGreaterThanOrEqual(0);
    expect(after.indexOf("setMode:plan")).toBeLessThan(after.indexOf("v4.sendText"));
    client.expectValid();
  });

  it("at launch, a manifest naming a release line this build does not implement is refused, naming the implemented ones", async () => {
    const bad = structuredClone(sim.manifest);
    bad.artifact.protocolId = bad.protocol.id = "zcode-task-v9";
    const file = join(dirname(sim.root), "v9.json");
    await writeFile(file, JSON.stringify(bad));
    const client = await start({ ZCODE_ACP_MANIFEST: file });
    await expect(client.newSession(await workspace())).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`does not implement \\(it implements ${implementedLinesPattern()}\\)`)),
    });
    client.expectValid();
  });

  it("the provider key of the raw model view appears nowhere: stdout, stderr, the debug log", async () => {
    const logFile = join(dirname(sim.root), "v2-debug.log");
    const client = await start({ ZCODE_ACP_LOG_FILE: logFile, ZCODE_ACP_LOG_LEVEL: "debug" });
    const { sessionId } = await client.newSession(await workspace());
    await expect(client.prompt(sessionId, "sim:tool-edit")).resolves.toMatchObject({ stopReason: expect.any(String) });
    await client.close();
    const stdout = client.transcript.lines.map((l) => l.raw).join("\n");
    const log = await readFile(logFile, "utf8");
    expect(log).toContain("native turn bound"); // the debug log of this very run
    for (const text of [stdout, client.stderr, log]) {
      expect(text).not.toContain(SIM_PROVIDER_SECRET);
      expect(text).not.toContain("apiKey");
    }
  });
});
