/**
 * THE timeout table of the host client: every per-operation timeout and every lifecycle budget,
 * in milliseconds, in one place. Native calls are keyed by the native API's operation (the same
 * key on every release line), plus the lifecycle keys below. `HostConnection` accepts partial overrides (tests use tiny values).
 */
import { BridgeError } from "../util/errors.js";

/** an ordinary request to the host (a read, a setting change, a subscription): 30 s, room for a busy host */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** a short request the host answers at once (an interaction answer, a cancel, a token usage read): 15 s */
export const DEFAULT_ACK_TIMEOUT_MS = 15_000;

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
  /**
   * how long prompts of ours may wait in a queue that ZCode holds for its own reasons (a failed
   * turn, a stop or a pause in the desktop) before they are taken out and answered with an error
   * (adr/0038); a session's timer, not a native call
   */
  heldQueue: 300_000,
  // channel requests that are not native calls
  subscribe: DEFAULT_CALL_TIMEOUT_MS,
  /** ending a subscription: local to the host */
  unsubscribe: 10_000,
  /** any native call not listed below */
  default: DEFAULT_CALL_TIMEOUT_MS,
  // native API operations (src/native/), whatever the method each line calls for them
  /** the first call of a workspace: the host loads its providers and project state */
  initialize: 60_000,
  /** the provider / model catalogue read by the sign-in check */
  signInState: DEFAULT_CALL_TIMEOUT_MS,
  workspacePresentation: DEFAULT_CALL_TIMEOUT_MS,
  /** a new or resumed session: the host starts the agent process of the workspace */
  createSession: 120_000,
  resumeSession: 120_000,
  listSessions: DEFAULT_CALL_TIMEOUT_MS,
  /** a session's state (settings, runtime, usage), without its history */
  readSession: 60_000,
  /** a session's whole history, read once by the bootstrap for session/load, and each of its pieces */
  readHistory: 120_000,
  /** an acknowledgement only; the turn arrives as events (browser requests are answered at once) */
  sendPrompt: 60_000,
  closeSession: DEFAULT_CALL_TIMEOUT_MS,
  setModel: DEFAULT_CALL_TIMEOUT_MS,
  setThoughtLevel: DEFAULT_CALL_TIMEOUT_MS,
  setMode: DEFAULT_CALL_TIMEOUT_MS,
  tokenUsage: DEFAULT_ACK_TIMEOUT_MS,
  /** ZCode 3.18+'s context composition at a turn's end: a usage read, so short; the turn does not wait on a failure */
  contextComposition: 5_000,
  cancel: DEFAULT_ACK_TIMEOUT_MS,
  /** stopping one subagent (`stopSubagent`, 3.18+) */
  stopSubagent: DEFAULT_ACK_TIMEOUT_MS,
  /** cancelling one backgrounded subagent (V4 `cancelBackgroundWork`) */
  cancelBackgroundWork: DEFAULT_ACK_TIMEOUT_MS,
  /** one page of a session's subagent directory (`listSessionSubagents`), read for session/load */
  listSessionSubagents: DEFAULT_CALL_TIMEOUT_MS,
  answerPermission: DEFAULT_ACK_TIMEOUT_MS,
  answerQuestion: DEFAULT_ACK_TIMEOUT_MS,
  answerProviderHeaders: DEFAULT_ACK_TIMEOUT_MS,
  // V4 conversation input (src/native/shared/v4-input.ts); the prompt's own ack uses `sendPrompt`, the stop `cancel`
  /** hello + clientHello, once per host incarnation */
  v4Handshake: DEFAULT_CALL_TIMEOUT_MS,
  /** the question "did you get this command?" after an ack was lost */
  queryCommands: DEFAULT_ACK_TIMEOUT_MS,
  /** one step (begin, chunk, commit, abort) of an image upload */
  uploadAttachment: DEFAULT_CALL_TIMEOUT_MS,
  /** removing a queued prompt from ZCode's queue (session/cancel) */
  deleteQueuedInput: DEFAULT_ACK_TIMEOUT_MS,
  /** letting ZCode's held input queue run again (`setAutoDrain`) after a stop */
  releaseHeldQueue: DEFAULT_ACK_TIMEOUT_MS,
  /** deleting a session in ZCode (`zcode-task.deleteTask`), after the bridge closed it */
  deleteSession: DEFAULT_CALL_TIMEOUT_MS,
  /** the ids of the sessions ZCode's delete hid (`zcode-task.listDeletedTaskIds`), read with every list and resume */
  listDeletedSessions: DEFAULT_CALL_TIMEOUT_MS,
  /** forking a session at a message (`forkAssistant`): ZCode copies the history into a new session */
  forkSession: 60_000,
  /** setting a session's title (`renameSession`) */
  renameSession: DEFAULT_CALL_TIMEOUT_MS,
  // V4 conversation reading (src/native/v4-read/)
  /** subscribing to a conversation: for a stored session ZCode performs its cold resume first */
  subscribeConversation: 120_000,
  /** asking for a conversation's recovery frame after a gap */
  resyncConversation: DEFAULT_CALL_TIMEOUT_MS,
  /** ending a conversation subscription in ZCode's agent */
  unsubscribeConversation: 10_000,
} satisfies Record<string, number>);

export type TimeoutTable = Readonly<Record<string, number>>;
export type TimeoutKey = keyof typeof DEFAULT_TIMEOUTS_MS;
export type OperationTimeout = Exclude<
  TimeoutKey,
  "startup" | "dispose" | "stopGrace" | "killGrace" | "heldQueue" | "subscribe" | "unsubscribe" | "default"
>;

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
  return table[key] ?? table.default ?? DEFAULT_CALL_TIMEOUT_MS;
}
