/**
 * acp-tck v1 conformance, MANDATORY: transport, JSON-RPC hygiene, initialize and version
 * negotiation, schema validity, extension methods (one test per requirement id; the ids and
 * texts are the kit's, src/tck/v1/requirements.py). Through the built CLI, raw lines checked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conformance, problems, STOP_REASONS, type RawAgent } from "./support/raw-agent.js";
import { validateDefinition } from "../../support/acp-schema.js";

const c = conformance({ beforeAll, afterAll });

/** a basic exchange: initialize, session/new, a prompt with non-ASCII text, an error, notifications */
async function basicExchange(): Promise<{ agent: RawAgent; sessionId: string; ws: string }> {
  const agent = await c.agent({ initialize: false });
  await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} }, "tck-init");
  const ws = await c.workspace();
  const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
  await agent.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "Grüße, 世界 🌍 — ünïcødé" }] });
  await agent.request("session/new", { cwd: "relative/path", mcpServers: [] }, 4242);
  agent.notify("session/cancel", { sessionId });
  agent.notify("_tck/notice", { hello: true });
  await agent.barrier();
  return { agent, sessionId, ws };
}

let exchange: Awaited<ReturnType<typeof basicExchange>>;
beforeAll(async () => {
  exchange = await basicExchange();
});

describe("acp-tck v1 MANDATORY: transport and JSON-RPC", () => {
  it("ACP-TRANSPORT-001: every line the agent writes to stdout is a single valid JSON-RPC 2.0 message", () => {
    const { agent } = exchange;
    expect(agent.badLines).toEqual([]);
    const fromAgent = agent.lines.filter((l) => l.from === "agent");
    expect(fromAgent.length).toBeGreaterThan(3);
    for (const { message } of fromAgent) {
      expect(message.jsonrpc).toBe("2.0");
      expect(typeof message.method === "string" || "id" in message).toBe(true);
    }
  });

  it("ACP-TRANSPORT-002: the agent's stdout is valid UTF-8", () => {
    const { agent, sessionId } = exchange;
    expect(agent.badLines.filter((l) => l.startsWith("not UTF-8"))).toEqual([]);
    // the echo of the non-ASCII prompt came back intact (multi-byte characters split across chunks decode)
    const echoed = agent
      .updates(sessionId)
      .map((l) => l.message.params.update)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content.text)
      .join("");
    expect(echoed).toContain("世界 🌍");
  });

  it("ACP-JSONRPC-001: a response's id echoes the request id exactly, for integer and string ids", () => {
    const { agent } = exchange;
    const byId = (id: unknown) => agent.lines.filter((l) => l.from === "agent" && l.message.method === undefined && l.message.id === id);
    expect(byId("tck-init")).toHaveLength(1);
    expect(byId(4242)).toHaveLength(1);
    expect(byId("4242")).toHaveLength(0);
    const requests = agent.lines.filter((l) => l.from === "client" && typeof l.message.method === "string" && "id" in l.message);
    for (const request of requests) {
      const answers = agent.lines.filter(
        (l) => l.from === "agent" && l.message.method === undefined && l.message.id === request.message.id,
      );
      expect(answers, `answers to ${JSON.stringify(request.message.id)}`).toHaveLength(1);
      expect(typeof answers[0]!.message.id).toBe(typeof request.message.id);
    }
  });

  it("ACP-JSONRPC-002: a response carries exactly one of result/error; an error has an integer code and a string message", () => {
    const { agent } = exchange;
    const responses = agent.lines.filter((l) => l.from === "agent" && l.message.method === undefined);
    expect(responses.some((l) => "error" in l.message)).toBe(true); // the relative cwd
    for (const { message } of responses) {
      expect(Number("result" in message) + Number("error" in message)).toBe(1);
      if ("error" in message) {
        expect(Number.isInteger(message.error.code)).toBe(true);
        expect(typeof message.error.message).toBe("string");
        expect(validateDefinition("Error", message.error)).toEqual([]);
      }
    }
  });

  it("ACP-JSONRPC-003: notifications never receive a response, and agent-initiated messages are not responses", () => {
    const { agent } = exchange;
    const clientIds = new Set(agent.lines.filter((l) => l.from === "client" && "id" in l.message).map((l) => JSON.stringify(l.message.id)));
    const responses = agent.lines.filter((l) => l.from === "agent" && l.message.method === undefined);
    for (const { message } of responses) {
      expect(message.id).not.toBeNull();
      expect(clientIds.has(JSON.stringify(message.id))).toBe(true);
    }
    // session/cancel (nothing running) and an unknown `_` notification were sent: 2 notifications, no answers
    expect(agent.lines.filter((l) => l.from === "client" && !("id" in l.message))).toHaveLength(2);
  });
});

describe("acp-tck v1 MANDATORY: initialize and version negotiation", () => {
  it("ACP-INIT-001: initialize succeeds, the result validates, protocolVersion is an integer", async () => {
    const agent = await c.agent({ initialize: false });
    const line = await agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: {},
      clientInfo: { name: "tck", version: "1" },
    });
    expect(line.message.result).toBeDefined();
    expect(validateDefinition("InitializeResponse", line.message.result)).toEqual([]);
    expect(Number.isInteger(line.message.result.protocolVersion)).toBe(true);
  });

  it("ACP-INIT-002: when the client requests protocol version 1, the agent returns 1", async () => {
    const agent = await c.agent({ initialize: false });
    const line = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(line.message.result.protocolVersion).toBe(1);
  });

  it("ACP-INIT-003: for an unsupported version (65535) a successful result with an integer version that is not 65535 and at least the v1 answer", async () => {
    const agent = await c.agent({ initialize: false });
    const line = await agent.request("initialize", {
      protocolVersion: 65535,
      clientCapabilities: {},
      clientInfo: { name: "tck", version: "1" },
      // the kit's probe also carries a v2-shaped info object
      info: { name: "tck", version: "1" },
    });
    const version = line.message.result?.protocolVersion;
    expect(Number.isInteger(version)).toBe(true);
    expect(version).not.toBe(65535);
    expect(version).toBeGreaterThanOrEqual(1);
  });
});

describe("acp-tck v1 MANDATORY: schema and extensions", () => {
  it("ACP-SCHEMA-001: every message the agent emits during a basic exchange validates against the v1 schema", () => {
    expect(problems(exchange.agent)).toEqual([]);
  });

  it("ACP-EXT-001: a request to an unknown `_`-prefixed method receives a response", async () => {
    const agent = await c.agent();
    const line = await agent.request("_tck/unknown_method", { x: 1 }, "ext-1");
    expect("result" in line.message || "error" in line.message).toBe(true);
    // and the connection stays usable
    await expect(agent.call("session/list", { cwd: await c.workspace() })).resolves.toMatchObject({ sessions: [] });
  });
});

describe("acp-tck v1 MANDATORY: session/new and prompt", () => {
  // one agent (a fresh session per test); a fresh process per test adds nothing here
  it("ACP-SESSION-001: session/new with an absolute cwd and mcpServers [] gives a non-empty string sessionId; the response validates", async () => {
    const { agent } = exchange;
    const line = await agent.request("session/new", { cwd: await c.workspace(), mcpServers: [] });
    expect(typeof line.message.result.sessionId).toBe("string");
    expect(line.message.result.sessionId.length).toBeGreaterThan(0);
    expect(validateDefinition("NewSessionResponse", line.message.result)).toEqual([]);
  });

  it("ACP-SESSION-002: two session/new calls on one connection return distinct sessionIds", async () => {
    const { agent } = exchange;
    const ws = await c.workspace();
    const a = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const b = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    expect(a.sessionId).not.toBe(b.sessionId);
  });

  it("ACP-PROMPT-001: a text-only session/prompt resolves with a defined stopReason", async () => {
    const { agent } = exchange;
    const { sessionId } = await agent.call("session/new", { cwd: await c.workspace(), mcpServers: [] });
    const result = await agent.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(STOP_REASONS).toContain(result.stopReason);
  });

  it("ACP-PROMPT-002: every session/update of the turn validates and carries the prompted session's id", async () => {
    const { agent } = exchange;
    const { sessionId } = await agent.call("session/new", { cwd: await c.workspace(), mcpServers: [] });
    const start = agent.lines.length;
    const response = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:tool-bash" }] });
    const during = agent.lines.slice(start, response.index).filter((l) => l.from === "agent" && l.message.method === "session/update");
    expect(during.length).toBeGreaterThan(0);
    for (const { message } of during) {
      expect(message.params.sessionId).toBe(sessionId);
      expect(validateDefinition("SessionNotification", message.params)).toEqual([]);
    }
    expect(problems(agent)).toEqual([]);
  });
});
