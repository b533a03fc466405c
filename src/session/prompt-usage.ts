/**
 * `PromptResponse.usage` (an unstable ACP field that older Paseo reads; docs/acp.md §2.4): the session's
 * token totals from the native usage report, as claude-agent-acp sends them. Absent when the host
 * gave no usable numbers.
 */
import type { TaskTokenUsage } from "../protocol/native-types.js";

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
