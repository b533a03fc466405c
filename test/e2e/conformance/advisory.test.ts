/**
 * acp-tck v1 conformance, ADVISORY tier (not required for CONFORMANT, kept because each is
 * cheap and is what a client relies on): unknown methods, a usable connection after errors,
 * agentInfo, resource_link prompts, load result shape, unique auth ids, `_meta` on prompts,
 * one-line error messages, exit after stdin closes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conformance, problems, STOP_REASONS, type RawAgent } from "./support/raw-agent.js";

const c = conformance({ beforeAll, afterAll });
let agent: RawAgent;
let init: any;
let ws: string;

beforeAll(async () => {
  agent = await c.agent({ initialize: false });
  init = await agent.initialize({});
  ws = await c.workspace();
});
afterAll(() => {
  expect(problems(agent)).toEqual([]);
});

describe("acp-tck v1 ADVISORY", () => {
  it("ACP-JSONRPC-004: an unknown method yields -32601", async () => {
    expect((await agent.request("session/teleport", { sessionId: "x" })).message.error.code).toBe(-32601);
    expect((await agent.request("_tck/unknown", {})).message.error.code).toBe(-32601);
  });

  it("ACP-JSONRPC-005: after erroneous requests the connection remains usable", async () => {
    await agent.request("session/new", { cwd: "not/absolute", mcpServers: [] });
    await agent.request("session/prompt", { sessionId: "ses_never_created", prompt: [{ type: "text", text: "hi" }] });
    await agent.request("session/new", { cwd: ws });
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    expect(STOP_REASONS).toContain((await agent.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })).stopReason);
  });

  it("ACP-INIT-004: agentInfo with name and version", () => {
    expect(init.agentInfo).toMatchObject({ name: "zcode-acp", version: expect.any(String) });
  });

  it("ACP-PROMPT-003: a prompt with a resource_link beside text is accepted", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const result = await agent.call("session/prompt", {
      sessionId,
      prompt: [
        { type: "text", text: "summarise" },
        { type: "resource_link", name: "README.md", uri: `file://${ws}/README.md` },
      ],
    });
    expect(STOP_REASONS).toContain(result.stopReason);
  });

  it("ACP-LOAD-003: the session/load result is an object, not null", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const line = await agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    expect(typeof line.message.result).toBe("object");
    expect(line.message.result).not.toBeNull();
  });

  it("ACP-AUTH-001: authMethods ids are unique", () => {
    const ids = init.authMethods.map((m: { id: string }) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ACP-META-001: a prompt with _meta (traceparent) resolves with a defined stopReason", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const result = await agent.call("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
      _meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    });
    expect(STOP_REASONS).toContain(result.stopReason);
  });

  it("ACP-ERROR-001: every error message is non-empty and has no newline", () => {
    const errors = agent.lines.filter((l) => l.from === "agent" && l.message.error).map((l) => l.message.error.message as string);
    expect(errors.length).toBeGreaterThan(3);
    for (const message of errors) {
      expect(message.trim().length).toBeGreaterThan(0);
      expect(message).not.toMatch(/[\r\n]/);
    }
  });

  it("ACP-SHUTDOWN-001: after the client closes stdin the agent exits on its own", async () => {
    const other = await c.agent();
    await other.call("session/new", { cwd: ws, mcpServers: [] }); // with a running host
    other.child.stdin.end();
    const code = await new Promise<number | null>((resolve) => other.child.once("exit", (exitCode) => resolve(exitCode)));
    expect(code).toBe(0);
  });
});
