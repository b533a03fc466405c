/**
 * What the transport reads of a client message, on its own terms (adr/0019): the JSON-RPC 2.0
 * envelope, and the params of the methods the transport acts on before the SDK sees them
 * (`initialize`, `session/prompt`, `session/cancel`, `$/cancel_request`). Nothing here throws,
 * whatever the client wrote; a message is either read (and passed on, typed) or refused:
 *
 *  - an invalid call (no `"jsonrpc": "2.0"`, a method that is not a string, an id that is not a
 *    string, a number or null) or a message with neither a method nor an id is answered -32600,
 *    with the id when it is usable;
 *  - a request of an inspected method whose params are missing or wrong-typed is answered
 *    -32602 with a message that names the field; the SDK never sees it;
 *  - a notification of an inspected method with such params is dropped (logged at debug);
 *  - a malformed response (no `"jsonrpc": "2.0"`, both or neither of result / error, an error
 *    without an integer code and a string message) becomes an error response, so the request of
 *    ours that waits for it falls back instead of hanging; one without a usable id is dropped.
 *
 * Unknown fields are ignored, as ACP requires of receivers ("extra" params are accepted, only
 * the fields read here are checked); params that are not an object (a string, an array) are
 * wrong-typed.
 */
import { JSON_RPC_CODES } from "./request-errors.js";

type Message = Record<string, unknown>;
export type RequestId = string | number | null;

export type ClientMessage =
  | { kind: "request"; id: RequestId; method: string; message: Message }
  | { kind: "notification"; method: string; message: Message }
  | { kind: "response"; id: RequestId; message: Message };

export type ReadMessage =
  | { ok: true; read: ClientMessage }
  | {
      ok: false;
      /** the error to answer with (requests and invalid envelopes); none for notifications and responses */
      answer?: { id: RequestId; code: number; message: string; data?: Record<string, unknown> };
      /** for the debug log: what was wrong (never the values) */
      reason: string;
      method?: string;
    };

function isRecord(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRequestId(value: unknown): value is RequestId {
  return value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/** checks the params of a method; returns what is wrong, or undefined */
type ParamsCheck = (params: unknown) => string | undefined;

const object =
  (fields: (params: Message) => string | undefined): ParamsCheck =>
  (params) => {
    if (params === undefined) return "params are missing";
    if (!isRecord(params)) return `params must be an object, not ${Array.isArray(params) ? "an array" : describeType(params)}`;
    return fields(params);
  };

const stringField = (params: Message, key: string): string | undefined =>
  typeof params[key] === "string"
    ? undefined
    : `params.${key} must be a string${key in params ? `, not ${describeType(params[key])}` : ""}`;

/** the requests the transport reads before the SDK (initialize: the early answer; prompt: its session) */
const REQUEST_PARAMS: Readonly<Record<string, ParamsCheck>> = {
  initialize: object((p) => {
    const version = p.protocolVersion;
    if (typeof version === "number" && Number.isInteger(version) && version >= 0 && version <= 65535) return undefined;
    return "params.protocolVersion must be an integer from 0 to 65535";
  }),
  "session/prompt": object(
    (p) => stringField(p, "sessionId") ?? (Array.isArray(p.prompt) ? undefined : "params.prompt must be an array of content blocks"),
  ),
};

/** the notifications the transport acts on (adr/0006: the wire decides between a cancel and an answer) */
const NOTIFICATION_PARAMS: Readonly<Record<string, ParamsCheck>> = {
  "session/cancel": object((p) => stringField(p, "sessionId")),
  "$/cancel_request": object((p) =>
    isRequestId(p.requestId) ? undefined : "params.requestId must be a JSON-RPC id (a string or a number)",
  ),
};

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function invalidRequest(id: RequestId, reason: string, method?: string): ReadMessage {
  return {
    ok: false,
    reason,
    ...(method === undefined ? {} : { method }),
    answer: { id, code: JSON_RPC_CODES.invalidRequest, message: `Invalid Request: ${reason}.` },
  };
}

function isErrorObject(value: unknown): boolean {
  return isRecord(value) && typeof value.code === "number" && Number.isInteger(value.code) && typeof value.message === "string";
}

/** Read one parsed JSON-RPC value (an object: batches and non-objects are refused by the reader before). */
export function readClientMessage(message: Message): ReadMessage {
  const hasId = Object.hasOwn(message, "id");
  const id = hasId && isRequestId(message.id) ? message.id : null;
  const envelope = message.jsonrpc === "2.0";
  if (Object.hasOwn(message, "method")) {
    const method = message.method;
    if (!envelope) return invalidRequest(id, 'the message must carry "jsonrpc": "2.0"');
    if (typeof method !== "string") return invalidRequest(id, "the method must be a string");
    if (hasId && !isRequestId(message.id)) return invalidRequest(null, "the id must be a string, a number or null", method);
    const check = hasId ? REQUEST_PARAMS[method] : NOTIFICATION_PARAMS[method];
    const wrong = check?.(message.params);
    if (wrong === undefined) {
      return hasId
        ? { ok: true, read: { kind: "request", id: message.id as RequestId, method, message } }
        : { ok: true, read: { kind: "notification", method, message } };
    }
    if (!hasId) return { ok: false, reason: wrong, method };
    return {
      ok: false,
      reason: wrong,
      method,
      answer: {
        id: message.id as RequestId,
        code: JSON_RPC_CODES.invalidParams,
        message: `Invalid params for ${method}: ${wrong}.`,
        data: { code: "INVALID_PARAMS", method },
      },
    };
  }
  const hasResult = Object.hasOwn(message, "result");
  const hasError = Object.hasOwn(message, "error");
  if (!hasId || !isRequestId(message.id)) {
    if (!hasId && !hasResult && !hasError) return invalidRequest(null, "a message needs a method (a call) or an id (a response)");
    // a response nobody can be matched with: nobody to answer either
    return { ok: false, reason: "a response without a usable id" };
  }
  if (envelope && hasResult !== hasError && (hasResult || isErrorObject(message.error))) {
    return { ok: true, read: { kind: "response", id: message.id, message } };
  }
  // the request it answers must not wait forever: it gets an error (its interaction falls back)
  const what = !envelope
    ? 'no "jsonrpc": "2.0"'
    : hasResult && hasError
      ? "both a result and an error"
      : hasError
        ? "a malformed error"
        : "neither a result nor an error";
  return {
    ok: true,
    read: {
      kind: "response",
      id: message.id,
      message: {
        jsonrpc: "2.0",
        id: message.id,
        error: { code: JSON_RPC_CODES.invalidRequest, message: `Invalid response from the client: ${what}.` },
      },
    },
  };
}
