/**
 * A failed `session/prompt` that any client can show (adr/0010-readable-prompt-failures.md).
 * Paseo renders a rejected prompt with `String(error)`, which makes "[object Object]" of a
 * JSON-RPC error. So before the error goes out, the reason is streamed into the session as one
 * `agent_message_chunk` of its own message. The JSON-RPC error itself is not changed.
 */
import { randomUUID } from "node:crypto";
import type { RequestError, SessionNotification } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import { describeError } from "../util/errors.js";
import { toRequestError } from "./request-errors.js";

/** where the explanation goes; the SDK writes it before the error response (one ordered queue) */
export interface FailureSink {
  sessionUpdate(notification: SessionNotification): Promise<void>;
}

/** `_meta` key of the explanation chunk, so that a client can tell it from the model's text */
const FAILURE_META_KEY = "zcode-acp/promptError";

/**
 * Errors that are not explained in the session: it does not exist (nothing to write into), or
 * another prompt is running in it (the text would land in that turn's answer).
 */
const NOT_EXPLAINED = new Set(["SESSION_NOT_FOUND", "SESSION_BUSY"]);

function bridgeCode(error: RequestError): string | undefined {
  const data = error.data as { code?: unknown } | undefined;
  return typeof data?.code === "string" ? data.code : undefined;
}

/** the one line a person reads: what happened and what to do, with our machine code */
function failureText(error: RequestError): string {
  const message = error.message.replace(/\s+/g, " ").trim() || "the prompt failed";
  const code = bridgeCode(error);
  return `zcode-acp: ${message}${code ? ` [${code}]` : ""}`;
}

function failureUpdate(sessionId: string, error: RequestError): SessionNotification | undefined {
  const code = bridgeCode(error);
  if (code !== undefined && NOT_EXPLAINED.has(code)) return undefined;
  return {
    sessionId,
    update: {
      sessionUpdate: "agent_message_chunk",
      // its own message: a blank line apart from any text the turn already streamed
      messageId: `zcode-acp-error-${randomUUID()}`,
      content: { type: "text", text: `\n\n${failureText(error)}\n` },
      _meta: { [FAILURE_META_KEY]: { code: code ?? null, jsonRpcCode: error.code } },
    },
  };
}

/**
 * Run the prompt handler's body; on failure, stream the explanation, then throw the same
 * RequestError that `answer()` would have thrown.
 */
export async function answerPrompt<T>(sink: FailureSink, sessionId: string, logger: Logger, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (thrown) {
    const error = toRequestError(thrown);
    const notification = failureUpdate(sessionId, error);
    if (notification) {
      await sink
        .sessionUpdate(notification)
        .catch((e: unknown) => logger.warn("explaining the failed prompt failed", { error: describeError(e) }));
    }
    throw error;
  }
}
