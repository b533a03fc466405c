/**
 * ZCode 3.18+'s `getContextComposition` (shared/reference/zcode-3.16-4.0.md §2.2: "11 context
 * categories"; the result's shape is GUESSED, as the simulator's: `{categories:[{id, label, tokens}],
 * totalTokens, contextWindow}`). Read only where the install's manifest allows it; its result is
 * checked here and a malformed one fails closed (NATIVE_PROTOCOL_ERROR): the session layer then
 * keeps the usage it had (a usage read never fails a turn).
 */
import type { HostClient } from "../../host/types.js";
import { CONTEXT_COMPOSITION_METHOD } from "../../manifest/release-lines.js";
import { BridgeError } from "../../util/errors.js";
import type { ContextComposition, SessionRef } from "../native-api.js";

/** at most this many categories are kept (ZCode names 11) */
export const MAX_CONTEXT_CATEGORIES = 32;
/** a category's id and label are cut to this many characters */
const MAX_NAME_CHARS = 120;

const count = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function malformed(what: string): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode's ${CONTEXT_COMPOSITION_METHOD} answered an unexpected shape: ${what}.`, {
    details: { method: CONTEXT_COMPOSITION_METHOD },
  });
}

export function parseContextComposition(raw: unknown): ContextComposition {
  if (!isRecord(raw)) throw malformed("not an object");
  if (!count(raw.totalTokens)) throw malformed("totalTokens is not a token count");
  if (raw.contextWindow !== undefined && !(count(raw.contextWindow) && raw.contextWindow > 0))
    throw malformed("contextWindow is not a positive token count");
  if (!Array.isArray(raw.categories)) throw malformed("categories is not a list");
  const categories = raw.categories.slice(0, MAX_CONTEXT_CATEGORIES).map((entry, i) => {
    if (!isRecord(entry) || typeof entry.id !== "string" || !count(entry.tokens)) throw malformed(`categories[${i}] is not {id, tokens}`);
    const label = typeof entry.label === "string" ? entry.label : entry.id;
    return { id: entry.id.slice(0, MAX_NAME_CHARS), label: label.slice(0, MAX_NAME_CHARS), tokens: entry.tokens };
  });
  return { used: raw.totalTokens, size: raw.contextWindow, categories };
}

/** The composition where the install allows the call; undefined (no call) where it does not. */
export async function readContextComposition(host: HostClient, params: SessionRef): Promise<ContextComposition | undefined> {
  if (!(await host.allows("agent", CONTEXT_COMPOSITION_METHOD))) return undefined;
  const raw = await host.call<unknown>(
    "agent",
    CONTEXT_COMPOSITION_METHOD,
    { workspacePath: params.workspacePath, sessionId: params.sessionId },
    { timeout: "contextComposition" },
  );
  return parseContextComposition(raw);
}
