/**
 * acp-tck v1 conformance, CAPABILITY tier, for what zcode-acp advertises (loadSession, list,
 * resume, close, modes, config options, image / audio / embeddedContext prompts, an agent-type
 * auth method). One test per requirement id; through the built CLI, raw lines checked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateDefinition } from "../../support/acp-schema.js";
import { conformance, problems, STOP_REASONS, type RawAgent } from "./support/raw-agent.js";

const c = conformance({ beforeAll, afterAll });
const HISTORY_KINDS = new Set(["user_message_chunk", "agent_message_chunk", "agent_thought_chunk"]);

let agent: RawAgent;
let capabilities: any;
let initResult: any;
let ws: string;

/** a session with one finished turn */
async function sessionWithHistory(): Promise<string> {
  const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
  await agent.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
  return sessionId;
}

beforeAll(async () => {
  agent = await c.agent({ initialize: false });
  initResult = await agent.initialize({});
  capabilities = initResult.agentCapabilities;
  ws = await c.workspace();
});
afterAll(() => {
  expect(problems(agent)).toEqual([]);
});

describe("acp-tck v1 CAPABILITY: session/load (agentCapabilities.loadSession)", () => {
  it("advertised", () => expect(capabilities.loadSession).toBe(true));

  it("ACP-LOAD-001: session/load with sessionId, cwd and mcpServers succeeds with a valid LoadSessionResponse", async () => {
    const sessionId = await sessionWithHistory();
    const line = await agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    expect(line.message.result).toBeDefined();
    expect(validateDefinition("LoadSessionResponse", line.message.result)).toEqual([]);
  });

  // Fails today: the slash commands (available_commands_update) are sent right after the load
  // response. Engine work (commands for a client that learns the session late), not the ACP layer.
  it("ACP-LOAD-002: every update of the load replay arrives before the session/load response; none after it", async () => {
    const sessionId = await sessionWithHistory();
    const start = agent.lines.length;
    const line = await agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    expect(line.message.result).toBeDefined();
    expect(agent.updates(sessionId, start, line.index).length).toBeGreaterThan(0); // the replay, before
    await agent.barrier();
    expect(agent.updates(sessionId, line.index).map((l) => l.message.params.update.sessionUpdate)).toEqual([]);
  });
});

describe("acp-tck v1 CAPABILITY: session/resume (sessionCapabilities.resume)", () => {
  it("advertised", () => expect(capabilities.sessionCapabilities?.resume).toEqual({}));

  it("ACP-RESUME-001: session/resume with sessionId and cwd, no mcpServers, succeeds with a valid ResumeSessionResponse", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const line = await agent.request("session/resume", { sessionId, cwd: ws });
    expect(validateDefinition("ResumeSessionResponse", line.message.result)).toEqual([]);
    // also from a new connection (the session is not open there); a session is kept by ZCode
    // from its first prompt on (before, it leaves no trace: deferred persistence)
    await agent.call("session/prompt", { sessionId, prompt: [{ type: "text", text: "keep this session" }] });
    const fresh = await c.agent();
    const cold = await fresh.request("session/resume", { sessionId, cwd: ws });
    expect(validateDefinition("ResumeSessionResponse", cold.message.result)).toEqual([]);
    expect(problems(fresh)).toEqual([]);
  });

  it("ACP-RESUME-002: no history update (user / agent / thought chunks) before the session/resume response", async () => {
    const sessionId = await sessionWithHistory();
    for (const client of [agent, await c.agent()]) {
      const start = client.lines.length;
      const line = await client.request("session/resume", { sessionId, cwd: ws });
      expect(line.message.result).toBeDefined();
      const history = client.updates(sessionId, start, line.index).filter((l) => HISTORY_KINDS.has(l.message.params.update.sessionUpdate));
      expect(history).toEqual([]);
    }
  });
});

describe("acp-tck v1 CAPABILITY: session/list (sessionCapabilities.list)", () => {
  it("advertised", () => expect(capabilities.sessionCapabilities?.list).toEqual({}));

  it("ACP-LIST-001: session/list with params {} succeeds with a valid ListSessionsResponse whose sessions is an array", async () => {
    await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const line = await agent.request("session/list", {});
    expect(validateDefinition("ListSessionsResponse", line.message.result)).toEqual([]);
    expect(Array.isArray(line.message.result.sessions)).toBe(true);
  });

  it("ACP-LIST-002: session/list with a cwd no session uses returns sessions: []", async () => {
    await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const empty = await c.workspace();
    expect((await agent.request("session/list", { cwd: empty })).message.result).toEqual({ sessions: [] });
    // a directory that does not even exist
    expect((await agent.request("session/list", { cwd: `${empty}/no-session-here` })).message.result).toEqual({ sessions: [] });
  });
});

describe("acp-tck v1 CAPABILITY: session/close (sessionCapabilities.close)", () => {
  it("advertised", () => expect(capabilities.sessionCapabilities?.close).toEqual({}));

  it("ACP-CLOSE-001: session/close of an idle session succeeds with a valid empty-object result", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const line = await agent.request("session/close", { sessionId });
    expect(line.message.result).toEqual({});
    expect(validateDefinition("CloseSessionResponse", line.message.result)).toEqual([]);
  });

  it("ACP-CLOSE-002: session/close during a prompt cancels it: the prompt resolves with stopReason cancelled", async () => {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const start = agent.lines.length;
    const prompt = agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:stream-until-cancel interval=50" }] });
    await agent.waitFor(
      (l) => l.index >= start && l.message.method === "session/update" && l.message.params.sessionId === sessionId,
      "the first update",
    );
    const close = agent.request("session/close", { sessionId }, "tck-close");
    const [closed, prompted] = await Promise.all([close, prompt]);
    expect(closed.message.result).toEqual({});
    expect(prompted.message.result).toMatchObject({ stopReason: "cancelled" });
  });
});

describe("acp-tck v1 CAPABILITY: modes (inferred from session/new)", () => {
  it("ACP-MODES-001: modes validate and currentModeId is one of availableModes", async () => {
    const { modes } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    expect(modes).toBeTruthy();
    expect(validateDefinition("SessionModeState", modes)).toEqual([]);
    expect(modes.availableModes.map((m: { id: string }) => m.id)).toContain(modes.currentModeId);
  });

  it("ACP-MODES-002: session/set_mode to another mode succeeds; a current_mode_update carries currentModeId", async () => {
    const { sessionId, modes } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const other = modes.availableModes.find((m: { id: string }) => m.id !== modes.currentModeId).id;
    const start = agent.lines.length;
    const line = await agent.request("session/set_mode", { sessionId, modeId: other });
    expect(line.message.result).toBeDefined();
    await agent.barrier();
    const modeUpdates = agent
      .updates(sessionId, start)
      .map((l) => l.message.params.update)
      .filter((u) => u.sessionUpdate === "current_mode_update");
    for (const update of modeUpdates) expect(update).toHaveProperty("currentModeId");
  });
});

describe("acp-tck v1 CAPABILITY: config options (inferred from session/new)", () => {
  const values = (option: any): string[] =>
    option.options.flatMap((o: any) => (Array.isArray(o.options) ? o.options.map((x: any) => x.value) : [o.value]));

  it("ACP-CONFIG-001: every config option's currentValue is valid for its type", async () => {
    const { configOptions } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    expect(configOptions.length).toBeGreaterThan(0);
    for (const option of configOptions) {
      if (option.type === "boolean") expect(typeof option.currentValue).toBe("boolean");
      else expect(values(option)).toContain(option.currentValue);
    }
  });

  it("ACP-CONFIG-002: session/set_config_option answers the complete list with the new value applied", async () => {
    const { sessionId, configOptions } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const ids = configOptions.map((o: any) => o.id).sort();
    let changed = 0;
    let current = configOptions;
    for (const id of ids) {
      // the values on offer now (on zcode-task-v2 the thinking levels follow the model)
      const option = current.find((o: any) => o.id === id);
      const value = option && values(option).find((v) => v !== option.currentValue);
      if (value === undefined) continue;
      const result = await agent.call("session/set_config_option", { sessionId, configId: id, value });
      expect(result.configOptions.map((o: any) => o.id).sort()).toEqual(ids);
      expect(result.configOptions.find((o: any) => o.id === id).currentValue).toBe(value);
      current = result.configOptions;
      changed += 1;
    }
    expect(changed).toBeGreaterThan(0);
  });
});

describe("acp-tck v1 CAPABILITY: prompt capabilities", () => {
  async function promptWith(block: unknown): Promise<unknown> {
    const { sessionId } = await agent.call("session/new", { cwd: ws, mcpServers: [] });
    const line = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "what is in here?" }, block] });
    expect(line.message.error).toBeUndefined();
    return line.message.result?.stopReason;
  }

  it("ACP-PROMPTCAP-001: promptCapabilities.image → a prompt with an image block resolves with a defined stopReason", async () => {
    expect(capabilities.promptCapabilities.image).toBe(true);
    expect(STOP_REASONS).toContain(
      await promptWith({
        type: "image",
        data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        mimeType: "image/png",
      }),
    );
  });

  it("ACP-PROMPTCAP-002: promptCapabilities.audio → a prompt with an audio block resolves with a defined stopReason", async () => {
    expect(capabilities.promptCapabilities.audio).toBe(true);
    expect(STOP_REASONS).toContain(
      await promptWith({ type: "audio", data: "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=", mimeType: "audio/wav" }),
    );
  });

  it("ACP-PROMPTCAP-003: promptCapabilities.embeddedContext → text and blob resource blocks resolve with a defined stopReason", async () => {
    expect(capabilities.promptCapabilities.embeddedContext).toBe(true);
    expect(STOP_REASONS).toContain(
      await promptWith({ type: "resource", resource: { uri: "file:///notes/a.md", text: "# Notes", mimeType: "text/markdown" } }),
    );
    expect(STOP_REASONS).toContain(
      await promptWith({
        type: "resource",
        resource: { uri: "file:///data/b.bin", blob: "AAECAw==", mimeType: "application/octet-stream" },
      }),
    );
  });
});

describe("acp-tck v1 CAPABILITY: authentication (inferred from authMethods)", () => {
  it("ACP-AUTH-003: authenticate with the advertised method answers an object; session/new then does not fail with -32000", async () => {
    const fresh = await c.agent({ initialize: false });
    const init = await fresh.initialize({});
    const methodId = init.authMethods[0].id;
    const line = await fresh.request("authenticate", { methodId });
    expect(typeof line.message.result).toBe("object");
    const created = await fresh.request("session/new", { cwd: ws, mcpServers: [] });
    expect(created.message.error?.code).not.toBe(-32000);
    expect(created.message.result.sessionId).toEqual(expect.any(String));
  });
});

describe("extension: mid-turn input, as claude-agent-acp and codex-acp advertise it (adr/0022)", () => {
  it("advertises _session/steering at the top-level _meta of the initialize result", () =>
    expect(initResult._meta).toEqual({ steering: { supported: true } }));
  it("advertises prompt queueing under agentCapabilities._meta.claudeCode", () =>
    expect(capabilities._meta).toEqual({ claudeCode: { promptQueueing: true } }));
});
