/**
 * THE timeout table of the host client: every per-method timeout and every lifecycle budget,
 * in milliseconds, in one place. Keys are `<service>.<method>` for native calls, plus the
 * lifecycle keys below. `HostConnection` accepts partial overrides (tests use tiny values).
 */
import { BridgeError } from "../util/errors.js";

export const DEFAULT_TIMEOUTS_MS = Object.freeze({
  // lifecycle
  /** launch → `ready` (database migrations on a fresh data directory take a while) */
  startup: 90_000,
  /** the bootstrap's wait for the worker after `dispose` (official main waits 3.5 s) */
  dispose: 3_500,
  /** the bridge's wait for the process after closing the channel, before SIGTERM */
  stopGrace: 5_000,
  /** after SIGTERM, before SIGKILL */
  killGrace: 2_000,
  // channel requests that are not native calls
  subscribe: 30_000,
  unsubscribe: 10_000,
  /** any native call not listed below */
  default: 30_000,
  // zcode-agent
  "agent.initialize": 60_000,
  "agent.readWorkspaceState": 30_000,
  "agent.createSession": 120_000,
  "agent.resumeSession": 120_000,
  "agent.listSessions": 30_000,
  "agent.readSession": 60_000,
  "agent.readSessionMessages": 60_000,
  "agent.readSessionEvents": 60_000,
  /** an acknowledgement only; the turn arrives as events (browser requests are answered at once) */
  "agent.sendPrompt": 60_000,
  "agent.closeSession": 30_000,
  "agent.setModel": 30_000,
  "agent.setThoughtLevel": 30_000,
  "agent.setMode": 30_000,
  "agent.getTaskTokenUsage": 15_000,
  "agent.respondProviderRuntimeHeaders": 15_000,
  "agent.disposeWorkspace": 30_000,
  // zcode-task
  "task.stopGeneration": 15_000,
  "task.respondPermission": 15_000,
  "task.respondElicitation": 15_000,
} satisfies Record<string, number>);

export type TimeoutTable = Readonly<Record<string, number>>;

/** The defaults with `overrides` applied; every value must be a positive finite number. */
export function buildTimeoutTable(overrides: Partial<Record<string, number>> = {}): TimeoutTable {
  const table: Record<string, number> = { ...DEFAULT_TIMEOUTS_MS };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new BridgeError("USAGE", `invalid timeout for ${key}: ${String(value)} (a positive number of milliseconds)`);
    }
    table[key] = value;
  }
  return Object.freeze(table);
}

/** The timeout of `key`, or the table's `default`. */
export function timeoutFor(table: TimeoutTable, key: string): number {
  return table[key] ?? table.default ?? DEFAULT_TIMEOUTS_MS.default;
}
