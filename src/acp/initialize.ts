/**
 * The `initialize` answer: protocol 1 and the capabilities zcode-acp really has (docs/acp.md §2.1).
 * Loaded before the ACP SDK (the CLI answers `initialize` early, src/cli/early-initialize.ts),
 * so it imports only types from the SDK.
 */
import type { InitializeResponse } from "@agentclientprotocol/sdk";
import { PACKAGE_VERSION } from "../version.js";
import { onboardAuthMethod, terminalAuthOf } from "./onboarding-auth.js";
import type { SessionCalls } from "../native/session-calls.js";
import { sessionManagementCapabilities } from "./session-management-capabilities.js";

/** the SDK's PROTOCOL_VERSION (test/unit/cli/early-initialize.property.test.ts keeps them equal) */
export const PROTOCOL_VERSION = 1;

export const AUTH_METHOD_ID = "zcode-app";

/**
 * `clientCapabilities` as the client sent them (raw or parsed): they decide the onboarding auth
 * method (./onboarding-auth.ts); `sessionCalls`: what the install's host offers of session
 * management (absent: nothing)
 */
export function initializeResponse(clientCapabilities?: unknown, sessionCalls?: SessionCalls): InitializeResponse {
  const terminalAuth = terminalAuthOf(clientCapabilities);
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, resume: {}, close: {}, ...sessionManagementCapabilities(sessionCalls) },
      // `logout` ends this connection's sign-in, not the ZCode app's (src/acp/logout.ts)
      auth: { logout: {} },
      // a session/prompt sent while a turn runs waits in ZCode's queue (claude-agent-acp's key; adr/0022)
      _meta: { claudeCode: { promptQueueing: true } },
    },
    authMethods: [
      {
        id: AUTH_METHOD_ID,
        name: "Sign in with the ZCode app",
        description: "zcode-acp uses the ZCode desktop app's own sign-in. Sign in inside the ZCode app, then retry.",
      },
      ...(terminalAuth ? [onboardAuthMethod(terminalAuth)] : []),
    ],
    agentInfo: { name: "zcode-acp", title: "ZCode", version: PACKAGE_VERSION },
    // mid-turn input (adr/0022): `_session/steering` as claude-agent-acp and codex-acp serve it
    _meta: { steering: { supported: true } },
  };
}

/**
 * The client capabilities SDK 2.4.0's stable `initialize` parser drops: `plan` (plan operations)
 * and `subagents`, both unstable in that SDK (docs/acp.md §2.11). Read from the raw params, with
 * the schema's rule for them: an object advertises, anything else (omitted, null, malformed) does
 * not. The SDK's own validation of the request is untouched; this only adds what it removed.
 */
export function unstableClientCapabilities(rawParams: unknown): { plan?: Record<string, unknown>; subagents?: Record<string, unknown> } {
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === "object" && value !== null && !Array.isArray(value);
  const caps = isObject(rawParams) && isObject(rawParams.clientCapabilities) ? rawParams.clientCapabilities : {};
  return {
    ...(isObject(caps.plan) ? { plan: caps.plan } : {}),
    ...(isObject(caps.subagents) ? { subagents: caps.subagents } : {}),
  };
}
