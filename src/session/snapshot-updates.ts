/**
 * ACP updates derived from a session snapshot (docs/zcode-host.md §7.5): todos → `plan`,
 * slash commands → `available_commands_update`, context usage → `usage_update`,
 * title → `session_info_update`.
 */
import type { AvailableCommand, PlanEntry, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionSnapshot, TaskTokenUsage } from "../protocol/native-types.js";

export function planUpdate(snapshot: SessionSnapshot): SessionUpdate | undefined {
  if (!snapshot.todos) return undefined;
  const entries: PlanEntry[] = snapshot.todos.map((todo) => ({
    content: todo.content,
    status: todo.status,
    priority: todo.priority ?? "medium",
  }));
  return { sessionUpdate: "plan", entries };
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

/**
 * `usage_update` from the snapshot's context usage (falling back to the projection), with the
 * session's token totals from `getTaskTokenUsage` under `_meta.zcode` (never as stable fields).
 */
export function usageUpdate(snapshot: SessionSnapshot, tokens?: TaskTokenUsage): SessionUpdate | undefined {
  const context = snapshot.runtime?.contextUsage;
  const used = int(context?.used) ?? int(snapshot.projection?.contextUsed);
  const size = int(context?.size) ?? int(snapshot.projection?.contextWindow);
  if (used === undefined || size === undefined) return undefined;
  const update: SessionUpdate = { sessionUpdate: "usage_update", used, size };
  const cost = context?.cost;
  if (cost && Number.isFinite(cost.amount)) update.cost = { amount: cost.amount, currency: cost.currency };
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
    if (Object.keys(counts).length > 0) update._meta = { zcode: { tokenUsage: counts } };
  }
  return update;
}
