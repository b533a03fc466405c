/**
 * Typed errors shared by every layer. A BridgeError always carries a stable
 * machine code and a message written for people: what happened and what to do.
 * Messages never contain secrets (tokens, headers, browser payloads, prompt text).
 */
export type ErrorCode =
  // command line and configuration
  | "USAGE"
  | "INVALID_MANIFEST"
  | "UNSUPPORTED_ZCODE"
  // host process and internal channel
  | "HOST_START_FAILED"
  | "HOST_EXITED"
  | "HOST_TIMEOUT"
  | "HOST_CALL_FAILED"
  | "METHOD_NOT_ALLOWED"
  | "CHANNEL_PROTOCOL"
  | "FRAME_TOO_LARGE"
  | "CHANNEL_CLOSED"
  | "CHANNEL_OVERFLOW"
  // session translation
  | "NATIVE_PROTOCOL_ERROR"
  | "INTERACTION_UNSUPPORTED"
  | "AUTH_REQUIRED"
  | "INVALID_PARAMS"
  | "SESSION_BUSY"
  | "SESSION_NOT_FOUND"
  | "PROVIDER_HEADERS_UNSUPPORTED"
  | "TURN_FAILED"
  /** ZCode held its input queue for its own reasons longer than the bound: the waiting prompt was taken out, not run (adr/0038) */
  | "QUEUE_HELD"
  | "INTERNAL";

export class BridgeError extends Error {
  override readonly name = "BridgeError";
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

export function isBridgeError(value: unknown, code?: ErrorCode): value is BridgeError {
  return value instanceof BridgeError && (code === undefined || value.code === code);
}

/** A short, secret-free description of any thrown value, for logs and wrapped errors. */
export function describeError(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * THE classification of "outcome unknown": the codes of a failed call after which ZCode may or may
 * not have done what it was asked (the request may have left before the answer was lost). Such a
 * call is never sent again, since it could then run twice. Over-inclusive on purpose: a call that
 * was in fact refused before it left (a full channel, a frame too large for the channel) only
 * costs a question or a stop, while a call taken for refused that did run could run twice.
 * - HOST_TIMEOUT: no answer in time;
 * - CHANNEL_CLOSED, HOST_EXITED: the channel or the host went away while the call was out;
 * - CHANNEL_OVERFLOW, FRAME_TOO_LARGE: the channel's limits (an answer too large for a frame
 *   comes back as FRAME_TOO_LARGE after the host did the call).
 */
export const OUTCOME_UNKNOWN_CODES: readonly ErrorCode[] = Object.freeze([
  "HOST_TIMEOUT",
  "CHANNEL_CLOSED",
  "HOST_EXITED",
  "CHANNEL_OVERFLOW",
  "FRAME_TOO_LARGE",
]);

/** Did `error` end a call without saying whether ZCode did it (see OUTCOME_UNKNOWN_CODES)? */
export function isOutcomeUnknown(error: unknown): error is BridgeError {
  return error instanceof BridgeError && OUTCOME_UNKNOWN_CODES.includes(error.code);
}
