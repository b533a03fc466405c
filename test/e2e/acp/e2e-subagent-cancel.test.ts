/**
 * Cancelling one subagent (adr/0027): where ZCode can stop a single subagent (`stopSubagent`,
 * 3.18+; the simulated 3.18.2 on the legacy line, 4.0.0 on V4) its child session advertises
 * `cancel`, and `session/cancel` on the child id stops that subagent only: ZCode is asked to stop
 * it, the child ends `cancelled`, and the parent's turn goes on to its own end.
 */
import { describe, expect, it } from "vitest";
import { SIM_RELEASES, type SimRelease } from "../../../fixtures/sim-install.js";
import { e2e } from "../../support/e2e-harness.js";
import { answersFor } from "../answers.js";

const project = (process.env.ZCODE_ACP_SIM_RELEASE ?? "3.11.2") as SimRelease;
// the project's release where it has stopSubagent (4.0.0), else the first legacy release with it
const release: SimRelease = SIM_RELEASES[project].hostFeatures?.includes("stop-subagent") ? project : "3.18.2";
const t = e2e({ release });

describe(`e2e: cancelling one subagent (ZCode ${release})`, () => {
  it("session/cancel on the child stops that subagent only; the parent turn ends end_turn", async () => {
    const client = await t.start();
    await client.initialize({ subagents: {} });
    const { sessionId } = await client.newSession(await t.workspace());
    const prompt = client.prompt(sessionId, "sim:subagent-stoppable");
    const announce = await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "subagent_update");
    expect(announce.capabilities).toEqual({ cancel: {} });
    const childId = announce.sessionId as string;
    await client.waitForUpdate(childId, (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await client.cancel(childId);
    const end = await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "subagent_update" && u.state?.state === "idle");
    expect(end).toEqual({ sessionUpdate: "subagent_update", sessionId: childId, state: { state: "idle", stopReason: "cancelled" } });
    await expect(prompt).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toBe("The watcher was stopped.");
    // ZCode was asked to stop that subagent, named by the Agent call that started it; the turn was not stopped
    const stops = await t.calls("stopSubagent");
    expect(stops).toHaveLength(1);
    expect(stops[0]?.params).toMatchObject({ sessionId, toolCallId: announce._meta.zcode.parentToolCallId, childSessionId: childId });
    expect(await t.stops(sessionId)).toHaveLength(0);
    // its running tool failed as stopped; ZCode's summary of the stopped subagent is its message when
    // it arrived before ZCode's answer to the stop (the child ends at whichever comes first)
    const childTools = client.updates(childId).filter((u) => u.sessionUpdate.startsWith("tool_call"));
    expect(childTools.at(-1)).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
    expect(["", "The sub-agent was stopped."]).toContain(client.text(childId));
    client.expectValid();
  });

  it("a child's cancel withdraws its pending permission: ZCode gets one deny, a later allow is not taken", async () => {
    const client = await t.start({
      onPermission: async (params) => {
        // the client cancels the subagent while its permission is open, then (too late) allows it
        await client.cancel(params.sessionId);
        const allow = params.options.find((o) => o.kind === "allow_once")!;
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      },
    });
    await client.initialize({ subagents: {} });
    const { sessionId } = await client.newSession(await t.workspace());
    const prompt = client.prompt(sessionId, "sim:subagent-permission");
    const announce = await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "subagent_update");
    const childId = announce.sessionId as string;
    await expect(prompt).resolves.toMatchObject({ stopReason: "end_turn" });
    const asked = client.transcript.agentMessages().filter((m) => m.method === "session/request_permission");
    expect(asked.map((m) => m.params.sessionId)).toEqual([childId]);
    // exactly one answer reached ZCode, and it was the deny
    const answers = answersFor(await t.sim().readCallLog(), "respondPermission", sessionId);
    expect(answers.map((a) => a.optionId)).toEqual(["deny"]);
    expect(client.text(sessionId)).toBe("The sub-agent could not run the tests.");
    const end = client
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "subagent_update")
      .at(-1);
    expect(end).toEqual({ sessionUpdate: "subagent_update", sessionId: childId, state: { state: "idle", stopReason: "cancelled" } });
    client.expectValid();
  });
});
