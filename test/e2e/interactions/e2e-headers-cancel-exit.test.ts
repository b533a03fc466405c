/**
 * End to end through the built CLI and the simulated install: provider runtime headers, cancel
 * mid-stream with nothing pending, and a host crash while a permission is pending.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import {
  BridgeProcess,
  FORM_CLIENT,
  NO_ELICITATION_CLIENT,
  callsFor,
  stopsFor,
  holdPermission,
  nativeCalls,
  useBridge,
  waitForLog,
} from "../../support/bridge-process.js";
import { answersFor } from "../answers.js";

const HEADERS_MESSAGE =
  "this account or model needs a captcha that only the ZCode desktop app can show; switch to a coding-plan model or use the app";

describe.each([
  ["form-capable client", FORM_CLIENT],
  ["client without elicitation", NO_ELICITATION_CLIENT],
])("provider headers and cancel end to end, %s", (_profile, capabilities) => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(capabilities, (s, b) => {
    sim = s;
    bridge = b;
  });

  it("provider headers: headersApplied:false at once, the turn stops with a clear error, the client is never asked", async () => {
    const sessionId = await bridge.newSession();
    const asked = bridge.permissionRequests.length + bridge.elicitationRequests.length;
    const outcome = await bridge.promptOutcome(sessionId, "sim:provider-headers");
    expect(outcome.error?.data).toMatchObject({ code: "PROVIDER_HEADERS_UNSUPPORTED" });
    expect(outcome.error?.message).toBe(HEADERS_MESSAGE);
    expect(bridge.permissionRequests.length + bridge.elicitationRequests.length).toBe(asked);
    const log = await waitForLog(sim, (l) => stopsFor(l, sessionId).length === 1, "the stop");
    const answers = callsFor(log, "respondProviderRuntimeHeaders", sessionId);
    expect(answers).toEqual([
      expect.objectContaining({
        workspacePath: bridge.workspace,
        requestId: expect.any(String),
        response: { headersApplied: false, errorMessage: expect.any(String) },
      }),
    ]);
    // a V4 command is named by its envelope's type (the stop is one where the install takes V4 input)
    const order = log
      .filter((e) => e.kind === "call")
      .map((e) =>
        e.method === "sendConversationCommandV4" ? `v4.${(e.params as { envelope: { type: string } }).envelope.type}` : e.method,
      );
    const stop = Math.max(order.lastIndexOf("stopGeneration"), order.lastIndexOf("v4.stop"));
    expect(order.indexOf("respondProviderRuntimeHeaders")).toBeLessThan(stop);
    if (sim.line === "zcode-task-v3") {
      // 4.0.0 has no session stream: the request came once, to the workspace's one header listener
      const listens = log.filter((e) => e.kind === "listen" && e.event === "onDynamicWorkspaceProviderRuntimeHeadersRequest");
      expect(listens.map((e) => e.arg)).toEqual([{ workspacePath: bridge.workspace }]);
      const fired = log.filter((e) => e.kind === "fire" && e.type === "providerRuntimeHeaders.request" && e.sessionId === sessionId);
      expect(fired.map((e) => e.listeners)).toEqual([1]);
    }
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
  });

  it("cancel mid-stream with nothing pending: cancelled, one stop, no interaction answers", async () => {
    const sessionId = await bridge.newSession();
    const turn = bridge.promptOutcome(sessionId, "sim:stream-until-cancel interval=20");
    await bridge.waitFor(
      () => bridge.sessionUpdates(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk").length >= 3,
      "streamed text",
    );
    await bridge.cancel(sessionId);
    expect((await turn).response?.stopReason).toBe("cancelled");
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(stopsFor(log, sessionId)).toHaveLength(1);
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([]);
    expect(answersFor(log, "respondElicitation", sessionId)).toEqual([]);
  });
});

describe("host exit while a permission is pending", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sim = await createSimulatedInstall();
    bridge = await BridgeProcess.start(sim, FORM_CLIENT);
  });

  afterAll(async () => {
    expect(bridge.transcript.problems).toEqual([]);
    await bridge?.stop();
    await sim?.cleanup();
  });

  /** pid of the host process (the Electron stand-in) the CLI started */
  function hostPid(): number {
    const out = execFileSync("ps", ["-o", "pid=", "--ppid", String(bridge.child.pid)], { encoding: "utf8" });
    const pids = out
      .split("\n")
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
    expect(pids).toHaveLength(1);
    return pids[0]!;
  }

  it("nothing is answered to the dead host or to its successor; the client request is withdrawn", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = holdPermission;
    const before = bridge.permissionRequests.length;
    const turn = bridge.promptOutcome(sessionId, "sim:permission");
    await bridge.waitFor(() => bridge.permissionRequests.length > before, "the permission request");
    process.kill(hostPid(), "SIGKILL");
    const outcome = await turn;
    expect(outcome.error).toBeDefined();
    await bridge.waitFor(() => bridge.agentMethods().includes("$/cancel_request"), "$/cancel_request");
    // the next prompt starts a new host incarnation; it must not receive the old answer
    const next = await bridge.promptOutcome(sessionId, "hello again");
    expect(next.response?.stopReason).toBe("end_turn");
    const log = await sim.readCallLog();
    expect(new Set(log.map((e) => e.run)).size).toBe(2);
    expect(nativeCalls(log, "respondPermission")).toEqual([]);
    expect(bridge.transcript.unanswered("agent")).toEqual([]);
  });
});
