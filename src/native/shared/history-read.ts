/**
 * The paged history read of the zcode-task lines (docs/history.md, adr/0018): the host's full
 * `readSessionMessages` is held in the bootstrap (projection `history-pages`), which answers a
 * handle; the bridge asks for bounded pieces until the last one, and releases the handle if it
 * stops early. Pieces are checked here like the snapshot's `messages` (protocol/event-schemas.ts).
 */
import type { HostClient } from "../../host/types.js";
import type { SnapshotMessage } from "../../protocol/native-types.js";
import { BridgeError } from "../../util/errors.js";

const HISTORY_ID = /^h[0-9]{1,15}$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function malformed(what: string): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode returned a session history that is not as expected (${what}).`);
}

export function parseHistoryHandle(raw: unknown): { historyId: string; total: number } {
  if (!isRecord(raw) || typeof raw.historyId !== "string" || !HISTORY_ID.test(raw.historyId)) throw malformed("no history handle");
  if (typeof raw.total !== "number" || !Number.isSafeInteger(raw.total) || raw.total < 0) throw malformed("no message count");
  return { historyId: raw.historyId, total: raw.total };
}

export function parseHistoryPiece(raw: unknown): { messages: SnapshotMessage[]; done: boolean } {
  if (!isRecord(raw) || !Array.isArray(raw.messages) || typeof raw.done !== "boolean") throw malformed("a piece without messages");
  for (const message of raw.messages) {
    if (!isRecord(message) || !isRecord(message.info) || typeof message.info.role !== "string") throw malformed("a message without a role");
    if (message.info.messageId !== undefined && typeof message.info.messageId !== "string") throw malformed("a message id");
    if (!Array.isArray(message.parts) || !message.parts.every((part) => isRecord(part) && typeof part.type === "string")) {
      throw malformed("a message part without a type");
    }
  }
  return { messages: raw.messages as SnapshotMessage[], done: raw.done };
}

/** The pieces of a held history, oldest first; the handle is released when the caller stops early. */
export async function* historyPieces(host: HostClient, handle: { historyId: string }): AsyncGenerator<SnapshotMessage[]> {
  let done = false;
  try {
    while (!done) {
      const piece = parseHistoryPiece(await host.history(handle.historyId, "next", { timeout: "readHistory" }));
      done = piece.done;
      yield piece.messages;
    }
  } finally {
    if (!done) await host.history(handle.historyId, "close", { timeout: "readHistory" }).catch(() => undefined);
  }
}
