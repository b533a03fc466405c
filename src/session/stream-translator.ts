/**
 * Translation of the turn-scoped stream events `model.streaming` and `tool.updated`
 * (docs/zcode-host.md §5.5, §5.6) into ACP updates: text and reasoning deltas → message and thought
 * chunks with message ids; tool events → the tool-call lifecycle. The router hands over payloads
 * already validated against the event table (src/protocol/event-table.ts).
 */
import type { SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { ModelStreamingPayload, ToolUpdatedPayload } from "../protocol/native-types.js";
import { ToolCallTracker } from "./tool-call-tracker.js";

export class StreamTranslator {
  private readonly tools: ToolCallTracker;

  constructor(
    cwd: string,
    private readonly logger: Logger,
  ) {
    this.tools = new ToolCallTracker(cwd);
  }

  describeToolCall(toolCallId: string): Partial<ToolCallUpdate> | undefined {
    return this.tools.describe(toolCallId);
  }

  /** final `failed` updates for the tool calls still open when the turn ended early */
  closeOpenTools(reason: string): SessionUpdate[] {
    return this.tools.closeOpen(reason);
  }

  toolUpdated(payload: ToolUpdatedPayload): SessionUpdate[] {
    return this.tools.toolUpdated(payload);
  }

  modelStreaming(payload: ModelStreamingPayload): SessionUpdate[] {
    const messageId = payload.assistantMessageId;
    switch (payload.kind) {
      case "text_delta":
      case "reasoning_delta": {
        if (!payload.delta) return [];
        const sessionUpdate = payload.kind === "text_delta" ? "agent_message_chunk" : "agent_thought_chunk";
        const content = { type: "text" as const, text: payload.delta };
        return [messageId ? { sessionUpdate, content, messageId } : { sessionUpdate, content }];
      }
      case "tool_input_start":
        return this.tools.inputStart(payload.toolCallId!, payload.toolName);
      case "tool_input_delta":
        return this.tools.inputDelta(payload.toolCallId!, payload.delta!);
      case "tool_input_end":
        return this.tools.inputEnd(payload.toolCallId!);
      case "tool_call":
        return this.tools.call(payload.toolCallId!, payload.toolName!, payload.input);
      case "error":
        // the turn's terminal event (turn.failed) carries the error for the prompt
        this.logger.warn("model stream reported an error", { assistantMessageId: messageId });
        return [];
      case "start":
      case "finish":
      case "text_start":
      case "text_end":
      case "reasoning_start":
      case "reasoning_end":
        return [];
    }
  }
}
