import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";

const t = e2e();
const VERSION = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")).version as string;

describe("e2e: handshake, Paseo probe, auth and shutdown", () => {
  it("answers a Paseo-style probe quickly with modes and config options, commands after the response", async () => {
    const client = await t.start();
    const ws = await t.workspace();
    const started = Date.now();
    const init = await client.initialize({}, { name: "Paseo", version: "0.11.0" });
    const initMs = Date.now() - started;
    expect(await t.sim().readCallLog()).toHaveLength(0); // answered without starting the host
    const created = await client.newSession(ws);
    const probeMs = Date.now() - started;
    expect(init.protocolVersion).toBe(1);
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(["build", "edit", "plan", "yolo"]);
    expect(created.modes?.currentModeId).toBe("build");
    expect(created.configOptions?.map((o) => [o.id, o.category])).toEqual([
      ["model", "model"],
      ["thought_level", "thought_level"],
      ["mode", "mode"],
    ]);
    const model = created.configOptions![0]!;
    expect(model.type === "select" && model.options.length).toBeGreaterThan(1);
    await client.waitForUpdate(created.sessionId, (u) => u.sessionUpdate === "available_commands_update");
    const response = client.indexOf((l) => l.message.id !== undefined && l.message.result?.sessionId === created.sessionId);
    const commands = client.indexOf((l) => l.message.params?.update?.sessionUpdate === "available_commands_update");
    expect(response).toBeGreaterThanOrEqual(0);
    expect(commands).toBeGreaterThan(response);
    // generous budgets: spawn + module load + host start-up on a shared, loaded 2-core machine
    expect(initMs).toBeLessThan(10_000);
    expect(probeMs).toBeLessThan(20_000);
    console.log(`probe: initialize ${initMs} ms, initialize + session/new ${probeMs} ms`);
    client.expectValid();
  });

  it("states honest capabilities and our version, echoes protocol 1 for 99, refuses requests before initialize", async () => {
    const client = await t.start();
    const early = await client.agent.request("session/list", {}).catch((e: { code?: number }) => e);
    expect(early).toMatchObject({ code: -32600 });
    const init = await client.agent.request("initialize", { protocolVersion: 99, clientCapabilities: {} });
    expect(init).toEqual({
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: true, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        // session/set_title where the install has ZCode's V4 commands, session/delete where it has
        // zcode-task's deleteTask and listDeletedTaskIds (docs/acp.md)
        sessionCapabilities: {
          list: {},
          resume: {},
          close: {},
          ...(t.sim().manifest.protocol.allowlist.agent.includes("sendConversationCommandV4") ? { title: {} } : {}),
          ...(["deleteTask", "listDeletedTaskIds"].every((m) => t.sim().manifest.protocol.allowlist.task?.includes(m) === true)
            ? { delete: {} }
            : {}),
          ...(t.sim().manifest.protocol.allowlist.agent.includes("conversationRowsRangeV4") ? { fork: {} } : {}),
        },
        auth: { logout: {} }, // this connection's sign-in only (adr/0025)
        // a second session/prompt waits in ZCode's queue (claude-agent-acp's key; adr/0022)
        _meta: { claudeCode: { promptQueueing: true } },
      },
      authMethods: [expect.objectContaining({ id: "zcode-app" })],
      agentInfo: { name: "zcode-acp", title: "ZCode", version: VERSION },
      // `_session/steering` is served (adr/0022)
      _meta: { steering: { supported: true } },
    });
    client.expectValid();
  });

  it("fails session/new with authRequired and a sign-in message when signed out or without providers", async () => {
    for (const simProfile of [{ signedOut: true }, { zeroProviders: true }]) {
      const client = await t.start({ simProfile });
      await client.initialize();
      const error = await client.newSession(await t.workspace()).catch((e: { code?: number; message?: string }) => e);
      expect(error).toMatchObject({ code: -32000, message: expect.stringMatching(/sign in/i) });
      client.expectValid();
    }
  });

  it("rejects a relative cwd and unknown sessions with the standard codes", async () => {
    const client = await t.start();
    await client.initialize();
    await expect(client.newSession("relative/dir")).rejects.toMatchObject({ code: -32602 });
    await expect(client.prompt("ses_nope", "hi")).rejects.toMatchObject({ code: -32002, data: { sessionId: "ses_nope" } });
    client.expectValid();
  });

  it("forwards MCP servers to createSession", async () => {
    const client = await t.start();
    await client.initialize();
    const mcpServers = [
      { name: "files", command: "/usr/bin/true", args: ["--x"], env: [{ name: "TOKEN", value: "t" }] },
      { type: "http" as const, name: "paseo", url: "http://127.0.0.1:1/mcp", headers: [] },
    ];
    const { sessionId } = await client.newSession(await t.workspace(), mcpServers);
    const create = (await t.calls("createSession")).find((c) => JSON.stringify(c.params).includes("paseo"));
    expect((create?.params as { mcpServers: unknown }).mcpServers).toEqual(mcpServers);
    expect(sessionId).toMatch(/^ses_/);
    client.expectValid();
  });

  it("stops the host and exits when the client disappears mid-turn", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    const before = (await t.sim().readCallLog()).filter((e) => e.kind === "exit").length;
    void client.prompt(sessionId, "sim:stream-until-cancel interval=20").catch(() => undefined);
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    client.child.stdout.destroy();
    client.child.stdin.destroy();
    const exit = await Promise.race([client.exited, new Promise<"hung">((r) => setTimeout(() => r("hung"), 15_000))]);
    expect(exit).not.toBe("hung");
    const exits = (await t.sim().readCallLog()).filter((e) => e.kind === "exit");
    expect(exits.length).toBe(before + 1);
  });

  it("stops the host and exits 0 when stdin closes, and on SIGTERM", async () => {
    const client = await t.start();
    await client.initialize();
    await client.newSession(await t.workspace());
    const before = (await t.sim().readCallLog()).filter((e) => e.kind === "exit").length;
    await expect(client.close()).resolves.toEqual({ code: 0, signal: null });
    const exits = (await t.sim().readCallLog()).filter((e) => e.kind === "exit");
    expect(exits.length).toBe(before + 1);
    expect(exits.at(-1)).toMatchObject({ code: 0 });

    const second = await t.start();
    await second.initialize();
    await second.newSession(await t.workspace());
    const exitInfo = await second.kill("SIGTERM");
    expect(exitInfo.code === 0 || exitInfo.signal === "SIGTERM").toBe(true);
    expect((await t.sim().readCallLog()).filter((e) => e.kind === "exit").length).toBe(before + 2);
    second.expectValid({ allowUnanswered: true });
  });
});
