import { describe, expect, it } from "vitest";
import { makeSnapshot } from "../../support/fake-host.js";
import { until } from "../../support/until.js";
import { CWD, openSession, setup, updatesWritten } from "./harness.js";

function historySnapshot(id: string) {
  return makeSnapshot(id, CWD, {
    session: { sessionId: id, workspace: { workspacePath: CWD }, title: "Old work", status: "idle", updatedAt: 1_760_000_000_000 },
    messages: [
      { info: { messageId: "u1", role: "user" }, parts: [{ type: "text", text: "Read package.json" }] },
      {
        info: { messageId: "a1", role: "assistant" },
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: "Need to read" },
          {
            type: "tool",
            callId: "c1",
            tool: "Read",
            state: { status: "completed", input: { file_path: "package.json" }, output: '{"name":"demo"}' },
          },
          { type: "text", text: "demo" },
        ],
      },
    ],
    todos: [{ content: "Ship", status: "pending", priority: "low" }],
  });
}

describe("session service: load, resume, list, close, auth, host exit", () => {
  it("load replays history, title, plan and usage before answering; resume does not replay", async () => {
    const h = setup();
    h.host.addSession(historySnapshot("old1"));
    const loaded = await h.service.resumeSession({ sessionId: "old1", cwd: CWD, mcpServers: [], replay: true });
    expect(h.client.kinds("old1")).toEqual([
      "user_message_chunk",
      "agent_thought_chunk",
      "tool_call",
      "agent_message_chunk",
      "session_info_update",
      "plan",
      "usage_update",
      "available_commands_update",
    ]);
    expect(h.client.updates("old1")[2]).toEqual({
      sessionUpdate: "tool_call",
      toolCallId: "c1",
      title: "Read package.json",
      kind: "read",
      status: "completed",
      rawInput: { file_path: "package.json" },
      locations: [{ path: `${CWD}/package.json` }],
      rawOutput: '{"name":"demo"}',
      content: [{ type: "content", content: { type: "text", text: '{"name":"demo"}' } }],
    });
    expect(loaded.modes.currentModeId).toBe("build");
    expect(h.host.callsOf("resumeSession")).toHaveLength(1);

    const h2 = setup();
    h2.host.addSession(historySnapshot("old2"));
    const resumed = await h2.service.resumeSession({ sessionId: "old2", cwd: CWD, replay: false });
    expect(h2.client.notifications).toHaveLength(0);
    resumed.afterResponse();
    await updatesWritten(h2);
    expect(h2.client.kinds("old2")).toEqual(["available_commands_update"]);
  });

  it("a resume of a session loaded earlier in this run announces its commands again", async () => {
    const h = setup();
    h.host.addSession(historySnapshot("old1"));
    const loaded = await h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: true });
    loaded.afterResponse();
    await updatesWritten(h);
    const commands = () => h.client.kinds("old1").filter((k) => k === "available_commands_update").length;
    expect(commands()).toBe(1);
    const resumed = await h.service.resumeSession({ sessionId: "old1", cwd: CWD, replay: false });
    resumed.afterResponse();
    await updatesWritten(h);
    expect(commands()).toBe(2);
  });

  it("refuses a session of another workspace", async () => {
    const h = setup();
    h.host.addSession(historySnapshot("old1"));
    await expect(h.service.resumeSession({ sessionId: "old1", cwd: "/elsewhere", replay: false })).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
    });
  });

  it("lists sessions of the cwd with ISO updatedAt and titles", async () => {
    const h = setup();
    h.host.addSession(historySnapshot("old1"));
    h.host.addSession(makeSnapshot("other", "/other"));
    await expect(h.service.listSessions(CWD)).resolves.toEqual([
      { sessionId: "old1", cwd: CWD, title: "Old work", updatedAt: "2025-10-09T08:53:20.000Z" },
    ]);
  });

  it("close cancels the running prompt, closes natively and unsubscribes", async () => {
    const h = setup();
    const { opened, engine, native } = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    await h.service.closeSession(opened.sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(h.host.operations.filter((o) => o.operation === "cancelGeneration")).toHaveLength(1);
    expect(h.host.callsOf("closeSession")[0]!.params).toEqual({ workspacePath: CWD, sessionId: opened.sessionId });
    expect(native.sinks.size).toBe(0);
    expect(h.broker.withdrawals).toContainEqual({ sessionId: opened.sessionId, reason: "close" });
    expect(() => h.service.get(opened.sessionId)).toThrow(/Unknown session/);
  });

  it("requires sign-in when the host has no usable provider", async () => {
    const h = setup();
    h.host.handlers.set("agent.initialize", () => ({ available: false, reason: "No usable provider", reasonCode: "provider_not_ready" }));
    await expect(h.service.newSession({ cwd: CWD, mcpServers: [] })).rejects.toMatchObject({
      code: "AUTH_REQUIRED",
      message: expect.stringMatching(/sign in/),
    });
    const h2 = setup();
    h2.host.handlers.set("agent.readWorkspaceState", () => ({
      workspace: { workspacePath: CWD },
      modelCatalog: { providers: [], available: [] },
    }));
    await expect(h2.service.newSession({ cwd: CWD, mcpServers: [] })).rejects.toMatchObject({ code: "AUTH_REQUIRED" });
    expect(h.host.callsOf("createSession")).toHaveLength(0);
    expect(h2.host.callsOf("createSession")).toHaveLength(0);
  });

  it("turns a sendPrompt refusal for a missing provider into AUTH_REQUIRED", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    const { BridgeError } = await import("../../../src/util/errors.js");
    h.host.handlers.set("agent.sendPrompt", () => {
      throw new BridgeError("HOST_CALL_FAILED", "No usable provider", { details: { code: -32001 } });
    });
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toMatchObject({
      code: "AUTH_REQUIRED",
      message: expect.stringMatching(/sign in/),
    });
  });

  it("forwards MCP servers unchanged to createSession", async () => {
    const h = setup();
    const mcpServers = [
      { name: "fs", command: "/usr/bin/mcp-fs", args: ["--root", "/"], env: [{ name: "A", value: "1" }] },
      { type: "http" as const, name: "paseo", url: "http://127.0.0.1:9/mcp", headers: [] },
    ];
    await h.service.newSession({ cwd: CWD, mcpServers });
    expect(h.host.callsOf("createSession")[0]!.params).toEqual({ workspacePath: CWD, mcpServers, persistence: "deferred" });
  });

  it("fails the running prompt when the host exits and resumes the session on the next prompt", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => void s.startTurn();
    const turn = engine.prompt([{ type: "text", text: "go" }]);
    await until(() => h.host.callsOf("sendPrompt").length === 1);
    h.host.crash();
    await expect(turn).rejects.toMatchObject({ code: "HOST_EXITED" });
    expect(h.broker.withdrawals.map((w) => w.reason)).toContain("host-exit");
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("back");
      s.complete();
    };
    await expect(engine.prompt([{ type: "text", text: "again" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("resumeSession")).toHaveLength(1);
  });
});
