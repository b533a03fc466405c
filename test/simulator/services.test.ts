import { describe, expect, it } from "vitest";
import { HostHarness, type Any } from "./support/host-harness.js";
import { EventCollector, newInstall, promptToEnd, sessionRig, startHost, waitForCallLog, WS } from "./support/session-helpers.js";

describe("zcode-agent basics (docs/zcode-host.md §4.1, §7)", () => {
  it("initialize and readWorkspaceState when signed in", async () => {
    const host = startHost(await newInstall());
    const { agent } = await host.connect();
    expect(await agent.initialize({ workspacePath: WS })).toEqual({
      available: true,
      workspaceKey: WS,
      protocolName: "ZCode Protocol",
      protocolVersion: 1,
      transportKind: "stdio",
    });
    const state = await agent.readWorkspaceState({ workspacePath: WS });
    expect(state.workspace.workspacePath).toBe(WS);
    expect(state.modelCatalog.providers.length).toBeGreaterThan(0);
    expect(state.settings.thoughtLevel.available.map((l: Any) => l.value)).toEqual(["low", "high", "max"]);
  });

  it("signed out: initialize is unavailable with provider_not_ready, zero providers, prompts are refused", async () => {
    const rig = await sessionRig({ profile: { signedOut: true } });
    expect(await rig.conn.agent.initialize({ workspacePath: WS })).toMatchObject({ available: false, reasonCode: "provider_not_ready" });
    expect((await rig.conn.agent.readWorkspaceState({ workspacePath: WS })).modelCatalog.providers).toEqual([]);
    await expect(rig.prompt("hi")).rejects.toMatchObject({ data: "provider_not_ready" });
  });

  it("zeroProviders: available but no providers", async () => {
    const host = startHost(await newInstall(), { profile: { zeroProviders: true } });
    const { agent } = await host.connect();
    expect((await agent.initialize({ workspacePath: WS })).available).toBe(true);
    expect((await agent.readWorkspaceState({ workspacePath: WS })).modelCatalog.providers).toEqual([]);
  });

  it("createSession returns a rich 3.11.2 snapshot and passes mcpServers through unchanged", async () => {
    const mcpServers = [{ name: "fs", command: "/bin/mcp-fs", args: ["--root", "/w"], env: [] }];
    const rig = await sessionRig({ create: { mcpServers, mode: "build" } });
    const s = rig.snapshot;
    expect(s.protocol).toEqual({ name: "ZCode Protocol", version: 1 });
    expect(s.session).toMatchObject({
      sessionKind: "interactive",
      status: "idle",
      mode: "build",
      workspace: { workspacePath: WS, workspaceKey: WS },
    });
    expect(s.settings.model.available.length).toBeGreaterThanOrEqual(2);
    expect(s.settings.model.current).toEqual(s.settings.model.available[0].ref);
    expect(s.settings.thoughtLevel).toMatchObject({ enabled: true, current: "high" });
    expect(s.settings.thoughtLevel.available.map((l: Any) => l.value)).toEqual(["low", "high", "max"]);
    expect(s.projection).toMatchObject({
      sessionId: rig.sessionId,
      status: "idle",
      pendingPermissions: [],
      activeToolCalls: [],
      backgroundJobs: [],
    });
    expect(s.runtime).toMatchObject({
      eventSeq: 0,
      deliveryKind: "desktop-continuous",
      pendingRequestIds: [],
      contextUsage: { used: 0, size: 200000 },
    });
    expect(s.slashCommands.some((c: Any) => c.inputHint)).toBe(true);
    expect(s.slashCommands.some((c: Any) => c.inputHint === undefined)).toBe(true);
    const call = (await rig.install.readCallLog()).find((e) => e.kind === "call" && e.method === "createSession");
    expect(call).toMatchObject({ service: "zcode-agent", params: { workspacePath: WS, mcpServers } });
  });

  it("rejects invalid params and unknown sessions with coded errors", async () => {
    const rig = await sessionRig();
    const { agent } = rig.conn;
    await expect(agent.createSession({ workspacePath: WS, mode: "turbo" })).rejects.toMatchObject({ code: -32602 });
    await expect(agent.readSession({ workspacePath: WS, sessionId: "ses_missing" })).rejects.toMatchObject({
      code: -32004,
      message: "Session not found: ses_missing",
    });
    await expect(agent.readSession({ workspacePath: "/other", sessionId: rig.sessionId })).rejects.toMatchObject({ code: -32004 });
    await expect(
      agent.setModel({ workspacePath: WS, sessionId: rig.sessionId, model: { providerId: "x", modelId: "y" } }),
    ).rejects.toMatchObject({ code: -32602 });
    await expect(agent.setThoughtLevel({ workspacePath: WS, sessionId: rig.sessionId, thoughtLevel: "ultra" })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(agent.createSession({ workspacePath: WS, sessionId: rig.sessionId })).rejects.toThrow(/already exists/);
  });

  it("setMode quirk: the returned snapshot lists only the current model; readSession still lists all", async () => {
    const rig = await sessionRig();
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const turbo = rig.snapshot.settings.model.available[1].ref;
    const afterModel = await rig.conn.agent.setModel({ ...ref, model: turbo });
    expect(afterModel.settings.model.current).toEqual(turbo);
    expect(afterModel.settings.model.available.length).toBe(rig.snapshot.settings.model.available.length);
    const afterMode = await rig.conn.agent.setMode({ ...ref, mode: "plan" });
    expect(afterMode.settings.mode.current).toBe("plan");
    expect(afterMode.settings.model.available).toHaveLength(1);
    expect(afterMode.settings.model.available[0].ref).toEqual(turbo);
    expect((await rig.conn.agent.readSession(ref)).settings.model.available.length).toBeGreaterThanOrEqual(2);
    const notice = await rig.events.waitFor((e) => e.type === "state.updated" && e.notification.patch.mode?.current === "plan");
    expect(notice.notification).toMatchObject({ type: "state.updated", scope: "session", sessionId: rig.sessionId });
    const level = await rig.conn.agent.setThoughtLevel({ ...ref, thoughtLevel: "max" });
    expect(level.settings.thoughtLevel.current).toBe("max");
  });

  it("list / read / messages / events / token usage after a turn", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "hello host");
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const list = await rig.conn.agent.listSessions({ workspacePath: WS });
    expect(list).toEqual([expect.objectContaining({ sessionId: rig.sessionId, workspace: { workspacePath: WS }, title: "hello host" })]);
    const read = await rig.conn.agent.readSession(ref);
    expect(read.messages.map((m: Any) => m.info.role)).toEqual(["user", "assistant"]);
    expect(read.messages[1].parts.map((p: Any) => p.type)).toEqual(["step-start", "text", "step-finish"]);
    expect(read.runtime.eventSeq).toBeGreaterThanOrEqual(terminal.seq);
    expect(await rig.conn.agent.readSessionMessages({ ...ref, afterMessageId: read.messages[0].info.messageId })).toHaveLength(1);
    const events = await rig.conn.agent.readSessionEvents({ ...ref, afterSeq: 0 });
    expect(events.at(-1)).toMatchObject({ type: "turn.completed", seq: terminal.seq });
    const usage = await rig.conn.agent.getTaskTokenUsage(ref);
    expect(usage).toMatchObject({ sessionId: rig.sessionId, totalTokens: terminal.payload.tokenCount });
    expect(usage.inputTokens + usage.outputTokens + usage.reasoningTokens).toBe(usage.totalTokens);
    expect(await rig.conn.agent.respondProviderRuntimeHeaders({ ...ref, requestId: "nope", response: { headersApplied: false } })).toBe(
      false,
    );
  });

  it("closeSession unloads, the session stays listed and resumable; disposeWorkspace is accepted", async () => {
    const rig = await sessionRig();
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    expect(await rig.conn.agent.closeSession(ref)).toBe(true);
    expect(await rig.conn.agent.closeSession({ workspacePath: WS, sessionId: "ses_unknown" })).toBe(false);
    expect((await rig.conn.agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
    expect((await rig.conn.agent.resumeSession(ref)).session.workspace.workspacePath).toBe(WS);
    expect(await rig.conn.agent.disposeWorkspace({ workspacePath: WS })).toBeUndefined();
  });
});

describe("sessions survive a host restart (docs/runtime-contract.md §4)", () => {
  it("list, read and resume work on a new host over the same data dir; seq keeps increasing", async () => {
    const install = await newInstall();
    const first = await sessionRig({ install });
    const { terminal } = await promptToEnd(first, "remember me");
    expect(await first.host.dispose()).toBe(0);

    const second = HostHarness.start(install, {});
    try {
      const conn = await second.connect();
      const listed = await conn.agent.listSessions({ workspacePath: WS });
      expect(listed.map((s: Any) => s.sessionId)).toEqual([first.sessionId]);
      const resumed = await conn.agent.resumeSession({ workspacePath: WS, sessionId: first.sessionId });
      expect(resumed.messages).toHaveLength(2);
      expect(resumed.runtime.eventSeq).toBeGreaterThanOrEqual(terminal.seq);
      const events = new EventCollector(conn, {
        workspacePath: WS,
        sessionId: first.sessionId,
        deliveryKind: "desktop-continuous",
        includeSnapshot: true,
      });
      await conn.agent.sendPrompt({ workspacePath: WS, sessionId: first.sessionId, content: "and again" });
      const next = await events.terminal(1);
      expect(events.sessionEvents()[0].seq).toBeGreaterThan(terminal.seq);
      expect(next.type).toBe("turn.completed");
      expect((await conn.agent.readSession({ workspacePath: WS, sessionId: first.sessionId })).messages).toHaveLength(4);
    } finally {
      await second.dispose();
    }
  });

  it("a deferred session is not listed until its first prompt", async () => {
    const rig = await sessionRig({ create: { persistence: "deferred" } });
    expect(await rig.conn.agent.listSessions({ workspacePath: WS })).toEqual([]);
    await promptToEnd(rig, "now persist");
    expect((await rig.conn.agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
  });
});

describe("subscriptions (docs/zcode-host.md §5.1)", () => {
  it("fires the snapshot first with includeSnapshot, none without it, and never replays past events to late subscribers", async () => {
    const rig = await sessionRig();
    expect(rig.events.events[0].type).toBe("snapshot");
    await promptToEnd(rig, "first turn");
    const late = new EventCollector(rig.conn, { workspacePath: WS, sessionId: rig.sessionId, deliveryKind: "desktop-continuous" });
    const lateWithSnapshot = new EventCollector(rig.conn, {
      workspacePath: WS,
      sessionId: rig.sessionId,
      deliveryKind: "desktop-continuous",
      includeSnapshot: true,
    });
    await lateWithSnapshot.waitFor((e) => e.type === "snapshot");
    const { terminal } = await promptToEnd(rig, "second turn");
    await late.waitFor((e) => e.type === "session.event" && e.event.seq === terminal.seq);
    expect(late.events[0].type).not.toBe("snapshot");
    const firstSeen = late.sessionEvents()[0];
    expect(firstSeen.type).toBe("turn.started");
    expect(firstSeen.turnId).toBe(terminal.turnId);
    expect(lateWithSnapshot.events.filter((e) => e.type === "snapshot")).toHaveLength(1);
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "listen" && e.event === "onDynamicSessionEvent")).toHaveLength(3);
    late.dispose();
    lateWithSnapshot.dispose();
  });

  it("events fired with no listener are lost (call log shows listeners: 0)", async () => {
    const rig = await sessionRig();
    rig.events.dispose(); // 103 travels before the 100 below: frames on one port are ordered
    const ack = await rig.prompt("nobody listens");
    expect(ack).toMatchObject({ sessionId: rig.sessionId, accepted: true });
    const log = await waitForCallLog(
      rig.install,
      (entries) => entries.some((e) => e.kind === "fire" && e.type === "turn.completed"),
      "turn.completed",
    );
    const fires = log.filter((e) => e.kind === "fire" && e.top === "session.event");
    expect(fires.length).toBeGreaterThan(3);
    expect(fires.every((e) => e.listeners === 0)).toBe(true);
    expect(log.some((e) => e.kind === "listen-dispose" && e.event === "onDynamicSessionEvent")).toBe(true);
  });
});

describe("sendPrompt (docs/zcode-host.md §2.7, §9)", () => {
  it("posts a browser-execute-request before every prompt and records the bridge's answer", async () => {
    const rig = await sessionRig();
    await promptToEnd(rig, "hi");
    const request = rig.host.messages.find((m) => m.type === "browser-execute-request");
    expect(request).toMatchObject({
      sessionId: rig.sessionId,
      workspacePath: WS,
      clientMode: "desktop-continuous",
      command: { method: "getState" },
    });
    const answer = (await rig.install.readCallLog()).find((e) => e.kind === "reverse-answer");
    expect(answer).toMatchObject({
      requestKind: "browser",
      requestId: request.requestId,
      ok: false,
      matched: true,
      errorCode: "backend_unavailable",
      sideEffect: "none",
    });
  });

  it("waits up to browserWaitMs for an unanswered browser request before acknowledging", async () => {
    const rig = await sessionRig({ answerReverse: false, profile: { browserWaitMs: 300 } });
    const started = Date.now();
    const ack = await rig.prompt("slow");
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(ack.accepted).toBe(true);
    await rig.events.terminal(1);
    expect((await rig.install.readCallLog()).some((e) => e.kind === "reverse-timeout" && e.requestKind === "browser")).toBe(true);
  });

  it("rejects a second prompt with 1308 'prompt is running' while a turn runs", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:stream-until-cancel interval=20");
    await rig.events.waitForSessionEvent("model.streaming");
    await expect(rig.prompt("second")).rejects.toMatchObject({ code: 1308, message: "prompt is running" });
    await rig.conn.task.stopGeneration({ taskId: rig.sessionId, workspacePath: WS });
    expect((await rig.events.terminal(1)).payload.resultType).toBe("cancelled");
    await expect(rig.prompt("third")).resolves.toMatchObject({ accepted: true });
    await rig.events.terminal(2);
  });
});
