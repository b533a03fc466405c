/**
 * End to end through the built CLI and the simulated install: permissions, with a
 * form-capable client and with a client that advertises no elicitation (Paseo).
 */
import { describe, expect, it } from "vitest";
import type { SimInstall } from "../../../fixtures/sim-install.js";
import {
  type BridgeProcess,
  FORM_CLIENT,
  NO_ELICITATION_CLIENT,
  stopsFor,
  choose,
  firesFor,
  holdPermission,
  useBridge,
  waitForLog,
} from "../../support/bridge-process.js";
import { answersFor } from "../answers.js";

describe.each([
  ["form-capable client", FORM_CLIENT],
  ["client without elicitation", NO_ELICITATION_CLIENT],
])("permissions end to end, %s", (_profile, capabilities) => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(capabilities, (s, b) => {
    sim = s;
    bridge = b;
  });

  async function followUpWorks(sessionId: string): Promise<void> {
    const next = await bridge.promptOutcome(sessionId, "hello again");
    expect(next.response?.stopReason).toBe("end_turn");
  }

  it("allow once: native options 1:1 with standard kinds, the tool call shown first, one respondPermission", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("allow_once");
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission");
    expect(outcome.response?.stopReason).toBe("end_turn");
    const asked = bridge.permissionRequests.slice(before);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.options).toEqual([
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
      { optionId: "deny", name: "Deny", kind: "reject_once" },
    ]);
    const toolCallId = asked[0]!.toolCall.toolCallId;
    expect(asked[0]!.toolCall).toMatchObject({ kind: "execute", rawInput: { command: "npm test" } });
    expect(asked[0]!.toolCall.title).toBeTruthy();
    // the client saw the tool call before the question about it
    const wire = bridge.transcript.agentMessages();
    const announced = wire.findIndex((m) => m.method === "session/update" && m.params.update.toolCallId === toolCallId);
    const question = wire.findIndex((m) => m.method === "session/request_permission" && m.params.toolCall.toolCallId === toolCallId);
    expect(announced).toBeGreaterThanOrEqual(0);
    expect(announced).toBeLessThan(question);
    const updates = bridge.sessionUpdates(sessionId);
    expect(updates).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" }));
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([
      expect.objectContaining({ taskId: sessionId, requestId: expect.any(String), optionId: "allow_once" }),
    ]);
    expect(stopsFor(log, sessionId)).toEqual([]);
  });

  it("deny: the native deny option once, the tool fails, the turn ends normally", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = choose("deny");
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission");
    expect(outcome.response?.stopReason).toBe("end_turn");
    expect(bridge.sessionUpdates(sessionId)).toContainEqual(
      expect.objectContaining({ sessionUpdate: "tool_call_update", status: "failed" }),
    );
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
  });

  it("an option id the client made up is refused: the host gets a real deny, never an allow", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = choose("allow_everything");
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission");
    expect(outcome.response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
  });

  it("allow always: the second run is not asked again; one respondPermission allow_always", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("allow_always");
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission-always");
    expect(outcome.response?.stopReason).toBe("end_turn");
    expect(bridge.permissionRequests.length - before).toBe(1);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["allow_always"]);
    const text = bridge
      .sessionUpdates(sessionId)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
      .join("");
    expect(text).toContain("Second run done.");
  });

  it("re-announced request (same requestId 3×): one client request, one host answer", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    bridge.onPermission = async () => {
      await released;
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    };
    const turn = bridge.promptOutcome(sessionId, "sim:permission-reannounce count=3 interval=150");
    await waitForLog(sim, (log) => firesFor(log, "permission.request", sessionId).length >= 3, "three announcements");
    release();
    const outcome = await turn;
    expect(outcome.response?.stopReason).toBe("end_turn");
    expect(bridge.permissionRequests.length - before).toBe(1);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["allow_once"]);
  });

  it(
    "cancel while the permission is pending, a client that does not answer it: " +
      "$/cancel_request (after the grace), a real deny once, one stop, then the next prompt works",
    async () => {
      const sessionId = await bridge.newSession();
      const before = bridge.permissionRequests.length;
      bridge.onPermission = holdPermission;
      const turn = bridge.promptOutcome(sessionId, "sim:permission");
      await bridge.waitFor(() => bridge.permissionRequests.length > before, "the permission request");
      await bridge.cancel(sessionId);
      const outcome = await turn;
      expect(outcome.response?.stopReason).toBe("cancelled");
      await bridge.waitFor(() => bridge.agentMethods().includes("$/cancel_request"), "$/cancel_request to the client");
      await bridge.waitFor(() => bridge.transcript.unanswered("agent").length === 0, "the client's answer to it");
      await followUpWorks(sessionId);
      const log = await sim.readCallLog();
      expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
      expect(stopsFor(log, sessionId)).toHaveLength(1);
    },
  );

  it("no deny option and the client does not approve: nothing is answered, the turn stops with an error", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = async () => ({ outcome: { outcome: "cancelled" } });
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission-no-deny");
    expect(outcome.error?.data).toMatchObject({ code: "INTERACTION_UNSUPPORTED" });
    await waitForLog(sim, (log) => stopsFor(log, sessionId).length === 1, "the stop");
    await followUpWorks(sessionId);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([]);
    expect(stopsFor(log, sessionId)).toHaveLength(1);
  });

  it("no deny option and an interrupt: cancelled, never allow, one stop", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = holdPermission;
    const turn = bridge.promptOutcome(sessionId, "sim:permission-no-deny");
    await bridge.waitFor(() => bridge.permissionRequests.length > before, "the permission request");
    expect(bridge.permissionRequests.at(-1)!.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always"]);
    await bridge.interrupt(sessionId);
    expect((await turn).response?.stopReason).toBe("cancelled");
    await followUpWorks(sessionId);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([]);
    expect(stopsFor(log, sessionId)).toHaveLength(1);
  });

  it("zero options: fail closed without asking the client", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = choose("allow_once");
    const outcome = await bridge.promptOutcome(sessionId, "sim:permission-zero-options");
    expect(outcome.error?.data).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    expect(bridge.permissionRequests.length).toBe(before);
    await followUpWorks(sessionId);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([]);
    expect(stopsFor(log, sessionId)).toHaveLength(1);
  });

  it("repeated permission / interrupt cycles: each answered exactly once, nothing left pending", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = holdPermission;
    const cycles = 6;
    for (let i = 0; i < cycles; i += 1) {
      const before = bridge.permissionRequests.length;
      const turn = bridge.promptOutcome(sessionId, "sim:permission");
      await bridge.waitFor(() => bridge.permissionRequests.length > before, `permission request ${i}`);
      await bridge.interrupt(sessionId);
      expect((await turn).response?.stopReason).toBe("cancelled");
    }
    await followUpWorks(sessionId);
    const log = await sim.readCallLog();
    const answers = answersFor(log, "respondPermission", sessionId);
    expect(answers.map((c) => c.optionId)).toEqual(Array(cycles).fill("deny"));
    expect(new Set(answers.map((c) => c.requestId)).size).toBe(cycles);
    expect(stopsFor(log, sessionId)).toHaveLength(cycles);
    expect(bridge.transcript.unanswered("agent")).toEqual([]);
  });
});
