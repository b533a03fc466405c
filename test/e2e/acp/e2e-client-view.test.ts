/**
 * What a Paseo or Zed user sees, through the built CLI (runs on both release lines): slash commands
 * reach a client that learns the session id only after `session/new` resolves; every tool call the
 * client saw gets a final status before a failed or cancelled prompt answers; the prompt response
 * carries the token usage; a probe session that never got a prompt leaves no trace in ZCode.
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";

const t = e2e();

const isCommands = (line: { message: any }, sessionId: string): boolean =>
  line.message?.method === "session/update" &&
  line.message.params?.sessionId === sessionId &&
  line.message.params.update?.sessionUpdate === "available_commands_update";

describe("e2e: what the client sees", () => {
  it("sends the slash commands again when the first prompt starts (a client that learned the id late still gets them)", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "available_commands_update");
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    const promptLine = client.indexOf((l) => l.message?.method === "session/prompt", "client");
    const lines = client.transcript.lines;
    const promptAt = lines.findIndex((l, i) => i >= 0 && l.from === "client" && l.message?.method === "session/prompt");
    const againAfterPrompt = lines.slice(promptAt).some((l) => l.from === "agent" && isCommands(l, sessionId));
    expect(promptLine).toBeGreaterThanOrEqual(0);
    expect(againAfterPrompt).toBe(true);
    // only once more, not on every prompt
    await client.prompt(sessionId, "again");
    expect(lines.filter((l) => l.from === "agent" && isCommands(l, sessionId))).toHaveLength(2);
    client.expectValid();
  });

  it("session/load sends the commands before its response and nothing after it", async () => {
    const first = await t.start();
    await first.initialize();
    const cwd = await t.workspace();
    const { sessionId } = await first.newSession(cwd);
    await first.prompt(sessionId, "remember me");
    await first.close();
    const client = await t.start();
    await client.initialize();
    await client.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
    const lines = client.transcript.lines;
    const responseAt = lines.findIndex(
      (l) =>
        l.from === "agent" &&
        l.message?.result !== undefined &&
        lines.some((r) => r.from === "client" && r.message?.method === "session/load" && r.message.id === l.message.id),
    );
    expect(responseAt).toBeGreaterThan(0);
    expect(lines.slice(0, responseAt).some((l) => l.from === "agent" && isCommands(l, sessionId))).toBe(true);
    // a round trip after the response: nothing for the session arrived in between
    await client.agent.request("session/list", { cwd });
    expect(lines.slice(responseAt + 1).filter((l) => l.from === "agent" && l.message?.method === "session/update")).toEqual([]);
  });

  it("a cancelled prompt: the tool the client saw running gets a final failed update before the response", async () => {
    let asked!: () => void;
    const permission = new Promise<void>((resolve) => (asked = resolve));
    const client = await t.start({
      onPermission: () => {
        asked();
        return new Promise(() => undefined); // the user never answers
      },
    });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    const result = client.prompt(sessionId, "sim:permission");
    await permission;
    const tool = client.updates(sessionId).find((u) => u.sessionUpdate === "tool_call");
    expect(tool).toBeDefined();
    await client.cancel(sessionId);
    await expect(result).resolves.toMatchObject({ stopReason: "cancelled" });
    const last = client
      .updates(sessionId)
      .filter((u) => u.toolCallId === tool.toolCallId)
      .at(-1);
    expect(last).toMatchObject({ sessionUpdate: "tool_call_update", status: "failed" });
    client.expectValid({ allowUnanswered: true });
  });

  it("a failed prompt (a question the client cannot show): the question's tool call ends failed before the error", async () => {
    const client = await t.start();
    await client.initialize(); // no elicitation: several questions cannot be asked
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:questions")).rejects.toMatchObject({ data: { code: "INTERACTION_UNSUPPORTED" } });
    const tools = client.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call");
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) {
      const last = client
        .updates(sessionId)
        .filter((u) => u.toolCallId === tool.toolCallId)
        .at(-1);
      expect(last.status, tool.title).toMatch(/^(completed|failed)$/);
    }
  });

  it("the prompt response carries the session's token usage", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    const response = (await client.prompt(sessionId, "sim:usage")) as { usage?: Record<string, number> };
    expect(response.usage).toMatchObject({
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      totalTokens: expect.any(Number),
    });
    expect(response.usage!.inputTokens).toBeGreaterThan(0);
    client.expectValid();
  });

  it("a probe (initialize, session/new, SIGTERM) leaves no session in ZCode; a prompted session stays", async () => {
    const cwd = await t.workspace();
    const probe = await t.start();
    await probe.initialize();
    const probed = await probe.newSession(cwd);
    await probe.kill("SIGTERM");
    const created = forSession(await t.calls("createSession"), probed.sessionId);
    expect(created.length).toBe(0); // the host chose the id: find the call by workspace instead
    const byCwd = (await t.calls("createSession")).filter((c) => (c.params as { workspacePath: string }).workspacePath === cwd);
    expect(byCwd.at(-1)!.params).toMatchObject({ persistence: "deferred" });

    const user = await t.start();
    await user.initialize();
    const kept = await user.newSession(cwd);
    await user.prompt(kept.sessionId, "keep me");
    await user.close();

    const lister = await t.start();
    await lister.initialize();
    const listed = (await lister.agent.request("session/list", { cwd })).sessions.map((s) => s.sessionId);
    expect(listed).toContain(kept.sessionId);
    expect(listed).not.toContain(probed.sessionId);
  });
});
