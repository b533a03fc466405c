/**
 * The early `initialize` answer: when the client's first line is a well-formed `initialize`
 * request, the CLI answers it from here, before the ACP SDK (and zod) are loaded, with exactly
 * the bytes the SDK connection would write for it (src/acp/initialize.ts is the one source of
 * the answer; the SDK writes `JSON.stringify({jsonrpc, id, result}) + "\n"`).
 *
 * Fail closed: anything this module is not sure the SDK would answer with that very result
 * (another method, extra envelope keys, a null or fractional id, params the SDK's schema would
 * refuse, invalid UTF-8, a blank line) is left to the SDK, byte for byte.
 *
 * Why the SDK would answer the same: its initialize params schema requires only `protocolVersion`
 * (an integer 0…65535); `clientCapabilities`, `clientInfo` and `_meta` fall back to defaults when
 * malformed, and unknown keys are dropped. Our handler's answer depends only on whether the client
 * advertised terminal auth (`auth.terminal: true` or `_meta["terminal-auth"]: true`), read the same
 * way from the raw and the parsed capabilities (src/acp/onboarding-auth.ts), and on the install's
 * session management calls, which both paths take from the same warm-up assessment
 * (src/cli/install-session-calls.ts; the CLI makes the answer line again once they are known).
 * test/unit/cli/early-initialize.property.test.ts compares both paths on generated requests.
 */
import { isAbsolute } from "node:path";
import { initializeResponse } from "../acp/initialize.js";
import type { SessionCalls } from "../native/session-calls.js";

export type RequestId = string | number;

export interface EarlyInitialize {
  id: RequestId;
  /** the complete answer line, newline included */
  answer: string;
  /** the client's capabilities as sent (the answer is made again once the install's session calls are known) */
  clientCapabilities: unknown;
}

const ENVELOPE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const decoder = new TextDecoder("utf-8", { fatal: true });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The request id and answer for a first line (without its "\n"), or undefined: leave it to the SDK. */
export function earlyInitialize(line: Uint8Array): EarlyInitialize | undefined {
  let text: string;
  try {
    text = decoder.decode(line).trim();
  } catch {
    return undefined;
  }
  if (!text.startsWith("{")) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0" || message.method !== "initialize") return undefined;
  if (!Object.keys(message).every((key) => ENVELOPE_KEYS.has(key))) return undefined;
  const id = message.id;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return undefined;
  const params = message.params;
  if (!isRecord(params)) return undefined;
  const version = params.protocolVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0 || version > 65535) return undefined;
  return { id, answer: initializeAnswerLine(id, params.clientCapabilities), clientCapabilities: params.clientCapabilities };
}

/** The line the SDK connection writes for our initialize handler's result (for these client capabilities and session calls). */
export function initializeAnswerLine(id: RequestId, clientCapabilities?: unknown, sessionCalls?: SessionCalls): string {
  return `${JSON.stringify({ jsonrpc: "2.0", id, result: initializeResponse(clientCapabilities, sessionCalls) })}\n`;
}

/**
 * Whether a first line is an ACP v2 `initialize` (adr/0028): a well-formed request for protocol
 * version 2 or newer, with a string or integer id and the v2 `info` object (name and version).
 * Only such a client is served by the v2 agent; every other first line goes to v1 exactly as
 * before (a v1-shaped initialize asking for a newer version gets v1's answer, protocol 1).
 */
export function requestsProtocolV2(line: Uint8Array): boolean {
  let message: unknown;
  try {
    message = JSON.parse(decoder.decode(line));
  } catch {
    return false;
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0" || message.method !== "initialize") return false;
  const id = message.id;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)))) return false;
  const params = message.params;
  if (!isRecord(params)) return false;
  const version = params.protocolVersion;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 2 || version > 65535) return false;
  const info = params.info;
  return isRecord(info) && typeof info.name === "string" && typeof info.version === "string";
}

const SESSION_OPENERS = new Set(["session/new", "session/load", "session/resume"]);

/**
 * Whether a line is a request that opens a session and will start the host: session/new, load
 * or resume with an absolute cwd (and the fields the SDK's schema requires). The CLI starts the
 * host as soon as it sees one, before the SDK has parsed it; anything else starts it on use.
 */
export function opensSession(line: Uint8Array): boolean {
  let message: unknown;
  try {
    message = JSON.parse(decoder.decode(line));
  } catch {
    return false;
  }
  if (!isRecord(message) || message.jsonrpc !== "2.0" || typeof message.method !== "string" || !SESSION_OPENERS.has(message.method))
    return false;
  if (!(typeof message.id === "string" || typeof message.id === "number")) return false;
  const params = message.params;
  if (!isRecord(params) || typeof params.cwd !== "string" || !isAbsolute(params.cwd)) return false;
  if (message.method !== "session/new" && typeof params.sessionId !== "string") return false;
  if (message.method !== "session/resume" && !Array.isArray(params.mcpServers)) return false;
  return true;
}
