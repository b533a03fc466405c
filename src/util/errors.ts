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
