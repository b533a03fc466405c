/**
 * JSON Schemas of the host's three reverse requests (docs/zcode-host.md §6): lenient about extra
 * fields, strict about what the interaction broker relies on (src/session/interactions/
 * native-requests.ts). A permission option and the question list are schemas of their own: a
 * malformed option or question list invalidates only itself, not the request.
 */
import type { JSONSchema } from "json-schema-to-ts";
import { nonEmpty, str, unchecked } from "./event-schemas.js";

/** what a permission request and a user-input request both carry: who asks, in which turn, for which tool */
const toolRequestFields = { requestId: nonEmpty, sessionId: str, turnId: str, toolCallId: str, toolName: str } as const;

export const permissionOptionSchema = {
  type: "object",
  required: ["optionId", "name", "response"],
  properties: {
    optionId: nonEmpty,
    name: str,
    kind: str,
    description: str,
    response: {
      type: "object",
      required: ["decision"],
      properties: { decision: str, reason: str, modifiedInput: unchecked.value, permissionUpdates: { type: "array" } },
    },
  },
} as const satisfies JSONSchema;

export const permissionRequestSchema = {
  type: "object",
  required: ["requestId"],
  properties: {
    ...toolRequestFields,
    reason: str,
    riskLevel: str,
    input: unchecked.value,
    /** each option is checked on its own (permissionOptionSchema) */
    options: { type: "array" },
  },
} as const satisfies JSONSchema;

export const questionsSchema = {
  type: "array",
  minItems: 1,
  items: {
    type: "object",
    required: ["question", "options"],
    properties: {
      question: str,
      header: str,
      options: {
        type: "array",
        minItems: 1,
        items: { type: "object", required: ["value"], properties: { value: str, label: str, description: str } },
      },
      multiSelect: { type: "boolean" },
    },
  },
} as const satisfies JSONSchema;

export const userInputRequestSchema = {
  type: "object",
  required: ["requestId"],
  properties: {
    ...toolRequestFields,
    prompt: str,
    input: unchecked.value,
    /** checked on their own (questionsSchema) */
    questions: unchecked.value,
    schema: unchecked.value,
  },
} as const satisfies JSONSchema;

export const providerHeadersRequestSchema = {
  type: "object",
  required: ["requestId"],
  properties: { requestId: nonEmpty, sessionId: str, turnId: str, providerId: str, reason: str },
} as const satisfies JSONSchema;
