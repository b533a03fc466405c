/**
 * `$/cancel_request` only for client requests still unanswered, end to end through the built CLI
 * (src/session/interactions/pending.ts): the raw transcript must hold no `$/cancel_request` for a
 * request id the client has answered. Paseo's interrupt answers its open permissions `cancelled`
 * and sends `session/cancel` at once, so the cancel reaches the bridge before the answer; the
 * bridge waits for the client's own answer (a grace) instead of cancelling the request.
 * `_zcode/diagnostics` counts the bridge's open client requests, so "nothing more will be sent"
 * is awaited, not slept for.
 */
import { describe, expect, it } from "vitest";
import type { SimInstall } from "../../../fixtures/sim-install.js";
import {
  type BridgeProcess,
  NO_ELICITATION_CLIENT,
  stopsFor,
  choose,
  holdPermission,
  useBridge,
  waitForLog,
} from "../../support/bridge-process.js";
import { until } from "../../support/until.js";
import { answersFor } from "../answers.js";

/** ids of the agent's `session/request_permission` requests the client answered, and the `$/cancel_request`s */
function wire(bridge: BridgeProcess) {
  const lines = bridge.transcript.lines.filter((l) => l.message !== undefined);
  const asked = new Set(
    lines.filter((l) => l.from === "agent" && l.message.method === "session/request_permission").map((l) => l.message.id),
  );
  const answered = lines
    .filter((l) => l.from === "client" && l.message.method === undefined && asked.has(l.message.id))
    .map((l) => l.message.id);
  const cancelled = lines
    .filter((l) => l.from === "agent" && l.message.method === "$/cancel_request")
    .map((l) => l.message.params.requestId);
  return { asked: [...asked], answered, cancelled, lines };
}

async function noOpenClientRequests(bridge: BridgeProcess): Promise<void> {
  await until(async () => (await bridge.diagnostics()).clientRequests === 0, {
    timeoutMs: 15_000,
    intervalMs: 50,
    what: "the bridge to close its open client requests",
  });
}

describe("$/cancel_request only for unanswered requests (client without elicitation)", () => {
  let sim: SimInstall;
  let bridge: BridgeProcess;

  useBridge(
    NO_ELICITATION_CLIENT,
    (s, b) => {
      sim = s;
      bridge = b;
    },
    { ZCODE_ACP_DIAGNOSTICS: "1" },
  );

  it("Paseo's interrupt (answer cancelled, then session/cancel at once): no $/cancel_request, deny once, one stop", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = holdPermission;
    const turn = bridge.promptOutcome(sessionId, "sim:permission");
    await bridge.waitFor(() => bridge.permissionRequests.length > before, "the permission request");
    const id = wire(bridge).asked.at(-1);
    await bridge.interrupt(sessionId);
    expect((await turn).response?.stopReason).toBe("cancelled");
    await noOpenClientRequests(bridge);
    const { answered, cancelled, lines } = wire(bridge);
    expect(answered).toContain(id);
    // the race this is about: the cancel went out before the answer
    const cancelAt = lines.findIndex((l) => l.from === "client" && l.message.method === "session/cancel");
    const answerAt = lines.findIndex((l) => l.from === "client" && l.message.method === undefined && l.message.id === id);
    expect(cancelAt).toBeLessThan(answerAt);
    expect(cancelled).not.toContain(id);
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
    expect(stopsFor(log, sessionId)).toHaveLength(1);
    expect((await bridge.promptOutcome(sessionId, "hello again")).response?.stopReason).toBe("end_turn");
  });

  it("answered allow, then session/cancel: no $/cancel_request for the answered request", async () => {
    const sessionId = await bridge.newSession();
    bridge.onPermission = choose("allow_once");
    const turn = bridge.promptOutcome(sessionId, "sim:permission");
    await waitForLog(sim, (log) => answersFor(log, "respondPermission", sessionId).length === 1, "the answer reached ZCode");
    await bridge.cancel(sessionId);
    expect(["end_turn", "cancelled"]).toContain((await turn).response?.stopReason);
    await noOpenClientRequests(bridge);
    const { answered, cancelled } = wire(bridge);
    expect(answered.length).toBeGreaterThan(0);
    for (const id of answered) expect(cancelled).not.toContain(id);
  });

  it("answered, then the turn ends: no $/cancel_request at all", async () => {
    const sessionId = await bridge.newSession();
    const sent = wire(bridge).cancelled.length;
    bridge.onPermission = choose("deny");
    expect((await bridge.promptOutcome(sessionId, "sim:permission")).response?.stopReason).toBe("end_turn");
    await noOpenClientRequests(bridge);
    expect(wire(bridge).cancelled.length).toBe(sent);
  });

  it("a client that never answers after its cancel gets one $/cancel_request (after the grace), then answers; nothing is left open", async () => {
    const sessionId = await bridge.newSession();
    const before = bridge.permissionRequests.length;
    bridge.onPermission = holdPermission; // answers only when the request is cancelled
    const turn = bridge.promptOutcome(sessionId, "sim:permission");
    await bridge.waitFor(() => bridge.permissionRequests.length > before, "the permission request");
    const id = wire(bridge).asked.at(-1);
    await bridge.cancel(sessionId);
    expect((await turn).response?.stopReason).toBe("cancelled");
    // the host got its deny at once, while the client request was still open
    const log = await sim.readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
    await bridge.waitFor(() => wire(bridge).cancelled.includes(id), "$/cancel_request for the unanswered request");
    await noOpenClientRequests(bridge);
    expect(wire(bridge).cancelled.filter((c) => c === id)).toHaveLength(1);
    expect(bridge.transcript.unanswered("agent")).toEqual([]);
  });
});
