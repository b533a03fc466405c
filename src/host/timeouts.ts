/**
 * THE timeout table of the host client: every per-operation timeout and every lifecycle budget,
 * in milliseconds, in one place. Native calls are keyed by the native API's operation (the same
 * key on every release line), plus the lifecycle keys below. `HostConnection` accepts partial overrides (tests use tiny values).
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
  // native API operations (src/native/), whatever the method each line calls for them
  initialize: 60_000,
  /** the provider / model catalogue read by the sign-in check */
  signInState: 30_000,
  workspacePresentation: 30_000,
  createSession: 120_000,
  resumeSession: 120_000,
  listSessions: 30_000,
  readSession: 60_000,
  /** an acknowledgement only; the turn arrives as events (browser requests are answered at once) */
  sendPrompt: 60_000,
  closeSession: 30_000,
  setModel: 30_000,
  setThoughtLevel: 30_000,
  setMode: 30_000,
  tokenUsage: 15_000,
  cancel: 15_000,
  answerPermission: 15_000,
  answerQuestion: 15_000,
  answerProviderHeaders: 15_000,
} satisfies Record<string, number>);

export type TimeoutTable = Readonly<Record<string, number>>;
export type TimeoutKey = keyof typeof DEFAULT_TIMEOUTS_MS;
export type OperationTimeout = Exclude<TimeoutKey, "startup" | "dispose" | "stopGrace" | "killGrace" | "subscribe" | "unsubscribe" | "default">;

export function isTimeoutKey(key: string): key is TimeoutKey {
  return Object.prototype.hasOwnProperty.call(DEFAULT_TIMEOUTS_MS, key);
}

/** The defaults with `overrides` applied; every value must be a positive finite number. */
export function buildTimeoutTable(overrides: Partial<Record<string, number>> = {}): TimeoutTable {
  const table: Record<string, number> = { ...DEFAULT_TIMEOUTS_MS };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!isTimeoutKey(key)) {
      throw new BridgeError("USAGE", `unknown timeout "${key}" (known: ${Object.keys(DEFAULT_TIMEOUTS_MS).join(", ")})`);
    }
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
