import { describe, expect, it } from "vitest";
import { SIM_RELEASES, type SimRelease } from "../../../fixtures/sim-install.js";
import { e2e, forSession } from "../../support/e2e-harness.js";

const t = e2e();
/** the zcode-task-v3 line (4.0.0): a session's events are its V4 conversation subscription */
const V3 = SIM_RELEASES[(process.env.ZCODE_ACP_SIM_RELEASE ?? "3.11.2") as SimRelease].line === "zcode-task-v3";

describe("e2e: session persistence, modes and config options", () => {
  it("loads with a full replay before answering, resumes without replay, lists with ISO dates and titles", async () => {
    const first = await t.start();
    await first.initialize();
    const ws = await t.workspace();
    const { sessionId } = await first.newSession(ws);
    await first.prompt(sessionId, "sim:tool-read");
    await first.prompt(sessionId, "sim:reasoning");
    const other = await first.newSession(await t.workspace());
    await first.close();

    const second = await t.start();
    await second.initialize();
    const listed = await second.agent.request("session/list", { cwd: ws });
    expect(listed.sessions).toEqual([
      { sessionId, cwd: ws, title: "sim:tool-read", updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) },
    ]);
    expect(listed.sessions.map((s) => s.sessionId)).not.toContain(other.sessionId);

    const loaded = await second.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe("build");
    expect(loaded.configOptions?.map((o) => o.category)).toEqual(["model", "thought_level", "mode"]);
    const response = second.indexOf((l) => l.message.id !== undefined && l.message.result?.modes !== undefined);
    const replayed = second.transcript.lines
      .map((l, i) => ({ l, i }))
      .filter(({ l }) => l.from === "agent" && l.message?.method === "session/update" && l.message.params.sessionId === sessionId);
    const kinds = replayed.filter(({ i }) => i < response).map(({ l }) => l.message.params.update.sessionUpdate);
    expect(kinds).toEqual(
      expect.arrayContaining([
        "user_message_chunk",
        "tool_call",
        "agent_message_chunk",
        "agent_thought_chunk",
        "session_info_update",
        "usage_update",
      ]),
    );
    expect(kinds.indexOf("user_message_chunk")).toBe(0);
    const tool = replayed.map(({ l }) => l.message.params.update).find((u) => u.sessionUpdate === "tool_call");
    expect(tool).toMatchObject({ kind: "read", status: "completed", locations: [{ path: `${ws}/package.json`, line: 1 }] });
    await second.waitForUpdate(sessionId, (u) => u.sessionUpdate === "available_commands_update");
    // a load sends its commands before its response too (nothing after it: ACP-LOAD-002)
    expect(second.indexOf((l) => l.message.params?.update?.sessionUpdate === "available_commands_update")).toBeLessThan(response);
    await expect(second.prompt(sessionId, "continue after load")).resolves.toMatchObject({ stopReason: "end_turn" });
    await second.close();

    const third = await t.start();
    await third.initialize();
    const resumed = await third.agent.request("session/resume", { sessionId, cwd: ws });
    expect(resumed.modes?.currentModeId).toBe("build");
    await third.waitForUpdate(sessionId, (u) => u.sessionUpdate === "available_commands_update");
    expect(third.updates(sessionId).map((u) => u.sessionUpdate)).toEqual(["available_commands_update"]);
    await expect(third.prompt(sessionId, "continue after resume")).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(third.agent.request("session/load", { sessionId: "ses_missing", cwd: ws, mcpServers: [] })).rejects.toMatchObject({
      code: -32002,
      data: { sessionId: "ses_missing" },
    });
    first.expectValid();
    second.expectValid();
    third.expectValid();
  });

  it("closes a session: cancels its running prompt, closes natively, unsubscribes; a second close is {}, a prompt after it -32002", async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    expect(forSession(await t.calls("closeSession"), sessionId)).toHaveLength(1);
    const log = await t.sim().readCallLog();
    if (V3) {
      // the V4 subscription of the session is ended in ZCode, and the workspace's frame listen disposed
      const frame = log.find((e) => e.kind === "v4-frame" && e.sessionId === sessionId)!;
      const unsubscribed = log.filter((e) => e.kind === "call" && e.method === "unsubscribeConversationV4");
      expect(unsubscribed.map((e) => (e.params as { subscriptionId?: string }).subscriptionId)).toContain(frame.subscriptionId);
      // this session's own listen (the file's install also holds the listens of earlier tests' hosts)
      const listen = log.find(
        (e) =>
          e.kind === "listen" &&
          e.event === "onDynamicConversationFrame" &&
          e.run === frame.run &&
          (e.arg as { workspacePath?: string }).workspacePath === ws,
      )!;
      expect(log.some((e) => e.kind === "listen-dispose" && e.id === listen.id && e.run === listen.run)).toBe(true);
    } else {
      const listen = log.find((e) => e.kind === "listen" && (e.arg as { sessionId?: string }).sessionId === sessionId)!;
      expect(log.some((e) => e.kind === "listen-dispose" && e.id === listen.id && e.run === listen.run)).toBe(true);
    }
    await expect(client.prompt(sessionId, "after close")).rejects.toMatchObject({ code: -32002 });
    // closing it again leaves it closed: {} (the registry's protocol matrix counts only an object result), nothing native
    await expect(client.agent.request("session/close", { sessionId })).resolves.toEqual({});
    // the SDK's client takes a -32002 answer to session/close as success: the agent's own answer is a result
    const answers = client.transcript
      .agentMessages()
      .filter((m: { id?: unknown; method?: unknown }) => m.id !== undefined && m.method === undefined);
    expect(answers.at(-1)).toEqual({ jsonrpc: "2.0", id: expect.anything(), result: {} });
    expect(forSession(await t.calls("closeSession"), sessionId)).toHaveLength(1);
    client.expectValid();
  });

  it("sets modes and config options natively, answers the full list and keeps the model list after setMode", async () => {
    const client = await t.start();
    await client.initialize();
    const created = await client.newSession(await t.workspace());
    const sessionId = created.sessionId;
    const models = created.configOptions!.find((o) => o.id === "model")!;
    const modelValues = models.type === "select" ? (models.options as Array<{ value: string }>).map((o) => o.value) : [];
    expect(modelValues.length).toBeGreaterThan(1);

    await expect(client.agent.request("session/set_mode", { sessionId, modeId: "plan" })).resolves.toEqual({});
    const afterMode = await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "config_option_update");
    const modelAfterMode = afterMode.configOptions.find((o: any) => o.id === "model");
    expect(modelAfterMode.options.map((o: any) => o.value)).toEqual(modelValues);
    expect(afterMode.configOptions.find((o: any) => o.id === "mode").currentValue).toBe("plan");
    expect(forSession(await t.calls("setMode"), sessionId).map((c) => (c.params as { mode: string }).mode)).toEqual(["plan"]);

    const viaOption = await client.agent.request("session/set_config_option", { sessionId, configId: "mode", value: "yolo" });
    expect(viaOption.configOptions.map((o) => o.id)).toEqual(["model", "thought_level", "mode"]);
    expect(viaOption.configOptions.find((o) => o.id === "mode")!).toMatchObject({ currentValue: "yolo" });
    expect((viaOption.configOptions[0] as { options: unknown[] }).options).toHaveLength(modelValues.length);
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "yolo");

    const otherModel = modelValues[1]!;
    const viaModel = await client.agent.request("session/set_config_option", { sessionId, configId: "model", value: otherModel });
    expect(viaModel.configOptions[0]).toMatchObject({ currentValue: otherModel });
    const setModel = forSession(await t.calls("setModel"), sessionId)[0]!.params as { model: { modelId: string } };
    expect(otherModel.endsWith(setModel.model.modelId)).toBe(true);

    // the levels of the model now current (on zcode-task-v2 each model has its own)
    const thought = viaModel.configOptions.find((o) => o.id === "thought_level")!;
    const levels = thought.type === "select" ? (thought.options as Array<{ value: string }>).map((o) => o.value) : [];
    const level = levels.find((l) => l !== (thought as { currentValue: string }).currentValue)!;
    const viaThought = await client.agent.request("session/set_config_option", { sessionId, configId: "thought_level", value: level });
    expect(viaThought.configOptions[1]).toMatchObject({ currentValue: level });

    await expect(
      client.agent.request("session/set_config_option", { sessionId, configId: "model", value: "nope/none" }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(client.agent.request("session/set_mode", { sessionId, modeId: "auto" })).rejects.toMatchObject({ code: -32602 });
    client.expectValid();
  });

  it("follows a mode change made by the host with current_mode_update and config_option_update", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:mode-plan")).resolves.toMatchObject({ stopReason: "end_turn" });
    const updates = client.updates(sessionId);
    const modeUpdates = updates.filter((u) => u.sessionUpdate === "current_mode_update");
    expect(modeUpdates).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "plan" }]);
    const options = updates.filter((u) => u.sessionUpdate === "config_option_update").at(-1);
    expect(options.configOptions.find((o: any) => o.id === "mode").currentValue).toBe("plan");
    expect(updates).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call", kind: "switch_mode" }));
    client.expectValid();
  });
});
