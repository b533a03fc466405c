/**
 * Tracks the native tool calls of one session and turns their lifecycle
 * (model.streaming tool_input_* / tool_call, tool.updated scheduled → started → progress →
 * result | error) into ACP `tool_call` / `tool_call_update` updates. The first update about a
 * call is always a `tool_call`; later ones send only what changed.
 */
import type { SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind } from "@agentclientprotocol/sdk";
import type { ToolUpdatedPayload } from "../protocol/native-types.js";
import { resultText, textContent, toolDiffs, toolKind, toolLocations, toolTitle } from "./tool-presentation.js";

interface ToolRecord {
  id: string;
  name: string | undefined;
  input: unknown;
  hasInput: boolean;
  inputText: string;
  announced: boolean;
  status: ToolCallStatus;
  kind: ToolKind;
  title: string;
  diffs: ToolCallContent[];
  meta: Record<string, unknown> | undefined;
}

/** Above this size the result text is sent once (in content), not also inside rawOutput. */
const RAW_OUTPUT_TEXT_LIMIT = 64 * 1024;

/** the most of a tool's streamed input (tool_input_delta) kept to parse at its end */
const MAX_STREAMED_INPUT_CHARS = 1024 * 1024;
/** not JSON: an input past that bound is not parsed */
const STREAMED_INPUT_DROPPED = "\u0000dropped";

export class ToolCallTracker {
  private readonly tools = new Map<string, ToolRecord>();

  constructor(private readonly cwd: string) {}

  /** What is known about a call, for permission requests and other interactions. */
  describe(toolCallId: string): Partial<ToolCallUpdate> | undefined {
    const tool = this.tools.get(toolCallId);
    if (!tool) return undefined;
    const description: Partial<ToolCallUpdate> = { toolCallId, title: tool.title, kind: tool.kind, status: tool.status };
    if (tool.hasInput) description.rawInput = tool.input;
    if (tool.diffs.length > 0) description.content = tool.diffs;
    const locations = tool.hasInput ? toolLocations(tool.name, tool.input, this.cwd) : undefined;
    if (locations) description.locations = locations;
    return description;
  }

  /**
   * The turn ended without these calls finishing (an error, a cancel): every call the client has
   * seen that is not completed or failed gets a final `failed` update saying why, so no client
   * keeps showing it as running.
   */
  closeOpen(reason: string): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    for (const tool of this.tools.values()) {
      if (!tool.announced || tool.status === "completed" || tool.status === "failed") continue;
      tool.status = "failed";
      updates.push({ sessionUpdate: "tool_call_update", toolCallId: tool.id, status: "failed", content: [textContent(reason)] });
    }
    return updates;
  }

  /**
   * An interaction (a permission, a question) showed the client this call before any event of the
   * call was read — a subagent's request can overtake its child's tool row, which comes on the
   * child's own conversation. It is recorded as announced, as shown, so the call's own events
   * update it (`tool_call_update`) instead of announcing it a second time. False when it was known.
   */
  adopt(call: ToolCallUpdate): boolean {
    const known = this.tools.get(call.toolCallId);
    if (known?.announced) return false;
    const tool = known ?? this.ensure(call.toolCallId, undefined);
    tool.announced = true;
    tool.status = call.status ?? "pending";
    if (call.title) tool.title = call.title;
    if (call.kind) tool.kind = call.kind;
    if (call.rawInput !== undefined && !tool.hasInput) {
      tool.input = call.rawInput;
      tool.hasInput = true;
    }
    return true;
  }

  inputStart(toolCallId: string, toolName: string | undefined): SessionUpdate[] {
    const tool = this.ensure(toolCallId, toolName);
    tool.inputText = "";
    return this.announce(tool);
  }

  inputDelta(toolCallId: string, delta: string): SessionUpdate[] {
    const tool = this.ensure(toolCallId, undefined);
    // a streamed input is kept only while it is small: a larger one (a Write of many MB) also
    // arrives whole with tool_call / tool.updated scheduled, bounded by the bootstrap
    if (tool.inputText === STREAMED_INPUT_DROPPED) return this.announce(tool);
    if (tool.inputText.length + delta.length <= MAX_STREAMED_INPUT_CHARS) tool.inputText += delta;
    else tool.inputText = STREAMED_INPUT_DROPPED;
    return this.announce(tool);
  }

  inputEnd(toolCallId: string): SessionUpdate[] {
    const tool = this.ensure(toolCallId, undefined);
    const updates = this.announce(tool);
    if (!tool.hasInput && tool.inputText.trim() !== "") {
      try {
        updates.push(...this.setInput(tool, JSON.parse(tool.inputText)));
      } catch {
        // incomplete JSON: the input also arrives with tool_call / tool.updated scheduled
      }
    }
    return updates;
  }

  /** model.streaming tool_call: final name and input. */
  call(toolCallId: string, toolName: string, input: unknown): SessionUpdate[] {
    const tool = this.ensure(toolCallId, toolName);
    const updates = this.rename(tool, toolName);
    if (input !== undefined) updates.push(...this.setInput(tool, input));
    updates.push(...this.announce(tool));
    return updates;
  }

  toolUpdated(payload: ToolUpdatedPayload): SessionUpdate[] {
    if (payload.kind === "batch" || payload.kind === "raw" || !payload.toolCallId) return [];
    const tool = this.ensure(payload.toolCallId, payload.toolName);
    if (payload.source || payload.parentToolCallId || payload.childSessionId) {
      tool.meta = {
        zcode: {
          ...(payload.source ? { source: payload.source } : {}),
          ...(payload.parentToolCallId ? { parentToolCallId: payload.parentToolCallId } : {}),
          ...(payload.childSessionId ? { childSessionId: payload.childSessionId } : {}),
        },
      };
    }
    const updates = payload.toolName ? this.rename(tool, payload.toolName) : [];
    if (payload.kind === "scheduled" && payload.input !== undefined && !payload.inputOmitted) {
      updates.push(...this.setInput(tool, payload.input));
    }
    updates.push(...this.announce(tool));
    switch (payload.kind) {
      case "scheduled":
        return updates;
      case "started":
        return [...updates, ...this.setStatus(tool, "in_progress")];
      case "progress": {
        const text = payload.stdoutTail ?? payload.outputPreview;
        const update: ToolCallUpdate = { toolCallId: tool.id };
        if (tool.status !== "in_progress") {
          tool.status = "in_progress";
          update.status = "in_progress";
        }
        if (text) update.content = [...tool.diffs, textContent(text, tool.kind)];
        return update.status || update.content ? [...updates, { sessionUpdate: "tool_call_update", ...update }] : updates;
      }
      case "result":
        return [...updates, this.finish(tool, "completed", payload.result)];
      case "error":
        return [...updates, this.finish(tool, "failed", payload.error)];
    }
  }

  private ensure(toolCallId: string, toolName: string | undefined): ToolRecord {
    let tool = this.tools.get(toolCallId);
    if (!tool) {
      tool = {
        id: toolCallId,
        name: toolName,
        input: undefined,
        hasInput: false,
        inputText: "",
        announced: false,
        status: "pending",
        kind: toolKind(toolName),
        title: toolTitle(toolName, undefined, this.cwd),
        diffs: [],
        meta: undefined,
      };
      this.tools.set(toolCallId, tool);
    }
    return tool;
  }

  private announce(tool: ToolRecord): SessionUpdate[] {
    if (tool.announced) return [];
    tool.announced = true;
    const update: SessionUpdate = {
      sessionUpdate: "tool_call",
      toolCallId: tool.id,
      title: tool.title,
      kind: tool.kind,
      status: tool.status,
    };
    if (tool.hasInput) {
      update.rawInput = tool.input;
      const locations = toolLocations(tool.name, tool.input, this.cwd);
      if (locations) update.locations = locations;
      if (tool.diffs.length > 0) update.content = tool.diffs;
    }
    if (tool.meta) update._meta = tool.meta;
    return [update];
  }

  private rename(tool: ToolRecord, toolName: string): SessionUpdate[] {
    if (tool.name === toolName) return [];
    tool.name = toolName;
    tool.kind = toolKind(toolName);
    tool.title = toolTitle(toolName, tool.hasInput ? tool.input : undefined, this.cwd);
    if (tool.hasInput) tool.diffs = toolDiffs(toolName, tool.input, this.cwd);
    if (!tool.announced) return [];
    return [{ sessionUpdate: "tool_call_update", toolCallId: tool.id, kind: tool.kind, title: tool.title }];
  }

  private setInput(tool: ToolRecord, input: unknown): SessionUpdate[] {
    if (tool.hasInput && JSON.stringify(tool.input) === JSON.stringify(input)) return [];
    tool.input = input;
    tool.hasInput = true;
    tool.title = toolTitle(tool.name, input, this.cwd);
    tool.diffs = toolDiffs(tool.name, input, this.cwd);
    const update: ToolCallUpdate = { toolCallId: tool.id, title: tool.title, rawInput: input };
    if (!tool.announced) return []; // the coming tool_call carries it
    const locations = toolLocations(tool.name, input, this.cwd);
    if (locations) update.locations = locations;
    if (tool.diffs.length > 0) update.content = tool.diffs;
    return [{ sessionUpdate: "tool_call_update", ...update }];
  }

  private setStatus(tool: ToolRecord, status: ToolCallStatus): SessionUpdate[] {
    if (tool.status === status) return [];
    tool.status = status;
    return [{ sessionUpdate: "tool_call_update", toolCallId: tool.id, status }];
  }

  private finish(tool: ToolRecord, status: "completed" | "failed", output: unknown): SessionUpdate {
    tool.status = status;
    const text = status === "failed" ? errorText(output) : resultText(output);
    const content = [...tool.diffs];
    if (text) content.push(textContent(text, status === "failed" ? "other" : tool.kind));
    let rawOutput = output;
    if (text && text.length > RAW_OUTPUT_TEXT_LIMIT && typeof output === "object" && output !== null) {
      rawOutput = { ...(output as Record<string, unknown>), content: `[${text.length} characters, sent as tool content]` };
    }
    const update: ToolCallUpdate = { toolCallId: tool.id, status, rawOutput };
    if (content.length > 0) update.content = content;
    return { sessionUpdate: "tool_call_update", ...update };
  }
}

function errorText(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  return typeof error === "string" ? error : undefined;
}
