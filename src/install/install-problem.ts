/**
 * What the install readers and the assessment steps throw when the install itself is at fault
 * (missing, unreadable, escaping, malformed, not the verified build): a BridgeError("UNSUPPORTED_ZCODE") whose message says what to do and whose
 * details carry expected-vs-actual evidence for the assessment report.
 */
import { BridgeError, isBridgeError } from "../util/errors.js";

export type Evidence = Record<string, { expected?: unknown; actual?: unknown }>;

export function installProblem(message: string, evidence: Evidence, cause?: unknown): BridgeError {
  return new BridgeError("UNSUPPORTED_ZCODE", message, { cause, details: { evidence } });
}

export function evidenceOf(error: unknown): Evidence | undefined {
  if (!isBridgeError(error) || error.details === undefined) return undefined;
  const evidence = error.details.evidence;
  return typeof evidence === "object" && evidence !== null ? (evidence as Evidence) : undefined;
}

/** "ENOENT" etc. of a Node system error, if any */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
