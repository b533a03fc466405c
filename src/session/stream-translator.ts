/**
 * Translation of the turn-scoped stream events `model.streaming` and `tool.updated`
 * (docs/zcode-host.md §5.5, §5.6) into ACP updates: text and reasoning deltas → message and thought
 * chunks with message ids; tool events → the tool-call lifecycle. The router hands over payloads
 * already validated against the event table (src/protocol/event-table.ts).
 */
import type { ClientCapabilities, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { ModelStreamingPayload, ToolUpdatedPayload } from "../protocol/native-types.js";
import { CompactionTracker, isCompactionPart } from "./compaction.js";
import { markdownPlanId, planRemoved } from "./snapshot-updates.js";
import { ToolCallTracker } from "./tool-call-tracker.js";

/**
 * The optional updates a client asked for in `initialize` (docs/acp.md §2.11): `compaction_*` with
 * `session.compaction`, plan operations (`plan_update` / `plan_removed`) with the unstable `plan`
 * capability (read from the raw initialize params, src/acp/initialize.ts). `{}` advertises a
 * capability; omitted or null does not.
 */
export interface ClientSurface {
  compaction: boolean;
  planOps: boolean;
}

const advertised = (value: unknown): boolean => typeof value === "object" && value !== null;

export function clientSurface(capabilities: ClientCapabilities): ClientSurface {
  const session = capabilities.session as { compaction?: unknown } | null | undefined;
  return {
    compaction: advertised(session?.compaction),
    planOps: advertised((capabilities as { plan?: unknown }).plan),
  };
}

/** a compaction part as its `compaction_update` (src/session/compaction.ts; kept here for the replay's import) */
export { compactionUpdate } from "./compaction.js";

export class StreamTranslator {
  private readonly tools: ToolCallTracker;
  /** the compactions shown running (a noop closes them) */
  private readonly compactions = new CompactionTracker();

  constructor(
    cwd: string,
    private readonly logger: Logger,
  ) {
    this.tools = new ToolCallTracker(cwd);
  }

  /**
   * `part.upserted`: only a compaction part means something to the client (ZCode compacted the
   * context, by itself or on `/compact`: src/session/compaction.ts), and only to one that advertised
   * `session.compaction`; every other part reaches the client through the stream events.
   */
  partUpserted(payload: Record<string, unknown>, surface: ClientSurface): SessionUpdate[] {
    const part = payload.part;
    if (typeof part !== "object" || part === null || Array.isArray(part)) return [];
    const record = part as Record<string, unknown>;
    if (!isCompactionPart(record) || !surface.compaction) return [];
    return this.compactions.updates(record);
  }

  describeToolCall(toolCallId: string): Partial<ToolCallUpdate> | undefined {
    return this.tools.describe(toolCallId);
  }

  /** an interaction showed the client this call first (ToolCallTracker.adopt) */
  adoptToolCall(call: ToolCallUpdate): boolean {
    return this.tools.adopt(call);
  }

  /** final `failed` updates for the tool calls still open when the turn ended early */
  closeOpenTools(reason: string): SessionUpdate[] {
    return this.tools.closeOpen(reason);
  }

  /**
   * A tool's lifecycle; for a client with plan operations, the failure of an ExitPlanMode call
   * (the plan was rejected: ZCode drops it and plans again) removes its Markdown plan.
   */
  toolUpdated(payload: ToolUpdatedPayload, surface?: ClientSurface): SessionUpdate[] {
    const updates = this.tools.toolUpdated(payload);
    const toolCallId = payload.toolCallId;
    if (surface?.planOps && payload.kind === "error" && toolCallId && payload.toolName?.toLowerCase() === "exitplanmode") {
      updates.push(planRemoved(markdownPlanId(toolCallId)));
    }
    return updates;
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
