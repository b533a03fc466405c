import { describe, expect, it } from "vitest";
import { openSession, setup, updatesWritten } from "./harness.js";

describe("session engine: modes and config options", () => {
  it("offers build/edit/plan/yolo and model, thought level and mode options from the snapshot", async () => {
    const h = setup();
    const { opened } = await openSession(h);
    expect(opened.modes.currentModeId).toBe("build");
    expect(opened.modes.availableModes.map((m) => m.id)).toEqual(["build", "edit", "plan", "yolo"]);
    expect(opened.configOptions.map((o) => [o.id, o.category, o.type === "select" && o.currentValue])).toEqual([
      ["model", "model", "builtin:zai-coding-plan/GLM-5.2"],
      ["thought_level", "thought_level", "high"],
      ["mode", "mode", "build"],
    ]);
    const model = opened.configOptions[0]!;
    expect(model.type === "select" && model.options).toEqual([
      { value: "builtin:zai-coding-plan/GLM-5.2", name: "GLM-5.2", description: "Z.ai - Coding Plan" },
      { value: "builtin:zai-coding-plan/GLM-5-Turbo", name: "GLM-5-Turbo", description: "Z.ai - Coding Plan" },
    ]);
  });

  it("sends the slash commands only after the response (afterResponse)", async () => {
    const h = setup();
    const opened = await h.service.newSession({ cwd: "/work/project", mcpServers: [] });
    await Promise.resolve();
    expect(h.client.notifications).toHaveLength(0);
    opened.afterResponse();
    const n = await h.client.waitFor((x) => x.update.sessionUpdate === "available_commands_update");
    expect(n.update).toEqual({
      sessionUpdate: "available_commands_update",
      availableCommands: [
        { name: "compact", description: "Compact the conversation" },
        { name: "plan", description: "Plan", input: { hint: "[task]" } },
      ],
    });
  });

  it("sets the mode natively and keeps the full model list despite the setMode quirk", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    await engine.setMode("plan");
    expect(h.host.callsOf("setMode")[0]!.params).toEqual({ workspacePath: "/work/project", sessionId: opened.sessionId, mode: "plan" });
    const options = engine.configOptions();
    const model = options.find((o) => o.id === "model")!;
    expect(model.type === "select" && model.options).toHaveLength(2);
    expect(engine.modes().currentModeId).toBe("plan");
    expect(h.client.kinds(opened.sessionId)).toEqual(["config_option_update"]);
    await expect(engine.setMode("auto")).rejects.toMatchObject({ code: "INVALID_PARAMS" });
  });

  it("applies model, thought level and mode config options and answers the full list", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    const afterModel = await engine.setConfigOption("model", "builtin:zai-coding-plan/GLM-5-Turbo");
    expect(h.host.callsOf("setModel")[0]!.params.model).toEqual({ providerId: "builtin:zai-coding-plan", modelId: "GLM-5-Turbo" });
    expect(afterModel.map((o) => o.id)).toEqual(["model", "thought_level", "mode"]);
    expect(afterModel[0]!.type === "select" && afterModel[0]!.currentValue).toBe("builtin:zai-coding-plan/GLM-5-Turbo");
    const afterThought = await engine.setConfigOption("thought_level", "low");
    expect(h.host.callsOf("setThoughtLevel")[0]!.params.thoughtLevel).toBe("low");
    expect(afterThought[1]!.type === "select" && afterThought[1]!.currentValue).toBe("low");
    const afterMode = await engine.setConfigOption("mode", "yolo");
    expect(afterMode[2]!.type === "select" && afterMode[2]!.currentValue).toBe("yolo");
    expect(afterMode[0]!.type === "select" && afterMode[0]!.options).toHaveLength(2);
    expect(h.client.kinds(opened.sessionId)).toEqual(["current_mode_update"]);
    await expect(engine.setConfigOption("model", "nope")).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    await expect(engine.setConfigOption("thought_level", "max")).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    await expect(engine.setConfigOption("colour", "red")).rejects.toMatchObject({ code: "INVALID_PARAMS" });
  });

  it("follows native mode changes with current_mode_update and config_option_update, once", async () => {
    const h = setup();
    const { opened, native } = await openSession(h);
    h.client.clear();
    native.raw({
      type: "state.updated",
      notification: {
        type: "state.updated",
        scope: "session",
        sessionId: opened.sessionId,
        revision: 3,
        patch: { mode: { current: "plan" } },
      },
    });
    native.event("session.updated", { mode: "plan", previousMode: "build", source: "tool" }, { turnId: null });
    native.snapshot.settings.mode.current = "plan";
    native.sendSnapshot();
    await updatesWritten(h);
    expect(h.client.kinds(opened.sessionId)).toEqual(["current_mode_update", "config_option_update"]);
    expect(h.client.updates(opened.sessionId)[0]).toEqual({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
  });

  it("publishes todos as a plan and clears it when they are gone", async () => {
    const h = setup();
    const { opened, native } = await openSession(h);
    h.client.clear();
    native.snapshot.todos = [
      { content: "Run tests", status: "in_progress", priority: "high" },
      { content: "Fix", status: "pending", priority: "medium" },
    ];
    native.sendSnapshot();
    native.sendSnapshot();
    native.snapshot.todos = [];
    native.sendSnapshot();
    await updatesWritten(h);
    expect(h.client.updates(opened.sessionId)).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "Run tests", status: "in_progress", priority: "high" },
          { content: "Fix", status: "pending", priority: "medium" },
        ],
      },
      { sessionUpdate: "plan", entries: [] },
    ]);
  });
});
