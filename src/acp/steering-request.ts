/**
 * The params of `_session/steering` (src/session/steering.ts, adr/0022): `{sessionId, prompt,
 * _meta?.steering.idleBehavior}`, checked here as the SDK checks a `session/prompt` (an extension
 * request reaches us unchecked). Throws INVALID_PARAMS.
 */
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { IdleBehavior } from "../session/steering.js";
import { invalidParams } from "./request-errors.js";

export interface SteeringRequest {
  sessionId: string;
  prompt: ContentBlock[];
  idleBehavior: IdleBehavior;
}

const BLOCK_TYPES = new Set(["text", "image", "audio", "resource", "resource_link"]);
/** as many blocks as a prompt of any client plausibly has; more is refused before anything is converted */
const MAX_BLOCKS = 1000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function parseSteeringRequest(params: unknown): SteeringRequest {
  if (!isRecord(params)) throw invalidParams("_session/steering takes an object with sessionId and prompt.");
  const { sessionId, prompt } = params;
  if (typeof sessionId !== "string" || sessionId === "") throw invalidParams("_session/steering needs a sessionId.");
  if (!Array.isArray(prompt) || prompt.length === 0 || prompt.length > MAX_BLOCKS) {
    throw invalidParams(`_session/steering needs a prompt: a list of 1 to ${MAX_BLOCKS} content blocks.`);
  }
  for (const [index, block] of prompt.entries()) {
    if (!isRecord(block) || typeof block.type !== "string" || !BLOCK_TYPES.has(block.type)) {
      throw invalidParams(`Steering prompt block ${index} is not a content block (text, image, audio, resource or resource_link).`);
    }
    const malformed =
      (block.type === "text" && typeof block.text !== "string") ||
      ((block.type === "image" || block.type === "audio") && (typeof block.data !== "string" || typeof block.mimeType !== "string")) ||
      (block.type === "resource" && !isRecord(block.resource)) ||
      (block.type === "resource_link" && (typeof block.uri !== "string" || typeof block.name !== "string"));
    if (malformed) throw invalidParams(`Steering prompt block ${index} (${block.type}) lacks a field its type needs.`);
  }
  const meta = isRecord(params._meta) && isRecord(params._meta.steering) ? params._meta.steering : undefined;
  const idleBehavior: IdleBehavior = meta?.idleBehavior === "promptRequired" ? "promptRequired" : "startNewTurn";
  return { sessionId, prompt: prompt as ContentBlock[], idleBehavior };
}
