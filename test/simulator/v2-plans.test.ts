import { describe, expect, it } from "vitest";
import type { SimRelease } from "../../fixtures/sim-install.js";
import { HostHarness, type Any } from "./support/host-harness.js";
import {
  answerPermission,
  EventCollector,
  newInstall,
  nextUserInput,
  promptToEnd,
  sessionRig,
  WS,
  type SessionRig,
} from "./support/session-helpers.js";
import { terminals, toolKinds } from "./support/envelopes.js";

const V2: SimRelease[] = ["3.12.3", "3.14.5"];

const modeChanges = (rig: SessionRig): Any[] =>
  rig.events.sessionEvents().filter((e) => e.type === "session.updated" && "planEnabled" in e.payload);
const statePatches = (rig: SessionRig): Any[] =>
  rig.events.events.filter((e) => e.type === "state.updated" && e.notification.patch.mode).map((e) => e.notification.patch.mode);
const read = (rig: SessionRig): Promise<Any> => rig.conn.agent.readSession({ workspacePath: WS, sessionId: rig.sessionId });

describe("planEnabled beside the editing modes (docs/runtime-contract.md §4.1)", () => {
  it("setMode(plan) turns plan on and keeps the editing mode; an editing mode turns it off; notices carry both", async () => {
    const rig = await sessionRig({ release: "3.12.3", create: { mode: "edit" } });
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const planned = await rig.conn.agent.setMode({ ...ref, mode: "plan" });
    expect(planned.session).toMatchObject({ mode: "edit", planEnabled: true });
    expect(planned.settings.mode).toEqual({ current: "edit", planEnabled: true });
    expect(planned.projection.mode).toBe("edit");
    const again = await rig.conn.agent.setMode({ ...ref, mode: "plan" });
    expect(again.settings.mode).toEqual({ current: "edit", planEnabled: true });
    const yolo = await rig.conn.agent.setMode({ ...ref, mode: "yolo" });
    expect(yolo.settings.mode).toEqual({ current: "yolo", planEnabled: false });
    expect(yolo.settings.permission.mode).toBe("bypass");
    await rig.events.waitForCount((e) => e.type === "state.updated" && e.notification.patch.mode, 3);
    expect(statePatches(rig)).toEqual([
      { current: "edit", planEnabled: true, previousPlanEnabled: false },
      { current: "edit", planEnabled: true, previousPlanEnabled: true },
      { current: "yolo", planEnabled: false, previousPlanEnabled: true },
    ]);
    await expect(rig.conn.agent.setMode({ ...ref, mode: "auto" })).rejects.toMatchObject({ code: -32602 });
    const created = await rig.conn.agent.createSession({ workspacePath: WS, mode: "plan" });
    expect(created.settings.mode).toEqual({ current: "build", planEnabled: true });
  });

  it("a cold resume (after a host restart) loses planEnabled; a warm resume keeps it", async () => {
    const install = await newInstall("3.14.5");
    const first = await sessionRig({ install, create: { mode: "edit" } });
    const ref = { workspacePath: WS, sessionId: first.sessionId };
    await first.conn.agent.setMode({ ...ref, mode: "plan" });
    expect((await first.conn.agent.resumeSession(ref)).settings.mode).toEqual({ current: "edit", planEnabled: true });
    expect(await first.host.dispose()).toBe(0);
    const second = HostHarness.start(install, {});
    try {
      const conn = await second.connect();
      // a read needs the session resident: resume first (docs/history.md)
      await expect(conn.agent.readSession(ref)).rejects.toMatchObject({ message: `Session is not active: ${first.sessionId}` });
      const resumed = await conn.agent.resumeSession(ref);
      expect(resumed.settings.mode).toEqual({ current: "edit", planEnabled: false });
      expect(resumed.session.planEnabled).toBe(false);
      expect((await conn.agent.readSession(ref)).session.planEnabled).toBe(false);
      await conn.agent.setMode({ ...ref, mode: "plan" });
      expect((await conn.agent.resumeSession(ref)).session.planEnabled).toBe(true);
    } finally {
      await second.dispose();
    }
  });
});

describe.each(V2)("plan scenarios on %s: approval turns plan off and keeps the editing mode", (release) => {
  it("plan-permission allow (from edit): plan on with the tool, then off; session.updated and state.updated carry planEnabled", async () => {
    const rig = await sessionRig({ release, create: { mode: "edit" } });
    await rig.prompt("sim:plan-permission");
    const { request, accepted } = await answerPermission(rig, "allow-plan");
    expect(accepted).toBe(true);
    expect(request).toMatchObject({ toolName: "ExitPlanMode", input: { plan: expect.stringContaining("# Proposed plan") } });
    const terminal = await rig.events.terminal(1);
    expect(terminal.payload.resultType).toBe("success");
    const [entered, left] = modeChanges(rig).map((e) => e.payload);
    expect(entered).toMatchObject({ mode: "edit", planEnabled: true, previousPlanEnabled: false, source: "tool" });
    expect(left).toMatchObject({
      mode: "edit",
      previousMode: "edit",
      planEnabled: false,
      previousPlanEnabled: true,
      source: "tool",
      toolCallId: request.toolCallId,
    });
    expect(statePatches(rig).at(-1)).toEqual({ current: "edit", planEnabled: false, previousPlanEnabled: true });
    const last = rig.events.events.filter((e) => e.type === "snapshot").at(-1).snapshot;
    expect(last.settings.mode).toEqual({ current: "edit", planEnabled: false });
    expect((await read(rig)).settings.mode).toEqual({ current: "edit", planEnabled: false });
  });

  it("plan-userinput accept (plan_approval): plan off, editing mode kept; decline keeps plan on", async () => {
    const rig = await sessionRig({ release, create: { mode: "yolo" } });
    await rig.prompt("sim:plan-userinput");
    const request = await nextUserInput(rig);
    expect(request).toMatchObject({ schema: { interaction: "plan_approval" }, input: { plan: expect.any(String) } });
    expect(
      await rig.conn.task.respondElicitation({
        taskId: rig.sessionId,
        workspacePath: WS,
        requestId: request.requestId,
        action: "accept",
        content: { answer_0: "approve", answer: "approve", answers: { answer_0: "approve" } },
      }),
    ).toBe(true);
    await rig.events.terminal(1);
    expect(modeChanges(rig).at(-1).payload).toMatchObject({ mode: "yolo", planEnabled: false, previousPlanEnabled: true });
    expect((await read(rig)).settings.mode).toEqual({ current: "yolo", planEnabled: false });

    await rig.prompt("sim:plan-userinput");
    const second = await nextUserInput(rig, 2);
    await rig.conn.task.respondElicitation({ taskId: rig.sessionId, workspacePath: WS, requestId: second.requestId, action: "decline" });
    expect((await rig.events.terminal(2)).payload.response).toContain("Staying in plan mode");
    expect((await read(rig)).settings.mode).toEqual({ current: "yolo", planEnabled: true });
  });

  it("plan-permission deny keeps plan on; a session already planning is not re-entered", async () => {
    const rig = await sessionRig({ release });
    await rig.conn.agent.setMode({ workspacePath: WS, sessionId: rig.sessionId, mode: "plan" });
    await rig.prompt("sim:plan-permission");
    await answerPermission(rig, "deny-plan");
    await rig.events.terminal(1);
    expect(modeChanges(rig)).toEqual([]);
    expect((await read(rig)).settings.mode).toEqual({ current: "build", planEnabled: true });
  });

  it("mode-plan: the host turns plan on mid-turn and keeps the editing mode", async () => {
    const rig = await sessionRig({ release, create: { mode: "edit" } });
    await promptToEnd(rig, "sim:mode-plan");
    expect(modeChanges(rig).map((e) => e.payload)).toEqual([
      expect.objectContaining({ mode: "edit", planEnabled: true, previousPlanEnabled: false, source: "tool" }),
    ]);
    expect((await read(rig)).settings.mode).toEqual({ current: "edit", planEnabled: true });
  });
});

describe.each(V2)("the v1 turn machinery on %s", (release) => {
  it("plain, tool-bash, permission, questions and usage play as on v1", async () => {
    const rig = await sessionRig({ release });
    const plain = await promptToEnd(rig, "sim:plain hello v2");
    expect(plain.terminal.payload).toMatchObject({ resultType: "success", response: "You said: hello v2" });
    const bash = await promptToEnd(rig, "sim:tool-bash command=ls");
    expect(toolKinds(bash.turn)).toEqual(["scheduled", "started", "progress", "progress", "result"]);
    void rig.prompt("sim:permission command=whoami");
    await answerPermission(rig, "allow_once");
    expect((await rig.events.terminal(3)).payload.resultType).toBe("success");
    void rig.prompt("sim:questions");
    const question = await nextUserInput(rig);
    await rig.conn.task.respondElicitation({
      taskId: rig.sessionId,
      workspacePath: WS,
      requestId: question.requestId,
      action: "accept",
      content: { answer_0: "vitest", answer_1: ["auth"], answers: { answer_0: "vitest", answer_1: ["auth"] } },
    });
    expect((await rig.events.terminal(4)).payload.response).toContain("Runner: vitest");
    const usage = await promptToEnd(rig, "sim:usage");
    expect(usage.terminal.payload.usage.totalTokens).toBeGreaterThan(0);
    expect(terminals(rig.events.sessionEvents())).toHaveLength(5);
    expect((await read(rig)).runtime.contextUsage.size).toBe(200000);
  });

  it("provider-headers asks for the v2 provider of the catalogue", async () => {
    const rig = await sessionRig({ release });
    void rig.prompt("sim:provider-headers failAfter=50");
    const hit = await rig.events.waitFor((e) => e.type === "providerRuntimeHeaders.request");
    expect(hit.request).toMatchObject({
      providerId: "account:bigmodel-start-plan",
      modelRef: { providerId: "account:bigmodel-start-plan", modelId: "GLM-5.3-Flash" },
    });
    expect(
      await rig.conn.agent.respondProviderRuntimeHeaders({
        workspacePath: WS,
        sessionId: rig.sessionId,
        requestId: hit.request.requestId,
        response: { headersApplied: false, errorMessage: "no headers headless" },
      }),
    ).toBe(true);
    expect((await rig.events.terminal(1)).type).toBe("turn.failed");
  });

  it("yolo never asks on v2 either", async () => {
    const rig = await sessionRig({ release, create: { mode: "yolo" } });
    const { terminal } = await promptToEnd(rig, "sim:permission command=id");
    expect(terminal.payload.resultType).toBe("success");
    expect(rig.events.events.some((e) => e.type === "permission.request")).toBe(false);
    const late = new EventCollector(rig.conn, {
      workspacePath: WS,
      sessionId: rig.sessionId,
      deliveryKind: "desktop-continuous",
      includeSnapshot: true,
    });
    expect((await late.waitFor((e) => e.type === "snapshot")).snapshot.settings.mode).toEqual({ current: "yolo", planEnabled: false });
  });
});
