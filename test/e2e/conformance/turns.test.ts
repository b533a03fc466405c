/**
 * acp-tck v1 conformance, MANDATORY: cancellation, capability gating of agent → client calls,
 * boolean config options and terminal auth only when advertised (one test per requirement id).
 * The mock client advertises `clientCapabilities: {}` and answers permissions `cancelled`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conformance, problems, type RawAgent } from "./support/raw-agent.js";
import { until } from "../../support/until.js";

const c = conformance({ beforeAll, afterAll });

/** a prompt that streams until cancelled; session/cancel as soon as the first update arrives */
async function cancelledTurn(agent: RawAgent, sessionId: string) {
  const start = agent.lines.length;
  const response = agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:stream-until-cancel interval=50" }] });
  await agent.waitFor(
    (l) => l.index >= start && l.message.method === "session/update" && l.message.params.sessionId === sessionId,
    "the first update",
  );
  agent.notify("session/cancel", { sessionId });
  const cancelAt = agent.lines.length - 1;
  return { response: await response, cancelAt };
}

describe("acp-tck v1 MANDATORY: cancellation", () => {
  let agent: RawAgent;
  beforeAll(async () => {
    agent = await c.agent();
  });

  it("ACP-CANCEL-001: after session/cancel during a prompt, the prompt resolves with stopReason cancelled, not an error", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: await c.workspace(), mcpServers: [] });
    const { response, cancelAt } = await cancelledTurn(agent, sessionId);
    expect(response.index).toBeGreaterThan(cancelAt); // the cancel was in flight, not raced
    expect(response.message.error).toBeUndefined();
    expect(response.message.result).toMatchObject({ stopReason: "cancelled" });
  });

  it("ACP-CANCEL-002: every session/update of the cancelled session arrives before the prompt response, none after it", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: await c.workspace(), mcpServers: [] });
    const { response } = await cancelledTurn(agent, sessionId);
    expect(response.message.result?.stopReason).toBe("cancelled");
    // let ZCode finish the stopped turn (back to idle), then a round trip: anything late would be in between
    const sim = c.sim();
    await until(
      async () => {
        const log = await sim.readCallLog();
        const stops = log.filter(
          (e) =>
            e.kind === "call" &&
            (e.method === "stopGeneration" ||
              (e.method === "sendConversationCommandV4" && (e.params as { envelope?: { type?: string } }).envelope?.type === "stop")),
        );
        const last = stops.at(-1);
        return last && log.some((e) => e.kind === "fire" && e.type === "state.updated" && e.seq > last.seq && e.run === last.run);
      },
      { timeoutMs: 10_000, intervalMs: 25, what: "ZCode to go idle after the stop" },
    );
    await agent.barrier();
    expect(agent.updates(sessionId, response.index)).toEqual([]);
    expect(problems(agent)).toEqual([]);
  });
});

describe("acp-tck v1 MANDATORY: no unadvertised client calls (clientCapabilities: {})", () => {
  let agent: RawAgent;
  beforeAll(async () => {
    agent = await c.agent({ capabilities: {} });
    const ws = await c.workspace();
    // tools that read, edit, write and run; a permission; questions; both plan approval forms
    for (const text of [
      "sim:tool-read",
      "sim:tool-edit",
      "sim:tool-write",
      "sim:tool-bash",
      "sim:permission",
      "sim:questions",
      "sim:plan-userinput",
      "sim:plan-permission",
    ]) {
      const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
      await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    }
    await agent.barrier();
  }, 60_000);

  it("ACP-CLIENTCAP-001: no fs/read_text_file or fs/write_text_file without the fs capability", () => {
    expect(agent.agentRequests("fs/")).toEqual([]);
  });

  it("ACP-CLIENTCAP-002: no terminal/* call without the terminal capability", () => {
    expect(agent.agentRequests("terminal/")).toEqual([]);
  });

  it("ACP-CLIENTCAP-003: no elicitation/create without an advertised elicitation mode", () => {
    expect(agent.agentRequests("elicitation/")).toEqual([]);
    // the interactions reached the client another way (permissions), so this is not vacuous
    expect(agent.agentRequests("session/request_permission").length).toBeGreaterThan(0);
    expect(problems(agent)).toEqual([]);
  });
});

describe("acp-tck v1 MANDATORY: only what the client can take", () => {
  it("ACP-CONFIG-003: no type boolean config option without session.configOptions.boolean", async () => {
    const agent = await c.agent({ capabilities: {} });
    const ws = await c.workspace();
    const created = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    expect(Array.isArray(created.configOptions) && created.configOptions.length > 0).toBe(true);
    await agent.call("session/set_config_option", { sessionId: created.sessionId, configId: "mode", value: "plan" });
    await agent.barrier();
    // anywhere: session/new, set_config_option answers, config_option_update notifications
    const lists = agent.lines
      .filter((l) => l.from === "agent")
      .flatMap((l) => [l.message.result?.configOptions, l.message.params?.update?.configOptions])
      .filter((list): list is any[] => Array.isArray(list));
    expect(lists.length).toBeGreaterThan(1);
    expect(lists.flat().filter((o) => o.type === "boolean")).toEqual([]);
  });

  it("ACP-AUTH-002: no terminal auth method unless the client advertised auth.terminal", async () => {
    const agent = await c.agent({ initialize: false });
    const result = await agent.initialize({});
    expect((result.authMethods ?? []).filter((m: { type?: string }) => m.type === "terminal")).toEqual([]);
  });
});
