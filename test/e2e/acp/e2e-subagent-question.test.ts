/**
 * A question raised by a subagent (`sim:subagent-question`: its AskUserQuestion tool's
 * `userInput.request` names the subagent in `origin`; on V4 the request's tool row names its
 * parent) is asked under the child's session id for a client with `clientCapabilities.subagents`
 * (adr/0027 addendum), answered to ZCode exactly once, with the same behaviour as on the parent:
 * a client without elicitation (Paseo) gets a permission whose options are the answers, a
 * form-capable client a form. Without the capability it is asked on the parent, as before.
 * A subagent's plan approval (`sim:subagent-plan`, an ExitPlanMode permission naming the
 * subagent; that ZCode raises one is a guess) goes the same way: the plan and its question under
 * the child's id, one answer.
 * Runs on every project; every line is validated (the unstable updates against the unstable schema).
 */
import { describe, expect, it } from "vitest";
import type * as acp from "@agentclientprotocol/sdk";
import { e2e } from "../../support/e2e-harness.js";
import { answersFor } from "../answers.js";
import type { AcpTestClient } from "../../support/acp-test-client.js";

const t = e2e();
const QUESTION = "Which test runner should the sub-agent use?";

async function session(capabilities: Record<string, unknown>, options: Parameters<typeof t.start>[0]) {
  const client = await t.start(options);
  await client.initialize(capabilities);
  const { sessionId } = await client.newSession(await t.workspace());
  return { client, sessionId };
}

function childOf(client: AcpTestClient, sessionId: string): string {
  const announce = client.updates(sessionId).find((u) => u.sessionUpdate === "subagent_update");
  expect(announce).toBeDefined();
  return announce.sessionId as string;
}

function agentRequests(client: AcpTestClient, method: string): any[] {
  return client.transcript.lines.flatMap((l) => (l.from === "agent" && l.message?.method === method ? [l.message.params] : []));
}

describe("e2e: a subagent's question", () => {
  it("client without elicitation (Paseo): a permission under the child's id whose options are the answers; answered once", async () => {
    const asked: acp.RequestPermissionRequest[] = [];
    const { client, sessionId } = await session(
      { subagents: {} },
      {
        onPermission: (params) => {
          asked.push(params);
          return { outcome: { outcome: "selected", optionId: "node" } };
        },
      },
    );
    await expect(client.prompt(sessionId, "sim:subagent-question")).resolves.toMatchObject({ stopReason: "end_turn" });
    const childId = childOf(client, sessionId);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.sessionId).toBe(childId);
    expect(asked[0]!.options).toEqual([
      { optionId: "vitest", name: "Vitest", kind: "allow_once" },
      { optionId: "node", name: "node:test", kind: "allow_once" },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    expect(asked[0]!.toolCall).toMatchObject({ title: QUESTION });
    // the question's tool call is the child's: shown under its id, never on the parent
    expect(client.updates(childId)).toContainEqual(
      expect.objectContaining({ sessionUpdate: "tool_call", toolCallId: asked[0]!.toolCall.toolCallId }),
    );
    expect(client.updates(sessionId).some((u) => u.toolCallId === asked[0]!.toolCall.toolCallId)).toBe(false);
    expect(agentRequests(client, "elicitation/create")).toEqual([]);
    const answers = answersFor(await t.sim().readCallLog(), "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "accept", content: expect.objectContaining({ answer_0: "node" }) })]);
    expect(client.text(childId)).toBe("Runner: node");
    expect(client.text(sessionId)).toBe("The sub-agent will use node.");
    client.expectValid();
  });

  it("form-capable client: a form under the child's id, naming the child's tool call; answered once, no permission", async () => {
    const forms: acp.CreateElicitationRequest[] = [];
    const { client, sessionId } = await session(
      { subagents: {}, elicitation: { form: {} } },
      {
        onPermission: () => {
          throw new Error("no permission expected");
        },
        onElicitation: (params) => {
          forms.push(params);
          return { action: "accept", content: { answer_0: "vitest" } };
        },
      },
    );
    await expect(client.prompt(sessionId, "sim:subagent-question")).resolves.toMatchObject({ stopReason: "end_turn" });
    const childId = childOf(client, sessionId);
    expect(forms).toHaveLength(1);
    const form = forms[0] as acp.CreateElicitationRequest & { sessionId: string; toolCallId?: string };
    expect(form.sessionId).toBe(childId);
    expect(form.toolCallId).toEqual(expect.any(String));
    expect(client.updates(childId)).toContainEqual(expect.objectContaining({ sessionUpdate: "tool_call", toolCallId: form.toolCallId }));
    expect(agentRequests(client, "session/request_permission")).toEqual([]);
    const answers = answersFor(await t.sim().readCallLog(), "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "accept", content: expect.objectContaining({ answer_0: "vitest" }) })]);
    expect(client.text(childId)).toBe("Runner: vitest");
    client.expectValid();
  });

  it.each([
    ["form-capable client", true],
    ["client without elicitation (Paseo)", false],
  ] as const)(
    "%s, the question read before the child's tool row (rowsLate=1): the call is shown once, first, and the row updates it",
    async (_label, form) => {
      const named: (string | undefined)[] = [];
      const { client, sessionId } = await session(form ? { subagents: {}, elicitation: { form: {} } } : { subagents: {} }, {
        onPermission: (params) => {
          named.push(params.toolCall.toolCallId);
          return { outcome: { outcome: "selected", optionId: "vitest" } };
        },
        onElicitation: (params) => {
          named.push((params as { toolCallId?: string }).toolCallId);
          return { action: "accept", content: { answer_0: "vitest" } };
        },
      });
      await expect(client.prompt(sessionId, "sim:subagent-question rowsLate=1")).resolves.toMatchObject({ stopReason: "end_turn" });
      const childId = childOf(client, sessionId);
      expect(named).toEqual([expect.any(String)]);
      const toolCallId = named[0]!;
      const about = client.updates(childId).filter((u) => u.toolCallId === toolCallId);
      // announced once, before the question; ZCode's row, read after it, only updates that call
      expect(about.filter((u) => u.sessionUpdate === "tool_call")).toHaveLength(1);
      expect(about[0]).toMatchObject({ sessionUpdate: "tool_call", title: QUESTION, status: "pending" });
      expect(about.at(-1)).toMatchObject({ sessionUpdate: "tool_call_update", status: "completed" });
      const method = form ? "elicitation/create" : "session/request_permission";
      const asked = client.transcript.lines.findIndex((l) => l.from === "agent" && l.message?.method === method);
      const shown = client.transcript.lines.findIndex(
        (l) => l.from === "agent" && l.message?.method === "session/update" && l.message.params?.update?.toolCallId === toolCallId,
      );
      expect(shown).toBeGreaterThanOrEqual(0);
      expect(shown).toBeLessThan(asked);
      const answers = answersFor(await t.sim().readCallLog(), "respondElicitation", sessionId);
      expect(answers).toEqual([expect.objectContaining({ action: "accept" })]);
      expect(client.text(childId)).toBe("Runner: vitest");
      client.expectValid();
    },
  );

  it("without clientCapabilities.subagents: the question is asked on the parent, as before", async () => {
    const forms: acp.CreateElicitationRequest[] = [];
    const { client, sessionId } = await session(
      { elicitation: { form: {} } },
      {
        onElicitation: (params) => {
          forms.push(params);
          return { action: "accept", content: { answer_0: "node" } };
        },
      },
    );
    await expect(client.prompt(sessionId, "sim:subagent-question")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(forms).toHaveLength(1);
    expect((forms[0] as { sessionId: string }).sessionId).toBe(sessionId);
    expect(client.updates().every((u) => u.sessionUpdate !== "subagent_update")).toBe(true);
    const answers = answersFor(await t.sim().readCallLog(), "respondElicitation", sessionId);
    expect(answers).toEqual([expect.objectContaining({ action: "accept" })]);
    expect(client.text(sessionId)).toBe("The sub-agent will use node.");
    client.expectValid();
  });

  it("a subagent's plan approval, form client: the plan and the form under the child's id; Paseo: the permission there; one answer each", async () => {
    const forms: acp.CreateElicitationRequest[] = [];
    const form = await session(
      { subagents: {}, elicitation: { form: {} } },
      {
        onElicitation: (params) => {
          forms.push(params);
          return { action: "accept", content: { decision: "allow-plan" } };
        },
      },
    );
    await expect(form.client.prompt(form.sessionId, "sim:subagent-plan")).resolves.toMatchObject({ stopReason: "end_turn" });
    const formChild = childOf(form.client, form.sessionId);
    expect(forms).toHaveLength(1);
    const asked = forms[0] as acp.CreateElicitationRequest & { sessionId: string; toolCallId?: string };
    expect(asked.sessionId).toBe(formChild);
    expect(form.client.updates(formChild)).toContainEqual(expect.objectContaining({ toolCallId: asked.toolCallId, kind: "switch_mode" }));
    expect(form.client.updates(form.sessionId).some((u) => u.toolCallId === asked.toolCallId)).toBe(false);
    expect(answersFor(await t.sim().readCallLog(), "respondPermission", form.sessionId).map((a) => a.optionId)).toEqual(["allow-plan"]);
    expect(form.client.text(formChild)).toBe("Plan approved.");
    form.client.expectValid();

    const permissions: acp.RequestPermissionRequest[] = [];
    const paseo = await session(
      { subagents: {} },
      {
        onPermission: (params) => {
          permissions.push(params);
          const reject = params.options.find((o) => o.kind === "reject_once")!;
          return { outcome: { outcome: "selected", optionId: reject.optionId } };
        },
      },
    );
    await expect(paseo.client.prompt(paseo.sessionId, "sim:subagent-plan")).resolves.toMatchObject({ stopReason: "end_turn" });
    const paseoChild = childOf(paseo.client, paseo.sessionId);
    expect(permissions).toHaveLength(1);
    expect(permissions[0]!.sessionId).toBe(paseoChild);
    expect(answersFor(await t.sim().readCallLog(), "respondPermission", paseo.sessionId).map((a) => a.optionId)).toEqual(["deny-plan"]);
    expect(paseo.client.text(paseoChild)).toBe("Plan rejected.");
    paseo.client.expectValid();
  });
});
