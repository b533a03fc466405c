import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import { answersFor } from "../answers.js";

const t = e2e();

describe("e2e: plan approval through the whole bridge, both client profiles", () => {
  it("Paseo profile (no elicitation): a switch_mode permission approves the plan and the mode returns to build", async () => {
    const client = await t.start({
      onPermission: (params) => ({
        outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
      }),
    });
    await client.initialize({}, { name: "Paseo", version: "0.11.0" });
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:plan-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const request = client.transcript.agentMessages().find((m) => m.method === "session/request_permission");
    expect(request.params.toolCall.kind).toBe("switch_mode");
    const modes = client
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "current_mode_update")
      .map((u) => u.currentModeId);
    expect(modes).toEqual(["plan", "build"]);
    const last = client
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "config_option_update")
      .at(-1);
    expect(last.configOptions.find((o: any) => o.id === "mode").currentValue).toBe("build");
    expect(last.configOptions.find((o: any) => o.id === "model").options.length).toBeGreaterThan(1);
    const answers = answersFor(await t.sim().readCallLog(), "respondPermission", sessionId);
    expect(answers.map((a) => a.optionId)).toEqual(["allow-plan"]);
    expect(client.text(sessionId)).toContain("Implementing the approved plan.");
    client.expectValid();
  });

  it("form profile: the plan_approval user-input request becomes a form elicitation and is accepted", async () => {
    const client = await t.start({
      onElicitation: (params) => {
        const schema = (params as { requestedSchema?: { properties: Record<string, any> } }).requestedSchema!;
        const [name, property] = Object.entries(schema.properties)[0]!;
        const value = property.oneOf?.[0]?.const ?? property.enum?.[0];
        return { action: "accept", content: { [name]: value } };
      },
    });
    await client.initialize({ elicitation: { form: {} } });
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:plan-userinput")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.transcript.agentMessages().some((m) => m.method === "elicitation/create")).toBe(true);
    const answers = answersFor(await t.sim().readCallLog(), "respondElicitation", sessionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ action: "accept", content: { answer_0: "approve" } });
    expect(
      client
        .updates(sessionId)
        .filter((u) => u.sessionUpdate === "current_mode_update")
        .map((u) => u.currentModeId),
    ).toEqual(["plan", "build"]);
    client.expectValid();
  });
});
