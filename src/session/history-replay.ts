/**
 * `session/load` history replay (docs/acp.md §6): snapshot messages → user / agent / thought chunks
 * and tool calls with their final status; for a client that asked for them, compaction parts →
 * `compaction_update` and the Markdown plan of an approved ExitPlanMode call → `plan_update`.
 * Other part types without an ACP equivalent are skipped (docs/zcode-host.md §7.2). The history
 * arrives in pieces (SessionEngine.replay); each text, tool input and tool output is bounded
 * (bounded-content.ts, docs/history.md).
 */
import type { SessionUpdate, ToolCallContent, ToolCallStatus } from "@agentclientprotocol/sdk";
import type { SnapshotMessage, SnapshotPart } from "../protocol/native-types.js";
import type { Logger } from "../log/logger.js";
import { resultText, textContent, toolDiffs, toolKind, toolLocations, toolTitle } from "./tool-presentation.js";
import { boundStrings, boundText } from "./bounded-content.js";
import { markdownPlanUpdate } from "./snapshot-updates.js";
import { compactionUpdate, type ClientSurface } from "./stream-translator.js";

const NO_SURFACE: ClientSurface = { compaction: false, planOps: false };

/** the Markdown plan of an ExitPlanMode part ZCode kept (a rejected plan is dropped: not replayed) */
function markdownPlan(part: SnapshotPart, toolCallId: string): SessionUpdate | undefined {
  if (typeof part.tool !== "string" || part.tool.toLowerCase() !== "exitplanmode") return undefined;
  const state = rec(part.state);
  if (state.status === "error") return undefined;
  const plan = rec(state.input).plan;
  return typeof plan === "string" && plan.trim() !== "" ? markdownPlanUpdate(toolCallId, boundText(plan)) : undefined;
}

const STATUS_BY_NATIVE: Record<string, ToolCallStatus> = {
  pending: "pending",
  running: "in_progress",
  completed: "completed",
  error: "failed",
};

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function rec(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function toolPart(part: SnapshotPart, cwd: string, logger: Logger): SessionUpdate | undefined {
  const toolCallId = str(part.callId) ?? str(part.id);
  const toolName = str(part.tool);
  if (!toolCallId) {
    logger.warn("replay: tool part without a call id skipped");
    return undefined;
  }
  const state = rec(part.state);
  const input = boundStrings(state.input);
  const kind = toolKind(toolName);
  const update: SessionUpdate = {
    sessionUpdate: "tool_call",
    toolCallId,
    title: toolTitle(toolName, input, cwd),
    kind,
  };
  const nativeStatus = str(state.status);
  const status = nativeStatus ? STATUS_BY_NATIVE[nativeStatus] : undefined;
  if (status) update.status = status;
  else logger.warn("replay: tool part with an unknown status shown without a status", { toolCallId, status: nativeStatus });
  if (input !== undefined) {
    update.rawInput = input;
    const locations = toolLocations(toolName, input, cwd);
    if (locations) update.locations = locations;
  }
  const content: ToolCallContent[] = input !== undefined ? toolDiffs(toolName, input, cwd) : [];
  if (status === "failed") {
    const error = str(state.error) ?? str(rec(state.error).message);
    if (error) content.push(textContent(boundText(error)));
    if (state.error !== undefined) update.rawOutput = boundStrings(state.error);
  } else if (state.output !== undefined) {
    const output = boundStrings(state.output);
    const text = resultText(output) ?? resultText({ content: output });
    if (text) content.push(textContent(boundText(text), kind));
    update.rawOutput = output;
  }
  if (content.length > 0) update.content = content;
  return update;
}

export function replayMessages(
  messages: readonly SnapshotMessage[],
  cwd: string,
  logger: Logger,
  surface: ClientSurface = NO_SURFACE,
): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    const role = message.info.role;
    const messageId = message.info.messageId;
    const withId = <T extends SessionUpdate>(u: T): T => (messageId ? { ...u, messageId } : u);
    for (const part of message.parts) {
      switch (part.type) {
        case "text": {
          const text = boundText(str(part.text) ?? "");
          if (!text) break;
          const sessionUpdate = role === "user" ? "user_message_chunk" : "agent_message_chunk";
          updates.push(withId({ sessionUpdate, content: { type: "text", text } }));
          break;
        }
        case "reasoning": {
          const text = boundText(str(part.text) ?? "");
          if (text && role !== "user") updates.push(withId({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text } }));
          break;
        }
        case "file": {
          const uri = str(part.url);
          // an inlined image the bootstrap left out ("data:,") is not replayed
          if (!uri || uri === "data:," || uri.length > 64 * 1024) break;
          const link = {
            type: "resource_link" as const,
            uri,
            name: str(part.filename) ?? uri,
            ...(str(part.mime) ? { mimeType: str(part.mime) } : {}),
          };
          updates.push(withId({ sessionUpdate: role === "user" ? "user_message_chunk" : "agent_message_chunk", content: link }));
          break;
        }
        case "tool": {
          const update = toolPart(part, cwd, logger);
          if (update) updates.push(update);
          const plan = update && surface.planOps ? markdownPlan(part, (update as { toolCallId: string }).toolCallId) : undefined;
          if (plan) updates.push(plan);
          break;
        }
        case "compaction": {
          if (!surface.compaction) break;
          try {
            updates.push(compactionUpdate(part));
          } catch {
            logger.warn("replay: compaction part without an id skipped");
          }
          break;
        }
        default:
          // step-start, step-finish, snapshot, patch, … have no ACP equivalent
          break;
      }
    }
  }
  return updates;
}
