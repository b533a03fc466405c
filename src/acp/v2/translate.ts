/**
 * ACP v1 → v2 translation of what the session layer produces (adr/0028). The session service
 * speaks v1 (src/session/ is shared by both protocols); the v2 agent turns its updates, config
 * options, commands and permission questions into the shapes of SDK 2.4.0's v2 schema
 * (`@agentclientprotocol/sdk/experimental/v2`), and the client's v2 inputs back into v1.
 *
 * v2 differences handled here: every message chunk carries a `messageId` (required in v2); a
 * v1 `tool_call` (create) and `tool_call_update` (patch) are both the v2 upsert
 * `tool_call_update`; `plan` becomes `plan_update` with a plan id; a v1 diff becomes the v2 diff
 * (changed paths; v1's old/new text has no v2 field and stays out); modes do not exist in v2
 * (`current_mode_update` is not sent: the mode is a config option). An update with no v2
 * counterpart is not sent (undefined), never sent malformed.
 */
import type * as v1 from "@agentclientprotocol/sdk";
import type * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { BridgeError } from "../../util/errors.js";

type Meta = { _meta?: { [key: string]: unknown } | null };

/** `_meta` when there is one (v2 leaves an omitted `_meta` alone; an explicit null would clear stored metadata) */
function meta(value: Meta): Meta {
  return value._meta !== undefined && value._meta !== null ? { _meta: value._meta } : {};
}

/** The ids a session's chunks get when the session layer gave none: one per message of a turn (./client-port-v2.ts). */
export interface MessageIds {
  /** the agent's message of the current turn */
  agent(): string;
  /** the agent's thought of the current turn */
  thought(): string;
  /** the user's message being replayed */
  user(): string;
}

export function toolCallContentV2(content: v1.ToolCallContent): v2.ToolCallContent | undefined {
  switch (content.type) {
    case "content":
      return { type: "content", content: content.content as v2.ContentBlock, ...meta(content) };
    case "diff": {
      // v2 describes a diff by its changed paths (and an optional git patch, which we do not build)
      const change: v2.DiffChange =
        content.oldText === null || content.oldText === undefined
          ? { operation: "add", path: content.path }
          : { operation: "modify", path: content.path };
      return { type: "diff", changes: [change], ...meta(content) };
    }
    case "terminal":
      return { type: "terminal", terminalId: content.terminalId, ...meta(content) };
    default:
      return undefined;
  }
}

/** A v1 tool call (create) or tool call update (patch) as the v2 upsert's fields. */
export function toolCallV2(call: v1.ToolCallUpdate | v1.ToolCall): v2.ToolCallUpdate {
  const out: v2.ToolCallUpdate = { toolCallId: call.toolCallId };
  if (call.title !== undefined && call.title !== null) out.title = call.title;
  if (call.kind !== undefined && call.kind !== null) out.kind = call.kind;
  if (call.status !== undefined && call.status !== null) out.status = call.status;
  if (call.content !== undefined && call.content !== null)
    out.content = call.content.map(toolCallContentV2).filter((c): c is v2.ToolCallContent => c !== undefined);
  if (call.locations !== undefined && call.locations !== null)
    out.locations = call.locations.map((l) => ({
      path: l.path,
      ...(l.line !== undefined && l.line !== null ? { line: l.line } : {}),
      ...meta(l),
    }));
  if (call.rawInput !== undefined) out.rawInput = call.rawInput;
  if (call.rawOutput !== undefined) out.rawOutput = call.rawOutput;
  return { ...out, ...meta(call) };
}

export function configOptionsV2(options: readonly v1.SessionConfigOption[]): v2.SessionConfigOption[] {
  return options.map((option): v2.SessionConfigOption => {
    const common = {
      configId: option.id,
      name: option.name,
      ...(option.description !== undefined && option.description !== null ? { description: option.description } : {}),
      ...(option.category !== undefined && option.category !== null ? { category: option.category } : {}),
      ...meta(option),
    };
    if (option.type === "boolean") return { ...common, type: "boolean", currentValue: option.currentValue };
    const options = option.options.map((o) =>
      "group" in o ? { groupId: o.group, name: o.name, options: o.options.map(selectOptionV2), ...meta(o) } : selectOptionV2(o),
    ) as v2.SessionConfigSelectOptions;
    return { ...common, type: "select", currentValue: option.currentValue, options };
  });
}

function selectOptionV2(o: v1.SessionConfigSelectOption): v2.SessionConfigSelectOption {
  return {
    value: o.value,
    name: o.name,
    ...(o.description !== undefined && o.description !== null ? { description: o.description } : {}),
    ...meta(o),
  };
}

export function commandsV2(commands: readonly v1.AvailableCommand[]): v2.AvailableCommand[] {
  return commands.map((c) => ({
    type: "command",
    name: c.name,
    description: c.description,
    ...(c.input ? { input: { type: "text", hint: c.input.hint } } : {}),
    ...meta(c),
  }));
}

/** The plan of a session: v2 plans are upserts by id, and a session has one plan. */
export const PLAN_ID = "plan";

function chunk(update: v1.ContentChunk): { content: v2.ContentBlock } & Meta {
  return { content: update.content, ...meta(update) };
}

/** One v1 session update as a v2 one, or undefined when v2 has no counterpart. */
export function sessionUpdateV2(update: v1.SessionUpdate, ids: MessageIds): v2.SessionUpdate | undefined {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return { sessionUpdate: "agent_message_chunk", messageId: update.messageId ?? ids.agent(), ...chunk(update) };
    case "agent_thought_chunk":
      // a thought is its own message in v2: never the id of the answer it came with
      return {
        sessionUpdate: "agent_thought_chunk",
        messageId: update.messageId !== undefined && update.messageId !== null ? `${update.messageId}:thought` : ids.thought(),
        ...chunk(update),
      };
    case "user_message_chunk":
      return { sessionUpdate: "user_message_chunk", messageId: update.messageId ?? ids.user(), ...chunk(update) };
    case "tool_call":
    case "tool_call_update":
      return { sessionUpdate: "tool_call_update", ...toolCallV2(update) };
    case "plan":
      return {
        sessionUpdate: "plan_update",
        plan: {
          type: "items",
          planId: PLAN_ID,
          entries: update.entries.map((e) => ({ content: e.content, priority: e.priority, status: e.status })),
        },
        ...meta(update),
      };
    case "available_commands_update":
      return { sessionUpdate: "available_commands_update", availableCommands: commandsV2(update.availableCommands), ...meta(update) };
    case "config_option_update":
      return { sessionUpdate: "config_option_update", configOptions: configOptionsV2(update.configOptions), ...meta(update) };
    case "session_info_update":
      return {
        sessionUpdate: "session_info_update",
        ...(update.title !== undefined ? { title: update.title } : {}),
        ...(update.updatedAt !== undefined ? { updatedAt: update.updatedAt } : {}),
        ...meta(update),
      };
    case "usage_update":
      return {
        sessionUpdate: "usage_update",
        used: update.used,
        size: update.size,
        ...(update.cost ? { cost: { amount: update.cost.amount, currency: update.cost.currency } } : {}),
        ...meta(update),
      };
    case "notice":
      return {
        sessionUpdate: "notice",
        severity: update.severity,
        title: update.title,
        ...(update.description !== undefined && update.description !== null ? { description: update.description } : {}),
        ...meta(update),
      };
    default:
      // current_mode_update (no modes in v2) and anything newer
      return undefined;
  }
}

/** The v1 request as the v2 `session/request_permission`: the question is about its tool call. */
export function permissionRequestV2(params: v1.RequestPermissionRequest): v2.RequestPermissionRequest {
  const toolCall = toolCallV2(params.toolCall);
  return {
    sessionId: params.sessionId,
    title: params.toolCall.title ?? "Permission requested",
    subject: { type: "tool_call", toolCall },
    options: params.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind, ...meta(o) })),
    ...meta(params),
  };
}

/** The client's v2 answer as v1's; anything but a selected option is `cancelled` (never an allow by default). */
export function permissionResponseV1(response: v2.RequestPermissionResponse): v1.RequestPermissionResponse {
  const outcome = response.outcome as { outcome: string; optionId?: unknown };
  if (outcome.outcome === "selected" && typeof outcome.optionId === "string")
    return { outcome: { outcome: "selected", optionId: outcome.optionId } };
  return { outcome: { outcome: "cancelled" } };
}

/** A v2 MCP server as v1's (the session service takes v1's); an unknown transport is refused. */
export function mcpServersV1(servers: readonly v2.McpServer[] | undefined): v1.McpServer[] {
  return (servers ?? []).map((server): v1.McpServer => {
    const s = server as { type: string; name?: unknown };
    if (s.type === "stdio") {
      const stdio = server as v2.McpServerStdio & { type: "stdio" };
      return { name: stdio.name, command: stdio.command, args: stdio.args ?? [], env: stdio.env ?? [] };
    }
    if (s.type === "http") {
      const http = server as v2.McpServerHttp & { type: "http" };
      return { type: "http", name: http.name, url: http.url, headers: http.headers ?? [] };
    }
    throw new BridgeError(
      "INVALID_PARAMS",
      `MCP server "${String(s.name)}" uses the transport "${s.type}", which zcode-acp does not support over ACP v2; use "stdio" or "http".`,
    );
  });
}
