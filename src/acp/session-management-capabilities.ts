/**
 * The `sessionCapabilities` of session management (docs/acp.md "Session management"): advertised
 * only for what the install's host offers (src/native/session-calls.ts). Loaded before the ACP
 * SDK with ./initialize.ts, so it imports types only.
 */
import type { SessionCalls } from "../native/session-calls.js";

export function sessionManagementCapabilities(calls: SessionCalls | undefined): { delete?: object; title?: object; fork?: object } {
  return {
    ...(calls?.delete ? { delete: {} } : {}),
    // unstable in SDK 2.4.0 (`session/set_title`); the stable schema lets the key through
    ...(calls?.setTitle ? { title: {} } : {}),
    // unstable too (`session/fork`)
    ...(calls?.fork ? { fork: {} } : {}),
  };
}
