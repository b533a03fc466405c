/** The ACP handlers in process: an SDK client app connected to our agent app, a fake host behind. */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { createZcodeAgent } from "../../../src/acp/agent-app.js";
import { silentLogger } from "../../../src/log/logger.js";
import { FakeHost } from "../../support/fake-host.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { StubBroker } from "../../support/stub-broker.js";

// session/new needs an existing directory (src/acp/session-params.ts)
const W = realpathSync(mkdtempSync(join(tmpdir(), "acp-app-w-")));
const OTHER = realpathSync(mkdtempSync(join(tmpdir(), "acp-app-other-")));
afterAll(() => {
  rmSync(W, { recursive: true, force: true });
  rmSync(OTHER, { recursive: true, force: true });
});

function connect(host = new FakeHost()) {
  const order: string[] = [];
  const agent = createZcodeAgent({
    native: new CurrentLineApi(host),
    logger: silentLogger,
    createBroker: () => new StubBroker(),
    cancelGraceMs: 1000,
    mergeDeltas: true,
    defaultCwd: process.cwd(),
  });
  const updates: acp.SessionNotification[] = [];
  const connection = acp
    .client({ name: "in-process" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      order.push(`update:${params.update.sessionUpdate}`);
      updates.push(params);
    })
    .connect(agent.app);
  return { host, agent, client: connection.agent, connection, updates, order };
}

describe("ACP handlers (in process)", () => {
  it("answers initialize without touching the host", async () => {
    const { host, client } = connect();
    const init = await client.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(host.calls).toHaveLength(0);
  });

  it("maps errors: relative cwd -32602, unknown session -32002, signed out -32000, busy -32600", async () => {
    const { host, client } = connect();
    await client.request(acp.methods.agent.initialize, { protocolVersion: 1 });
    await expect(client.request(acp.methods.agent.session.new, { cwd: "rel", mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(client.request(acp.methods.agent.session.setMode, { sessionId: "x", modeId: "plan" })).rejects.toMatchObject({
      code: -32002,
      data: { sessionId: "x" },
    });
    const { sessionId } = await client.request(acp.methods.agent.session.new, { cwd: W, mcpServers: [] });
    host.script.onPrompt = (s) => void s.startTurn();
    const first = client.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "a" }] });
    await new Promise<void>((resolve) => {
      const check = (): void => (host.callsOf("sendPrompt").length > 0 ? resolve() : void setImmediate(check));
      check();
    });
    await expect(
      client.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "b" }] }),
    ).rejects.toMatchObject({
      code: -32600,
      data: { code: "SESSION_BUSY" },
    });
    host.session(sessionId).complete();
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    host.handlers.set("agent.initialize", () => ({ available: false, reasonCode: "provider_not_ready" }));
    await expect(client.request(acp.methods.agent.session.new, { cwd: OTHER, mcpServers: [] })).rejects.toMatchObject({ code: -32000 });
    await expect(client.request(acp.methods.agent.session.list, { cursor: "c1" })).rejects.toMatchObject({ code: -32602 });
  });

  it("sends available commands after the session/new response", async () => {
    const { client, order } = connect();
    await client.request(acp.methods.agent.initialize, { protocolVersion: 1 });
    const done = client.request(acp.methods.agent.session.new, { cwd: W, mcpServers: [] }).then(() => order.push("response"));
    await done;
    await new Promise<void>((resolve) => {
      const check = (): void => (order.includes("update:available_commands_update") ? resolve() : void setImmediate(check));
      check();
    });
    expect(order).toEqual(["response", "update:available_commands_update"]);
  });

  it("ends every session when the connection closes", async () => {
    const { host, client, connection, agent } = connect();
    await client.request(acp.methods.agent.initialize, { protocolVersion: 1 });
    const { sessionId } = await client.request(acp.methods.agent.session.new, { cwd: W, mcpServers: [] });
    connection.close();
    await agent.shutdown();
    expect(host.session(sessionId).sinks.size).toBe(0);
    expect(host.callsOf("closeSession")).toHaveLength(0);
  });
});
