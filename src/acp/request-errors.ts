/**
 * BridgeError → JSON-RPC error for ACP answers. The message is the BridgeError's message (for
 * people); `data.code` carries our machine code.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";

export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (!isBridgeError(error)) {
    return new RequestError(-32603, `Internal error: ${describeError(error)}`, { code: "INTERNAL" });
  }
  const data: Record<string, unknown> = { code: error.code };
  if (error.details && Object.keys(error.details).length > 0) data.details = error.details;
  switch (error.code) {
    case "AUTH_REQUIRED":
      return new RequestError(-32000, error.message, data);
    case "SESSION_NOT_FOUND": {
      const sessionId = error.details?.sessionId;
      return new RequestError(-32002, error.message, typeof sessionId === "string" ? { ...data, sessionId } : data);
    }
    case "INVALID_PARAMS":
    case "USAGE":
      return new RequestError(-32602, error.message, data);
    case "SESSION_BUSY":
      return new RequestError(-32600, error.message, data);
    default:
      return new RequestError(-32603, error.message, data);
  }
}

/** Run a handler body and convert whatever it throws. */
export async function answer<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toRequestError(error);
  }
}

export function invalidParams(message: string): BridgeError {
  return new BridgeError("INVALID_PARAMS", message);
}
