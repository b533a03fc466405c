/**
 * Frames of the internal NDJSON channel between the bridge and the bootstrap (docs/runtime-contract.md §4).
 * The channel knows these frame shapes; it never knows ZCode service or method names.
 *
 * bridge → bootstrap: requests   {"id":n,"method":"__call"|"__subscribe"|"__unsubscribe"|"__history","params":{…}}
 * bootstrap → bridge: responses  {"id":n,"result":…} | {"id":n,"error":{"code","message","data"?}}
 *                     notifications {"method":"event"|"subscription-end"|"ready"|"host-exit","params":{…}}
 *
 * Every inbound frame is checked exactly (no unknown keys); anything else is a protocol error.
 */
import { BridgeError, type ErrorCode } from "../util/errors.js";

export type RequestMethod = "__call" | "__subscribe" | "__unsubscribe" | "__history";

export interface RequestFrame {
  id: number;
  method: RequestMethod;
  params: Record<string, unknown>;
}

/** Notifications the channel hands to its owner (the host layer) instead of routing them itself. */
export type OwnerNotificationMethod = "ready" | "host-exit";

export interface RemoteError {
  code: string;
  message: string;
  data?: Record<string, unknown>;
}

export type InboundFrame =
  | { kind: "result"; id: number; result: unknown }
  | { kind: "error"; id: number; error: RemoteError }
  | { kind: "event"; subscriptionId: string; event: unknown }
  | { kind: "subscription-end"; subscriptionId: string; error: RemoteError | null }
  | { kind: "owner"; method: OwnerNotificationMethod; params: Record<string, unknown> };

/** Error codes a peer may put in an error response; anything else becomes HOST_CALL_FAILED. */
const REMOTE_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  "METHOD_NOT_ALLOWED",
  "HOST_CALL_FAILED",
  "FRAME_TOO_LARGE",
  "CHANNEL_PROTOCOL",
  "CHANNEL_OVERFLOW",
  "HOST_START_FAILED",
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasOnlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

export function isFrameId(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function protocolError(reason: string): BridgeError {
  return new BridgeError("CHANNEL_PROTOCOL", `internal channel received an unknown frame: ${reason}`);
}

function parseRemoteError(value: unknown): RemoteError | undefined {
  if (!isRecord(value) || !hasOnlyKeys(value, ["code", "message", "data"])) return undefined;
  if (typeof value.code !== "string" || value.code === "" || typeof value.message !== "string") return undefined;
  if (value.data !== undefined && !isRecord(value.data)) return undefined;
  return value.data === undefined
    ? { code: value.code, message: value.message }
    : { code: value.code, message: value.message, data: value.data };
}

/** Classify one decoded JSON value from the bootstrap. Throws CHANNEL_PROTOCOL for anything unknown. */
export function parseInboundFrame(value: unknown): InboundFrame {
  if (!isRecord(value)) throw protocolError("not a JSON object");
  if ("id" in value) {
    if (!isFrameId(value.id)) throw protocolError("the id is not a positive integer");
    if ("result" in value) {
      if (!hasOnlyKeys(value, ["id", "result"])) throw protocolError("extra keys in a result");
      return { kind: "result", id: value.id, result: value.result };
    }
    if ("error" in value) {
      if (!hasOnlyKeys(value, ["id", "error"])) throw protocolError("extra keys in an error response");
      const error = parseRemoteError(value.error);
      if (!error) throw protocolError("malformed error object");
      return { kind: "error", id: value.id, error };
    }
    throw protocolError("a response with neither result nor error");
  }
  if (typeof value.method !== "string") throw protocolError("no id and no method");
  if (!hasOnlyKeys(value, ["method", "params"]) || !isRecord(value.params)) {
    throw protocolError(`notification ${JSON.stringify(value.method).slice(0, 40)} without an object of params`);
  }
  const params = value.params;
  switch (value.method) {
    case "event": {
      if (!hasOnlyKeys(params, ["subscriptionId", "event"])) throw protocolError("extra keys in an event");
      if (typeof params.subscriptionId !== "string" || !("event" in params)) throw protocolError("malformed event");
      return { kind: "event", subscriptionId: params.subscriptionId, event: params.event };
    }
    case "subscription-end": {
      if (!hasOnlyKeys(params, ["subscriptionId", "error"])) throw protocolError("extra keys in subscription-end");
      if (typeof params.subscriptionId !== "string") throw protocolError("malformed subscription-end");
      const error = params.error === undefined || params.error === null ? null : parseRemoteError(params.error);
      if (error === undefined) throw protocolError("malformed subscription-end error");
      return { kind: "subscription-end", subscriptionId: params.subscriptionId, error };
    }
    case "ready":
    case "host-exit":
      return { kind: "owner", method: value.method, params };
    default:
      throw protocolError(`notification ${JSON.stringify(value.method).slice(0, 40)}`);
  }
}

/** The typed error for an error response or an ended subscription. */
export function remoteErrorToBridgeError(error: RemoteError): BridgeError {
  const code: ErrorCode = REMOTE_CODES.has(error.code) ? (error.code as ErrorCode) : "HOST_CALL_FAILED";
  const details: Record<string, unknown> = { ...(error.data ?? {}) };
  if (code !== error.code) details.remoteCode = error.code;
  return new BridgeError(code, error.message, Object.keys(details).length > 0 ? { details } : {});
}
