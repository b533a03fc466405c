/**
 * ACP updates derived from a session snapshot (docs/zcode-host.md §7.5): todos → `plan` (or, for a
 * client with the `plan` capability, the plan operations: `plan_update` items / `plan_removed`),
 * slash commands → `available_commands_update`, context usage → `usage_update`,
 * title → `session_info_update`. Also the plan operations of ZCode's Markdown plans (the plan of
 * an ExitPlanMode call, docs/acp.md §2.11).
 */
import type { AvailableCommand, PlanEntry, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionSnapshot, TaskTokenUsage } from "../protocol/native-types.js";

/**
 * The plan of the to-do list has one id per session: ZCode keeps one list. Plan operations are
 * unstable in SDK 2.4.0 (its stable `SessionUpdate` type lacks them); they go out only to a client
 * that advertised `clientCapabilities.plan`, through the same notification.
 */
export const TODO_PLAN_ID = "zcode-todos";

/** The id of a Markdown plan: the ExitPlanMode call that carries it (stable across live and replay). */
export function markdownPlanId(toolCallId: string): string {
  return `zcode-plan-${toolCallId}`;
}

/** `plan_update` of a Markdown plan (unstable: typed here as the stable union, which it is not). */
export function markdownPlanUpdate(toolCallId: string, markdown: string): SessionUpdate {
  return {
    sessionUpdate: "plan_update",
    plan: { type: "markdown", planId: markdownPlanId(toolCallId), content: markdown },
  } as unknown as SessionUpdate;
}

export function planRemoved(planId: string): SessionUpdate {
  return { sessionUpdate: "plan_removed", planId } as unknown as SessionUpdate;
}

function todoEntries(snapshot: SessionSnapshot): PlanEntry[] | undefined {
  return snapshot.todos?.map((todo) => ({
    content: todo.content,
    status: todo.status,
    priority: todo.priority ?? "medium",
  }));
}

/**
 * The to-do list: `plan` entries (an empty list clears the plan), or with plan operations a
 * `plan_update` of type items, and `plan_removed` once the list is empty.
 */
export function planUpdate(snapshot: SessionSnapshot, planOps = false): SessionUpdate | undefined {
  const entries = todoEntries(snapshot);
  if (!entries) return undefined;
  if (!planOps) return { sessionUpdate: "plan", entries };
  if (entries.length === 0) return planRemoved(TODO_PLAN_ID);
  return { sessionUpdate: "plan_update", plan: { type: "items", planId: TODO_PLAN_ID, entries } } as unknown as SessionUpdate;
}

/** an update that only says "no plan" (not worth sending at the end of a replay) */
export function clearsPlan(update: SessionUpdate): boolean {
  const kind = update.sessionUpdate as string;
  return (kind === "plan" && (update as { entries: unknown[] }).entries.length === 0) || kind === "plan_removed";
}

export function commandsUpdate(snapshot: SessionSnapshot): SessionUpdate | undefined {
  if (!snapshot.slashCommands) return undefined;
  const availableCommands: AvailableCommand[] = snapshot.slashCommands.map((command) => {
    const entry: AvailableCommand = { name: command.name, description: command.description ?? command.name };
    if (command.inputHint) entry.input = { hint: command.inputHint };
    return entry;
  });
  return { sessionUpdate: "available_commands_update", availableCommands };
}

export function titleUpdate(snapshot: SessionSnapshot): SessionUpdate | undefined {
  const title = snapshot.session.title;
  if (typeof title !== "string" || title === "") return undefined;
  const update: SessionUpdate = { sessionUpdate: "session_info_update", title };
  if (typeof snapshot.session.updatedAt === "number") update.updatedAt = new Date(snapshot.session.updatedAt).toISOString();
  return update;
}

function int(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
}

/** at most this many breakdown sources are passed on (ZCode names 7) */
const BREAKDOWN_SOURCES = 16;

/**
 * ZCode's context breakdown (`contextUsage.breakdown`, V4 `usage.contextWindow.breakdown`):
 * `[{source, chars}]`, sizes in CHARACTERS per source (system_prompt, meta_user_context, skills,
 * tool_prompt, system_tool_schemas, mcp_tool_schemas, messages), not tokens. Decoration: a
 * malformed entry is left out, never a failure.
 */
export function contextBreakdown(value: unknown): Array<{ source: string; chars: number }> | undefined {
  if (!Array.isArray(value)) return undefined;
  const out: Array<{ source: string; chars: number }> = [];
  for (const item of value.slice(0, BREAKDOWN_SOURCES)) {
    if (typeof item !== "object" || item === null) continue;
    const { source, chars } = item as Record<string, unknown>;
    if (typeof source !== "string" || source === "" || typeof chars !== "number" || !Number.isSafeInteger(chars) || chars < 0) continue;
    out.push({ source: source.slice(0, 64), chars });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * `usage_update` from the snapshot's context usage (falling back to the projection), with the
 * session's token totals from `getTaskTokenUsage` under `_meta.zcode` (never as stable fields),
 * and ZCode's context breakdown, in characters, as `_meta.zcode.contextBreakdownChars`.
 */
export function usageUpdate(snapshot: SessionSnapshot, tokens?: TaskTokenUsage): SessionUpdate | undefined {
  const context = snapshot.runtime?.contextUsage;
  const used = int(context?.used) ?? int(snapshot.projection?.contextUsed);
  const size = int(context?.size) ?? int(snapshot.projection?.contextWindow);
  if (used === undefined || size === undefined) return undefined;
  const update: SessionUpdate = { sessionUpdate: "usage_update", used, size };
  const cost = context?.cost;
  if (cost && Number.isFinite(cost.amount)) update.cost = { amount: cost.amount, currency: cost.currency };
  const breakdown = contextBreakdown((context as Record<string, unknown> | null | undefined)?.breakdown);
  if (breakdown) update._meta = { zcode: { contextBreakdownChars: breakdown } };
  if (tokens) {
    const counts: Record<string, number> = {};
    for (const key of [
      "totalTokens",
      "inputTokens",
      "outputTokens",
      "reasoningTokens",
      "cacheCreationTokens",
      "cacheReadTokens",
    ] as const) {
      const value = int(tokens[key]);
      if (value !== undefined) counts[key] = value;
    }
    if (Object.keys(counts).length > 0) {
      const zcode = (update._meta?.zcode as Record<string, unknown> | undefined) ?? {};
      update._meta = { ...update._meta, zcode: { ...zcode, tokenUsage: counts } };
    }
  }
  return update;
}
