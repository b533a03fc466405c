/**
 * BridgeError → JSON-RPC error for ACP answers. The message is the BridgeError's message (for
 * people); `data.code` carries our machine code.
 */
import { RequestError } from "@agentclientprotocol/sdk";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";

/**
 * The JSON-RPC error codes, read from the SDK's RequestError factories (the SDK has one for each
 * code we answer with). Only the code is taken: a factory's message is generic ("Invalid params: …";
 * sessionNotFound's is "Resource not found"), ours is the BridgeError's, which the client shows.
 */
export const JSON_RPC_CODES = Object.freeze({
  parseError: RequestError.parseError().code,
  invalidRequest: RequestError.invalidRequest().code,
  invalidParams: RequestError.invalidParams().code,
  internalError: RequestError.internalError().code,
  authRequired: RequestError.authRequired().code,
  resourceNotFound: RequestError.resourceNotFound().code,
});

export function toRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  if (!isBridgeError(error))
    return new RequestError(JSON_RPC_CODES.internalError, `Internal error: ${describeError(error)}`, { code: "INTERNAL" });
  const data: Record<string, unknown> = { code: error.code };
  if (error.details && Object.keys(error.details).length > 0) data.details = error.details;
  switch (error.code) {
    case "AUTH_REQUIRED":
      return new RequestError(JSON_RPC_CODES.authRequired, error.message, data);
    case "UNSUPPORTED_ZCODE":
      // no usable ZCode (none installed, not the verified build): the install check failed at a
      // step. Like a signed-out app, the user has to act before any session can start, so it is
      // `auth_required` (the registry's protocol matrix reads it as such, not as an agent error);
      // the message says why and what to do. A refusal found later (an unknown wire version) stays internal.
      return new RequestError(
        typeof error.details?.failedStep === "string" ? JSON_RPC_CODES.authRequired : JSON_RPC_CODES.internalError,
        error.message,
        data,
      );
    case "SESSION_NOT_FOUND": {
      const sessionId = error.details?.sessionId;
      return new RequestError(
        JSON_RPC_CODES.resourceNotFound,
        error.message,
        typeof sessionId === "string" ? { ...data, sessionId } : data,
      );
    }
    case "INVALID_PARAMS":
    case "USAGE":
      return new RequestError(JSON_RPC_CODES.invalidParams, error.message, data);
    case "SESSION_BUSY":
      return new RequestError(JSON_RPC_CODES.invalidRequest, error.message, data);
    default:
      return new RequestError(JSON_RPC_CODES.internalError, error.message, data);
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

/**
 * A build no manifest covers (details.onboard, src/host/launcher.ts), for a client that was offered
 * the onboarding auth method (./onboarding-auth.ts): `auth_required` (as every unusable install is,
 * `toRequestError`) whose message also names that method, so the client shows it. Any other error, unchanged.
 */
export function asOnboardingRequired(error: unknown): unknown {
  if (!(error instanceof RequestError)) return error;
  const data = error.data as { details?: { onboard?: unknown } } | undefined;
  if (typeof data?.details?.onboard !== "string") return error;
  return new RequestError(
    JSON_RPC_CODES.authRequired,
    `${error.message} In this editor: choose "Review this ZCode build" among the sign-in options.`,
    data,
  );
}
