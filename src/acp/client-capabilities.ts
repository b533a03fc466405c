/**
 * Client capabilities SDK 2.4.0's stable `initialize` parser strips before our handler sees them
 * (docs/acp.md §2.1): read from the raw `initialize` params the transport saw. Self-contained on
 * purpose: the unstable capabilities (`subagents`, `plan`) are read the same way.
 */

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `clientCapabilities.subagents` of raw `initialize` params: an object (`{}` included) advertises
 * support; absent, `null` or anything else does not (ACP's unstable `SubagentCapabilities`).
 */
export function advertisesSubagents(rawInitializeParams: unknown): boolean {
  const capabilities = isRecord(rawInitializeParams) ? rawInitializeParams.clientCapabilities : undefined;
  return isRecord(capabilities) && isRecord(capabilities.subagents);
}
