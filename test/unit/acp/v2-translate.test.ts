/**
 * The v1 → v2 translation of the session layer's output (src/acp/v2/translate.ts, adr/0028):
 * every update the session layer sends becomes a v2 update valid against the SDK's v2 schema
 * (or nothing, where v2 has no counterpart), message chunks always carry a messageId, and a
 * permission answer is an allow only when the client selected an option.
 */
import type * as v1 from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import {
  configOptionsV2,
  mcpServersV1,
  permissionRequestV2,
  permissionResponseV1,
  sessionUpdateV2,
  type MessageIds,
} from "../../../src/acp/v2/translate.js";
import { V2_RULES, validateV2Definition } from "../../support/acp-v2-schema.js";

const ids = (): MessageIds => ({ agent: () => "turn-agent", thought: () => "turn-thought", user: () => "turn-user" });

function valid(update: unknown): void {
  expect(validateV2Definition("UpdateSessionNotification", { sessionId: "s", update })).toEqual([]);
  expect(V2_RULES.checkUpdateKeys(update as Record<string, unknown>)).toEqual([]);
}

const SELECT: v1.SessionConfigOption = {
  type: "select",
  id: "mode",
  name: "Mode",
  category: "mode",
  currentValue: "ask",
  options: [
    { value: "ask", name: "Ask", description: "asks first" },
    { value: "auto", name: "Auto" },
  ],
};

const V1_UPDATES: v1.SessionUpdate[] = [
  { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } },
  { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" }, messageId: "m1" },
  { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } },
  { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" }, messageId: "m1" },
  { sessionUpdate: "user_message_chunk", content: { type: "text", text: "q" } },
  {
    sessionUpdate: "tool_call",
    toolCallId: "t1",
    title: "Run npm test",
    kind: "execute",
    status: "pending",
    rawInput: { command: "npm test" },
    locations: [{ path: "/w/a.ts", line: 3 }],
    content: [
      { type: "content", content: { type: "text", text: "out" } },
      { type: "diff", path: "/w/a.ts", oldText: "a", newText: "b" },
      { type: "diff", path: "/w/new.ts", oldText: null, newText: "n" },
    ],
  },
  { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", rawOutput: { code: 0 } },
  { sessionUpdate: "plan", entries: [{ content: "step", priority: "high", status: "in_progress" }] },
  { sessionUpdate: "available_commands_update", availableCommands: [{ name: "compact", description: "Compact", input: { hint: "why" } }] },
  { sessionUpdate: "config_option_update", configOptions: [SELECT] },
  { sessionUpdate: "session_info_update", title: "T", updatedAt: "2026-12-01T00:00:00Z" },
  { sessionUpdate: "usage_update", used: 10, size: 100, cost: { amount: 0.1, currency: "USD" } },
  { sessionUpdate: "notice", severity: "warning", title: "Advisory", description: "details", _meta: { "zcode-acp/advisory": "a" } },
];

describe("sessionUpdateV2", () => {
  it.each(V1_UPDATES.map((u) => [u.sessionUpdate, u] as const))("%s becomes a v2 update valid against the v2 schema", (_name, update) => {
    const out = sessionUpdateV2(update, ids());
    expect(out).toBeDefined();
    valid(out);
  });

  it("chunks carry a messageId: ZCode's where given (a thought its own), else the turn's", () => {
    expect(sessionUpdateV2(V1_UPDATES[0]!, ids())).toMatchObject({ messageId: "turn-agent" });
    expect(sessionUpdateV2(V1_UPDATES[1]!, ids())).toMatchObject({ messageId: "m1" });
    expect(sessionUpdateV2(V1_UPDATES[2]!, ids())).toMatchObject({ messageId: "turn-thought" });
    expect(sessionUpdateV2(V1_UPDATES[3]!, ids())).toMatchObject({ messageId: "m1:thought" });
    expect(sessionUpdateV2(V1_UPDATES[4]!, ids())).toMatchObject({ messageId: "turn-user" });
  });

  it("a tool call (create) and its update (patch) are both the v2 upsert tool_call_update; diffs name their change", () => {
    const created = sessionUpdateV2(V1_UPDATES[5]!, ids()) as any;
    expect(created).toMatchObject({ sessionUpdate: "tool_call_update", toolCallId: "t1", title: "Run npm test", status: "pending" });
    expect(created.content.slice(1)).toEqual([
      { type: "diff", changes: [{ operation: "modify", path: "/w/a.ts" }] },
      { type: "diff", changes: [{ operation: "add", path: "/w/new.ts" }] },
    ]);
    expect(sessionUpdateV2(V1_UPDATES[6]!, ids())).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      status: "completed",
      rawOutput: { code: 0 },
    });
  });

  it("modes do not exist in v2: current_mode_update is not sent", () => {
    expect(sessionUpdateV2({ sessionUpdate: "current_mode_update", currentModeId: "ask" }, ids())).toBeUndefined();
  });
});

describe("configOptionsV2", () => {
  it("renames id to configId and keeps the values", () => {
    const [option] = configOptionsV2([SELECT]);
    expect(option).toMatchObject({ configId: "mode", type: "select", currentValue: "ask" });
    expect(validateV2Definition("SessionConfigOption", option)).toEqual([]);
  });
});

describe("permissions", () => {
  const request: v1.RequestPermissionRequest = {
    sessionId: "s",
    toolCall: { toolCallId: "t1", title: "Run npm test", kind: "execute", rawInput: { command: "npm test" } },
    options: [
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "deny", name: "Deny", kind: "reject_once" },
    ],
  };

  it("the v1 question becomes v2's: a title and the tool call as its subject", () => {
    const out = permissionRequestV2(request);
    expect(validateV2Definition("RequestPermissionRequest", out)).toEqual([]);
    expect(out).toMatchObject({ title: "Run npm test", subject: { type: "tool_call", toolCall: { toolCallId: "t1" } } });
  });

  it("only a selected option is an answer; cancelled and unknown outcomes are cancelled (never an allow)", () => {
    expect(permissionResponseV1({ outcome: { outcome: "selected", optionId: "deny" } })).toEqual({
      outcome: { outcome: "selected", optionId: "deny" },
    });
    expect(permissionResponseV1({ outcome: { outcome: "cancelled" } })).toEqual({ outcome: { outcome: "cancelled" } });
    expect(permissionResponseV1({ outcome: { outcome: "_later" } } as never)).toEqual({ outcome: { outcome: "cancelled" } });
    expect(permissionResponseV1({ outcome: { outcome: "selected" } } as never)).toEqual({ outcome: { outcome: "cancelled" } });
  });
});

describe("mcpServersV1", () => {
  it("stdio and http become v1's; another transport is refused with INVALID_PARAMS", () => {
    expect(mcpServersV1([{ type: "stdio", name: "a", command: "/bin/a" }])).toEqual([{ name: "a", command: "/bin/a", args: [], env: [] }]);
    expect(mcpServersV1([{ type: "http", name: "b", url: "http://x" }])).toEqual([
      { type: "http", name: "b", url: "http://x", headers: [] },
    ]);
    expect(() => mcpServersV1([{ type: "_ws", name: "c" } as never])).toThrow(expect.objectContaining({ code: "INVALID_PARAMS" }));
    expect(mcpServersV1(undefined)).toEqual([]);
  });
});
