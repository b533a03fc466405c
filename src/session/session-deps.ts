/** What a session needs (shared by the service, the engine and its event router). */
import type { Logger } from "../log/logger.js";
import type { NativeApi } from "../native/native-api.js";
import type { ClientPort } from "./client-port.js";
import type { InteractionBroker } from "./interactions/types.js";

export interface SessionDeps {
  /** the typed native API of the install's release line */
  native: NativeApi;
  client: ClientPort;
  broker: InteractionBroker;
  logger: Logger;
  /** how long a cancelled turn may take to end natively before the prompt resolves anyway */
  cancelGraceMs: number;
  /** how long ZCode may take to confirm a subscription with its first snapshot (default 30 s; the host timeout table's `subscribe`) */
  subscribeConfirmMs?: number;
  /** how long one resynchronisation may take in all (default DEFAULT_RESYNC_TIMEOUT_MS, src/session/session-engine.ts) */
  resyncTimeoutMs?: number;
  /** merge text chunks while the client is behind (off only for the benchmark's baseline) */
  mergeDeltas: boolean;
  /** the ACP layer reports when each prompt's answer was written (SessionEngine.answerWritten): the next turn's updates wait for it */
  answerWrites?: boolean;
  /** how long prompts of ours may wait in a queue ZCode holds for its own reasons (default 5 min; the host timeout table's `heldQueue`, adr/0038) */
  heldQueueMs?: number;
  /** how long a steering request waits for ZCode to say where its text went (default 60 s) */
  steerOutcomeMs?: number;
  /** the workspace used where ACP gives none (session/list without cwd, authenticate): the process's */
  defaultCwd: string;
}
