import { describe, expect, it } from "vitest";
import { SIM_PROVIDER_SECRET, type SimRelease } from "../../fixtures/sim-install.js";
import { HostHarness, type Any } from "./support/host-harness.js";
import { newInstall, promptToEnd, sessionRig, startHost, WS } from "./support/session-helpers.js";

const V2: SimRelease[] = ["3.12.3", "3.14.5"];
const CODING = "account:zai-coding-plan";
const BIGMODEL = "account:bigmodel-start-plan";

async function connectV2(release: SimRelease = "3.12.3", profile?: Record<string, unknown>) {
  const host = startHost(await newInstall(release), profile ? { profile } : {});
  return host.connect();
}

describe.each(V2)("model-selection.getView on %s (docs/zcode-host.md §13.4)", (release) => {
  it("the raw view holds the provider keys and the catalogue: Coding Plan GLM-5.3 / GLM-5.3-Flash, a second provider, reasoning levels", async () => {
    const { modelSelection } = await connectV2(release);
    const view = await modelSelection.getView();
    expect(JSON.stringify(view)).toContain(SIM_PROVIDER_SECRET);
    expect(SIM_PROVIDER_SECRET).toMatch(/^sk-sim-DO-NOT-LEAK-/);
    expect(typeof view.revision).toBe("number");
    expect(view.providers.map((p: Any) => [p.providerId, p.providerName])).toEqual([
      [CODING, "Z.ai - Coding Plan"],
      [BIGMODEL, "BigModel - Start Plan"],
    ]);
    const coding = view.providers[0];
    expect(coding.config).toEqual({
      api: { type: "openai-compatible", baseUrl: expect.stringMatching(/^https:\/\//) },
      access: { type: "api-key", apiKey: SIM_PROVIDER_SECRET, headers: { Authorization: `Bearer ${SIM_PROVIDER_SECRET}` } },
    });
    expect(coding.models.map((m: Any) => m.modelId)).toEqual(["GLM-5.3", "GLM-5.3-Flash"]);
    expect(JSON.stringify(view)).not.toContain("GLM-5-Turbo");
    const glm = coding.models[0];
    expect(glm).toMatchObject({
      displayName: "GLM-5.3",
      config: { enabled: true, properties: { contextWindow: 200000, inputFormat: { supportsImage: false }, supportsToolCall: true } },
    });
    expect(glm.config.optionSpecs.reasoningLevel.values).toEqual(["low", "high", "max"]);
    expect(Object.keys(glm.config.optionSpecs.reasoningLevel.map)).toEqual(["low", "high", "max"]);
    const plain = view.providers[1].models.find((m: Any) => m.config.optionSpecs.reasoningLevel === undefined);
    expect(plain?.modelId).toBe("GLM-4.5-Air");
    expect(view.preferredSelection).toEqual({ providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "max" } });
    expect(view.effectiveSelection).toEqual(view.preferredSelection);
    expect(view.selectionIssue).toBeUndefined();
  });
});

describe("model-selection.getView({selection})", () => {
  it("resolves a selection (default level = the last value), reports an unknown model or level as selectionIssue", async () => {
    const { modelSelection } = await connectV2();
    expect((await modelSelection.getView({ selection: { providerId: BIGMODEL, modelId: "GLM-5.3-Flash" } })).effectiveSelection).toEqual({
      providerId: BIGMODEL,
      modelId: "GLM-5.3-Flash",
      options: { reasoningLevel: "max" },
    });
    expect(
      (await modelSelection.getView({ selection: { providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "low" } } }))
        .effectiveSelection,
    ).toEqual({ providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "low" } });
    expect((await modelSelection.getView({ selection: { providerId: BIGMODEL, modelId: "GLM-4.5-Air" } })).effectiveSelection).toEqual({
      providerId: BIGMODEL,
      modelId: "GLM-4.5-Air",
    });
    const unknown = await modelSelection.getView({ selection: { providerId: CODING, modelId: "GLM-5-Turbo" } });
    expect(unknown.selectionIssue).toMatchObject({ code: "invalid_model", message: expect.stringContaining("GLM-5-Turbo") });
    expect(unknown.effectiveSelection).toEqual(unknown.preferredSelection);
    const badLevel = await modelSelection.getView({
      selection: { providerId: CODING, modelId: "GLM-5.3-Flash", options: { reasoningLevel: "low" } },
    });
    expect(badLevel.selectionIssue).toMatchObject({ code: "invalid_reasoning_level" });
    expect(badLevel.effectiveSelection).toEqual({ providerId: CODING, modelId: "GLM-5.3-Flash", options: { reasoningLevel: "max" } });
  });

  it("signed out: no providers, initialize says provider_not_ready, createSession and prompts are refused", async () => {
    const { agent, modelSelection } = await connectV2("3.12.3", { signedOut: true });
    expect(await agent.initialize({ workspacePath: WS })).toMatchObject({ available: false, reasonCode: "provider_not_ready" });
    const view = await modelSelection.getView();
    expect(view.providers).toEqual([]);
    expect(view.preferredSelection).toBeUndefined();
    expect(JSON.stringify(view)).not.toContain(SIM_PROVIDER_SECRET);
    expect((await modelSelection.getView({ selection: { providerId: CODING, modelId: "GLM-5.3" } })).selectionIssue).toMatchObject({
      code: "provider_not_ready",
    });
    await expect(agent.createSession({ workspacePath: WS })).rejects.toMatchObject({ code: -32001, data: "provider_not_ready" });
  });

  it("zeroProviders: initialize is available but getView lists no providers (the bridge must read getView)", async () => {
    const { agent, modelSelection } = await connectV2("3.14.5", { zeroProviders: true });
    expect((await agent.initialize({ workspacePath: WS })).available).toBe(true);
    expect((await modelSelection.getView()).providers).toEqual([]);
    await expect(agent.createSession({ workspacePath: WS })).rejects.toMatchObject({ code: -32001 });
  });
});

describe("v2 zcode-agent and zcode-session surface", () => {
  it("readWorkspacePresentation on zcode-agent and zcode-session; readWorkspaceState is an unknown method", async () => {
    const host = startHost(await newInstall("3.12.3"));
    const conn = await host.connect();
    for (const service of [conn.agent, conn.session]) {
      const presentation = await service.readWorkspacePresentation({ workspacePath: WS });
      expect(presentation).toMatchObject({ workspace: { workspacePath: WS, workspaceKey: WS }, mode: "build" });
      expect(presentation.slashCommands.length).toBeGreaterThan(0);
      for (const command of presentation.slashCommands)
        expect(command).toMatchObject({ name: expect.any(String), description: expect.any(String), source: expect.any(String) });
      expect(presentation.slashCommands.some((c: Any) => typeof c.inputHint === "string")).toBe(true);
    }
    await expect(conn.agent.readWorkspacePresentation({})).rejects.toMatchObject({ code: -32602 });
    await expect(conn.agent.readWorkspaceState({ workspacePath: WS })).rejects.toMatchObject({
      message: "Method not found: readWorkspaceState",
    });
    const calls = (await host.install.readCallLog()).filter((e) => e.kind === "call").map((e) => `${e.service}.${e.method}`);
    expect(calls).toEqual([
      "zcode-agent.readWorkspacePresentation",
      "zcode-session.readWorkspacePresentation",
      "zcode-agent.readWorkspacePresentation",
      "zcode-agent.readWorkspaceState",
    ]);
  });

  it("syncAppRuntimePreferences is accepted (call-logged) and returns nothing; a non-boolean is -32602", async () => {
    const host = startHost(await newInstall("3.14.5"));
    const { agent } = await host.connect();
    expect(await agent.syncAppRuntimePreferences({ askUserQuestionAutoResolutionEnabled: false })).toBeUndefined();
    await expect(agent.syncAppRuntimePreferences({ askUserQuestionAutoResolutionEnabled: "no" })).rejects.toMatchObject({ code: -32602 });
    const call = (await host.install.readCallLog()).find((e) => e.kind === "call" && e.method === "syncAppRuntimePreferences");
    expect(call).toMatchObject({ service: "zcode-agent", params: { askUserQuestionAutoResolutionEnabled: false } });
  });
});

describe("v2 sessions: ModelSelection models and the snapshot shape", () => {
  it("createSession: the default selection, settings without lists, planEnabled, no slashCommands; the rest as on v1", async () => {
    const rig = await sessionRig({ release: "3.12.3" });
    const s = rig.snapshot;
    const model = { providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "max" } };
    expect(s.session).toMatchObject({
      sessionKind: "interactive",
      status: "idle",
      mode: "build",
      planEnabled: false,
      model,
      workspace: { workspacePath: WS, workspaceKey: WS },
    });
    expect(s.settings).toEqual({
      model: { current: model },
      thoughtLevel: { current: "max" },
      mode: { current: "build", planEnabled: false },
      permission: { mode: "ask", rulesRevision: 0 },
    });
    expect(s.slashCommands).toBeUndefined();
    expect(s.projection).toMatchObject({
      sessionId: rig.sessionId,
      status: "idle",
      mode: "build",
      pendingPermissions: [],
      activeToolCalls: [],
      backgroundJobs: [],
      contextWindow: 200000,
    });
    expect(s.runtime).toMatchObject({
      eventSeq: 0,
      deliveryKind: "desktop-continuous",
      pendingRequestIds: [],
      contextUsage: { used: 0, size: 200000 },
    });
    expect(s).toMatchObject({ protocol: { name: "ZCode Protocol", version: 1 }, messages: [], todos: [] });
    expect(JSON.stringify(s)).not.toContain(SIM_PROVIDER_SECRET);
  });

  it("createSession validates the model: options or thoughtLevel pick the level, unknown models and levels are -32602", async () => {
    const host = startHost(await newInstall("3.14.5"));
    const { agent } = await host.connect();
    const create = (extra: Record<string, unknown>) => agent.createSession({ workspacePath: WS, ...extra });
    expect((await create({ model: { providerId: BIGMODEL, modelId: "GLM-5.3-Flash" }, thoughtLevel: "low" })).session.model).toEqual({
      providerId: BIGMODEL,
      modelId: "GLM-5.3-Flash",
      options: { reasoningLevel: "low" },
    });
    expect((await create({ model: { providerId: CODING, modelId: "GLM-5.3-Flash" } })).settings.thoughtLevel).toEqual({ current: "max" });
    const air = await create({ model: { providerId: BIGMODEL, modelId: "GLM-4.5-Air" }, mode: "edit" });
    expect(air.session.model).toEqual({ providerId: BIGMODEL, modelId: "GLM-4.5-Air" });
    expect(air.settings.thoughtLevel).toEqual({});
    expect(air.settings.mode).toEqual({ current: "edit", planEnabled: false });
    expect(air.runtime.contextUsage.size).toBe(128000);
    await expect(create({ model: { providerId: CODING, modelId: "GLM-5-Turbo" } })).rejects.toMatchObject({
      code: -32602,
      message: "Unknown model: account:zai-coding-plan/GLM-5-Turbo",
    });
    await expect(create({ model: { providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "ultra" } } })).rejects.toMatchObject(
      { code: -32602, data: "invalid_reasoning_level" },
    );
    await expect(
      create({ model: { providerId: BIGMODEL, modelId: "GLM-4.5-Air", options: { reasoningLevel: "high" } } }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(create({ model: { providerId: CODING, modelId: "GLM-5.3", variantId: "x" }, mode: "auto" })).rejects.toMatchObject({
      code: -32602,
      message: "Unknown mode: auto",
    });
  });

  it("setModel takes a full ModelSelection (a level is required where the model has levels); setThoughtLevel sets options.reasoningLevel", async () => {
    const rig = await sessionRig({ release: "3.12.3" });
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const { agent } = rig.conn;
    await expect(agent.setModel({ ...ref, model: { providerId: BIGMODEL, modelId: "GLM-5.3-Flash" } })).rejects.toMatchObject({
      code: -32602,
      message: "Reasoning level is required for GLM-5.3-Flash",
    });
    await expect(
      agent.setModel({ ...ref, model: { providerId: CODING, modelId: "GLM-5.3-Flash", options: { reasoningLevel: "low" } } }),
    ).rejects.toMatchObject({ code: -32602, data: "invalid_reasoning_level" });
    await expect(
      agent.setModel({ ...ref, model: { providerId: "x", modelId: "y", options: { reasoningLevel: "max" } } }),
    ).rejects.toMatchObject({ code: -32602, data: "invalid_model" });
    const flash = { providerId: BIGMODEL, modelId: "GLM-5.3-Flash", options: { reasoningLevel: "high" } };
    const afterModel = await agent.setModel({ ...ref, model: flash });
    expect(afterModel.settings.model).toEqual({ current: flash });
    const notice = await rig.events.waitFor((e) => e.type === "state.updated" && e.notification.patch.model);
    expect(notice.notification).toMatchObject({ reason: "model_changed", patch: { model: { current: flash } } });
    const afterLevel = await agent.setThoughtLevel({ ...ref, thoughtLevel: "low" });
    expect(afterLevel.session.model).toEqual({ ...flash, options: { reasoningLevel: "low" } });
    expect(afterLevel.settings.thoughtLevel).toEqual({ current: "low" });
    await rig.events.waitFor((e) => e.type === "state.updated" && e.notification.patch.thoughtLevel?.current === "low");
    await expect(agent.setThoughtLevel({ ...ref, thoughtLevel: "ultra" })).rejects.toMatchObject({ code: -32602 });
    await agent.setModel({ ...ref, model: { providerId: BIGMODEL, modelId: "GLM-4.5-Air" } });
    await expect(agent.setThoughtLevel({ ...ref, thoughtLevel: "high" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("offered: none"),
    });
    const { terminal } = await promptToEnd(rig, "on the small model");
    const read = await agent.readSession(ref);
    expect(read.messages[1].info).toMatchObject({ providerId: BIGMODEL, modelId: "GLM-4.5-Air" });
    expect(terminal.type).toBe("turn.completed");
  });

  it("resumeSession applies model and thoughtLevel the same way; listSessions carries planEnabled", async () => {
    const rig = await sessionRig({ release: "3.12.3" });
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const resumed = await rig.conn.agent.resumeSession({ ...ref, thoughtLevel: "low" });
    expect(resumed.session.model).toEqual({ providerId: CODING, modelId: "GLM-5.3", options: { reasoningLevel: "low" } });
    await expect(rig.conn.agent.resumeSession({ ...ref, model: { providerId: CODING, modelId: "nope" } })).rejects.toMatchObject({
      code: -32602,
    });
    await rig.conn.agent.setMode({ ...ref, mode: "plan" });
    expect(await rig.conn.agent.listSessions({ workspacePath: WS })).toEqual([
      expect.objectContaining({ sessionId: rig.sessionId, mode: "build", planEnabled: true }),
    ]);
  });
});

describe.each(["3.11.2", "3.12.3"] as SimRelease[])("closeSession and deferred persistence on %s (both lines alike)", (release) => {
  it("closeSession answers true (expectedPersistence accepted on v2); a deferred session never prompted is gone after close and restart", async () => {
    const install = await newInstall(release);
    const host = startHost(install);
    const { agent } = await host.connect();
    const deferred = await agent.createSession({
      workspacePath: WS,
      persistence: "deferred",
      titleGenerationEnabled: false,
      mcpServers: [],
    });
    const kept = await agent.createSession({ workspacePath: WS, persistence: "deferred" });
    const immediate = await agent.createSession({ workspacePath: WS });
    expect((await agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([immediate.session.sessionId]);
    expect((await agent.readSession({ workspacePath: WS, sessionId: deferred.session.sessionId })).session.sessionId).toBe(
      deferred.session.sessionId,
    );
    await agent.sendPrompt({ workspacePath: WS, sessionId: kept.session.sessionId, content: "materialise me" });
    const close = release === "3.12.3" ? { expectedPersistence: "deferred" } : {};
    expect(await agent.closeSession({ workspacePath: WS, sessionId: deferred.session.sessionId, ...close })).toBe(true);
    if (release === "3.12.3") {
      await expect(
        agent.closeSession({ workspacePath: WS, sessionId: kept.session.sessionId, expectedPersistence: "later" }),
      ).rejects.toMatchObject({ code: -32602 });
    }
    const listed = async (a: Any) => (await a.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId).sort();
    const expected = [kept.session.sessionId, immediate.session.sessionId].sort();
    expect(await listed(agent)).toEqual(expected);
    await expect(agent.readSession({ workspacePath: WS, sessionId: deferred.session.sessionId })).rejects.toMatchObject({ code: -32004 });
    expect(await host.dispose()).toBe(0);
    const second = HostHarness.start(install, {});
    try {
      const conn = await second.connect();
      expect(await listed(conn.agent)).toEqual(expected);
    } finally {
      await second.dispose();
    }
  });
});
