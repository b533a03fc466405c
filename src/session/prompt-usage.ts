/**
 * `PromptResponse.usage` (an unstable ACP field that older Paseo reads; docs/acp.md §2.4): the session's
 * token totals from the native usage report, as claude-agent-acp sends them. Absent when the host
 * gave no usable numbers.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { TaskTokenUsage } from "../protocol/native-types.js";
import type { ContextComposition } from "../native/native-api.js";

export interface PromptUsage {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  thoughtTokens?: number;
  cachedReadTokens?: number;
  cachedWriteTokens?: number;
}

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

export function promptUsage(tokens: TaskTokenUsage | undefined): PromptUsage | undefined {
  const input = count(tokens?.inputTokens);
  const output = count(tokens?.outputTokens);
  if (input === undefined || output === undefined) return undefined;
  const usage: PromptUsage = { totalTokens: count(tokens?.totalTokens) ?? input + output, inputTokens: input, outputTokens: output };
  const thought = count(tokens?.reasoningTokens);
  if (thought !== undefined) usage.thoughtTokens = thought;
  const read = count(tokens?.cacheReadTokens);
  if (read !== undefined) usage.cachedReadTokens = read;
  const write = count(tokens?.cacheCreationTokens);
  if (write !== undefined) usage.cachedWriteTokens = write;
  return usage;
}

/**
 * The end-of-turn `usage_update` on a build with ZCode 3.18+'s context composition (issue 26; the
 * call's result shape is a GUESS, src/native/shared/context-composition.ts): its token count is
 * the context's `used`, its window the `size` (else the snapshot's), and its categories go under
 * `_meta.zcode.contextComposition` beside the token totals. ZCode's own context breakdown in the
 * session's usage (`contextBreakdownChars`, public in its source) is preferred: where the snapshot
 * has one, the guessed composition is not used. Without a composition (a build without the call,
 * or a read that failed) the update is the snapshot's, as before.
 */
export function withContextComposition(
  update: SessionUpdate | undefined,
  composition: ContextComposition | undefined,
): SessionUpdate | undefined {
  if (composition === undefined) return update;
  const base = update?.sessionUpdate === "usage_update" ? update : undefined;
  if ((base?._meta?.zcode as { contextBreakdownChars?: unknown } | undefined)?.contextBreakdownChars !== undefined) return update;
  const size = composition.size ?? base?.size;
  if (size === undefined) return update;
  const zcode = { ...((base?._meta?.zcode as Record<string, unknown> | undefined) ?? {}), contextComposition: composition.categories };
  return { ...base, sessionUpdate: "usage_update", used: composition.used, size, _meta: { ...base?._meta, zcode } };
}
