/**
 * `session/load` history replay (docs/acp.md §6): snapshot messages → user / agent / thought chunks
 * and tool calls with their final status; for a client that asked for them, compaction parts →
 * `compaction_update` and the Markdown plan of an approved ExitPlanMode call → `plan_update`.
 * Other part types without an ACP equivalent are skipped (docs/zcode-host.md §7.2). The history
 * arrives in pieces (SessionEngine.replay); each text, tool input and tool output is bounded
 * (bounded-content.ts, docs/history.md). For a client with `clientCapabilities.subagents`, a
 * subagent's work replays as a child session, as live (HistoryReplay, docs/acp.md §2.12).
 */
import type { SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { SnapshotMessage, SnapshotPart } from "../protocol/native-types.js";
import type { Logger } from "../log/logger.js";
import { resultText, textContent, toolDiffs, toolKind, toolLocations, toolTitle } from "./tool-presentation.js";
import { boundStrings, boundText } from "./bounded-content.js";
import { markdownPlanUpdate } from "./snapshot-updates.js";
import { compactionUpdate, type ClientSurface } from "./stream-translator.js";
import { Subagents, type ParentEnd, type SubagentOrigin } from "./subagents.js";

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

/** one replayed update: on the loaded session, or under `target` (a subagent's child session) */
export interface Replayed {
  update: SessionUpdate;
  target?: string;
}

/** parent tool calls remembered to title the children they started (announcement) */
const PARENT_TOOLS_KEPT = 256;

/** the subagent a replayed tool part belongs to (GUESS, docs/history.md: `metadata` as the live event's origin) */
function partOrigin(part: SnapshotPart): SubagentOrigin | undefined {
  const meta = rec((part as { metadata?: unknown }).metadata);
  const childSessionId = str(meta.childSessionId);
  if (meta.source !== "subagent" || !childSessionId) return undefined;
  const parentToolCallId = str(meta.parentToolCallId);
  const agentType = str(meta.agentType);
  return { childSessionId, parentToolCallId: parentToolCallId || undefined, agentType: agentType || undefined };
}

/** how a parent tool part's final state ends the child it started */
function partEnd(part: SnapshotPart): ParentEnd | undefined {
  const state = rec(part.state);
  if (state.status === "completed") {
    const output = boundStrings(state.output);
    const text = resultText(output) ?? resultText({ content: output });
    return { stopReason: "end_turn", reason: undefined, summary: text ? boundText(text) : undefined };
  }
  if (state.status !== "error") return undefined;
  const error = str(state.error) ?? str(rec(state.error).message);
  // the V4 history says "cancelled" for a cancelled row (src/native/v4-read/history.ts)
  return {
    stopReason: error === "cancelled" ? "cancelled" : "error",
    reason: error ? boundText(error) : "The subagent failed.",
    summary: undefined,
  };
}

/**
 * One `session/load` replay, fed piece by piece (the history arrives in pieces). For a client
 * with `clientCapabilities.subagents` a subagent's tool parts go out as live ones do
 * (./subagents.ts, the same tracker in replay mode): the child announced with `subagent_update`
 * on the parent, its tools under its own session id, then its summary and its end; a child
 * beyond the bound of tracked children stays flattened. Without the capability: as before.
 */
export class HistoryReplay {
  private out: Replayed[] = [];
  private readonly subagents: Subagents | undefined;
  private readonly parentTools = new Map<string, Partial<ToolCallUpdate>>();

  constructor(
    private readonly cwd: string,
    private readonly logger: Logger,
    private readonly surface: ClientSurface = NO_SURFACE,
    subagentsOf?: string,
  ) {
    if (subagentsOf !== undefined) {
      this.subagents = new Subagents(
        {
          parentSessionId: subagentsOf,
          cwd,
          logger: logger.child("subagents"),
          post: (update, target) => this.out.push(target === undefined ? { update } : { update, target }),
          describeParentTool: (toolCallId) => this.parentTools.get(toolCallId),
        },
        true,
      );
    }
  }

  /** the updates of one piece of the history, in order */
  piece(messages: readonly SnapshotMessage[]): Replayed[] {
    for (const message of messages) this.message(message);
    return this.take();
  }

  /** the end of the history: children still open end with it */
  finish(): Replayed[] {
    this.subagents?.endAll("end_turn");
    return this.take();
  }

  private take(): Replayed[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private push(update: SessionUpdate): void {
    this.out.push({ update });
  }

  private message(message: SnapshotMessage): void {
    // a message only the model sees (the summary a compaction leaves, a reminder): ZCode does not show it
    if (modelOnly(message.info)) return;
    const role = message.info.role;
    const messageId = message.info.messageId;
    const withId = <T extends SessionUpdate>(u: T): T => (messageId ? { ...u, messageId } : u);
    // a user message starts a new turn: the children of the last one ended with it
    if (role === "user") this.subagents?.endAll("end_turn");
    for (const part of message.parts) {
      // the parent's own words: children whose Agent call had ended are done (their work came before)
      if (part.type !== "tool") this.subagents?.settle();
      switch (part.type) {
        case "text": {
          const text = boundText(str(part.text) ?? "");
          if (!text) break;
          const sessionUpdate = role === "user" ? "user_message_chunk" : "agent_message_chunk";
          this.push(withId({ sessionUpdate, content: { type: "text", text } }));
          break;
        }
        case "reasoning": {
          const text = boundText(str(part.text) ?? "");
          if (text && role !== "user") this.push(withId({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text } }));
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
          this.push(withId({ sessionUpdate: role === "user" ? "user_message_chunk" : "agent_message_chunk", content: link }));
          break;
        }
        case "tool":
          this.tool(part);
          break;
        case "compaction":
        case "timeline": {
          if (!this.surface.compaction) break;
          try {
            const update = compactionUpdate(part);
            if (update) this.push(update);
          } catch {
            this.logger.warn("replay: compaction part without an id skipped");
          }
          break;
        }
        default:
          // step-start, step-finish, snapshot, patch, … have no ACP equivalent
          break;
      }
    }
  }

  private tool(part: SnapshotPart): void {
    const update = toolPart(part, this.cwd, this.logger);
    if (!update) return;
    const toolCallId = (update as { toolCallId: string }).toolCallId;
    const subagents = this.subagents;
    const origin = subagents ? partOrigin(part) : undefined;
    if (subagents && origin) {
      if (subagents.replayTool(origin, update)) return;
      // the bound of tracked children: the ones whose Agent call ended make room, then once more
      subagents.settle();
      if (subagents.replayTool(origin, update)) return;
    }
    this.push(update);
    const plan = this.surface.planOps ? markdownPlan(part, toolCallId) : undefined;
    if (plan) this.push(plan);
    if (!subagents || origin) return;
    const described = update as Partial<ToolCallUpdate>;
    this.parentTools.set(toolCallId, { title: described.title, rawInput: described.rawInput });
    if (this.parentTools.size > PARENT_TOOLS_KEPT) this.parentTools.delete(this.parentTools.keys().next().value!);
    const end = partEnd(part);
    if (end) subagents.parentEnded(toolCallId, end);
  }
}

/**
 * A message ZCode keeps for the model only (zcode-protocol-legacy-types: user message
 * `visibility: "model-only"`, or `semantics.uiVisibility` other than `visible`, e.g. the
 * `compact_summary` a compaction leaves): not shown to the user, so not replayed.
 */
export function modelOnly(info: Record<string, unknown>): boolean {
  if (info.visibility === "model-only") return true;
  const semantics = info.semantics;
  if (typeof semantics !== "object" || semantics === null) return false;
  const ui = (semantics as Record<string, unknown>).uiVisibility;
  return ui === "hidden" || ui === "debug";
}

/** The replay of messages to a client without subagents (one piece; tests). */
export function replayMessages(
  messages: readonly SnapshotMessage[],
  cwd: string,
  logger: Logger,
  surface: ClientSurface = NO_SURFACE,
): SessionUpdate[] {
  return new HistoryReplay(cwd, logger, surface).piece(messages).map((r) => r.update);
}
