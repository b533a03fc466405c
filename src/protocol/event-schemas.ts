/**
 * JSON Schemas (ajv, draft-07) of the host's dynamic session events (zcode-host.md §5) and of
 * the parts of the session snapshot the bridge reads (§7). Objects allow extra properties
 * (the host adds fields over time); what the bridge relies on is required and typed.
 */
import { MODEL_STREAMING_KINDS, TOOL_UPDATED_KINDS } from "./native-types.js";

type Schema = Record<string, unknown>;

const str: Schema = { type: "string" };
const nonEmpty: Schema = { type: "string", minLength: 1 };
const obj: Schema = { type: "object" };
const count: Schema = { type: "integer", minimum: 0 };

const modelRef: Schema = {
  type: "object",
  required: ["providerId", "modelId"],
  properties: { providerId: nonEmpty, modelId: nonEmpty, variant: { type: ["string", "null"] } },
};

export const snapshotSchema: Schema = {
  type: "object",
  required: ["session"],
  properties: {
    session: {
      type: "object",
      required: ["sessionId", "workspace"],
      properties: {
        sessionId: nonEmpty,
        workspace: { type: "object", required: ["workspacePath"], properties: { workspacePath: nonEmpty } },
        title: { type: ["string", "null"] },
        mode: str,
        status: str,
        createdAt: { type: "number" },
        updatedAt: { type: "number" },
      },
    },
    settings: {
      type: "object",
      properties: {
        model: {
          type: "object",
          properties: {
            current: { anyOf: [modelRef, { type: "null" }] },
            available: {
              type: "array",
              items: {
                type: "object",
                required: ["ref"],
                properties: { ref: modelRef, label: str, providerLabel: str, contextWindow: { type: "number" } },
              },
            },
          },
        },
        thoughtLevel: {
          type: "object",
          required: ["enabled"],
          properties: {
            enabled: { type: "boolean" },
            current: { type: ["string", "null"] },
            available: {
              type: "array",
              items: {
                type: "object",
                required: ["value"],
                properties: { value: nonEmpty, label: str, description: str },
              },
            },
          },
        },
        mode: { type: "object", properties: { current: str } },
      },
    },
    runtime: {
      type: "object",
      properties: {
        eventSeq: count,
        activeTurnId: { type: ["string", "null"] },
        contextUsage: {
          anyOf: [
            { type: "null" },
            {
              type: "object",
              required: ["used", "size"],
              properties: {
                used: { type: "number", minimum: 0 },
                size: { type: "number", minimum: 0 },
                cost: {
                  anyOf: [
                    { type: "null" },
                    { type: "object", required: ["amount", "currency"], properties: { amount: { type: "number" }, currency: nonEmpty } },
                  ],
                },
              },
            },
          ],
        },
      },
    },
    messages: {
      type: "array",
      items: {
        type: "object",
        required: ["info", "parts"],
        properties: {
          info: { type: "object", required: ["role"], properties: { role: str, messageId: str } },
          parts: { type: "array", items: { type: "object", required: ["type"], properties: { type: str } } },
        },
      },
    },
    todos: {
      type: "array",
      items: {
        type: "object",
        required: ["content", "status"],
        properties: {
          content: str,
          status: { enum: ["pending", "in_progress", "completed"] },
          priority: { enum: ["high", "medium", "low"] },
        },
      },
    },
    slashCommands: {
      type: "array",
      items: { type: "object", required: ["name"], properties: { name: nonEmpty, description: str, inputHint: str } },
    },
  },
};

export const sessionEventEnvelopeSchema: Schema = {
  type: "object",
  required: ["eventId", "sessionId", "seq", "timestamp", "deliveryKind", "type", "payload"],
  properties: {
    eventId: nonEmpty,
    sessionId: nonEmpty,
    turnId: nonEmpty,
    seq: count,
    traceId: str,
    timestamp: { type: "number" },
    deliveryKind: { enum: ["desktop-continuous", "web-remote-replayable"] },
    type: nonEmpty,
    payload: obj,
  },
};

/** The 7 top-level event types (§5.2), keyed by `type`. */
export const topLevelSchemas: Record<string, Schema> = {
  snapshot: { type: "object", required: ["type", "snapshot"], properties: { snapshot: snapshotSchema } },
  "state.updated": {
    type: "object",
    required: ["type", "notification"],
    properties: {
      notification: {
        type: "object",
        required: ["type", "scope", "revision", "patch"],
        properties: {
          type: { const: "state.updated" },
          scope: { enum: ["server", "workspace", "session"] },
          sessionId: nonEmpty,
          revision: count,
          reason: str,
          patch: obj,
        },
        if: { properties: { scope: { const: "session" } } },
        then: { required: ["sessionId"] },
      },
    },
  },
  "permission.request": { type: "object", required: ["type", "request"], properties: { request: obj } },
  "userInput.request": { type: "object", required: ["type", "request"], properties: { request: obj } },
  "userInput.response": {
    type: "object",
    required: ["type", "requestId", "response"],
    properties: { requestId: nonEmpty },
  },
  "providerRuntimeHeaders.request": { type: "object", required: ["type", "request"], properties: { request: obj } },
  "session.event": { type: "object", required: ["type", "event"], properties: { event: sessionEventEnvelopeSchema } },
};

// ---- payloads of the inner types the bridge translates (§5.5–5.8) ----

const toolCallIdRequired = { required: ["toolCallId"], properties: { toolCallId: nonEmpty } };

export const modelStreamingSchema: Schema = {
  type: "object",
  required: ["kind"],
  properties: {
    kind: { enum: [...MODEL_STREAMING_KINDS] },
    assistantMessageId: str,
    partId: str,
    delta: str,
    toolCallId: nonEmpty,
    toolName: nonEmpty,
  },
  allOf: [
    { if: { properties: { kind: { enum: ["text_delta", "reasoning_delta"] } } }, then: { required: ["delta"] } },
    { if: { properties: { kind: { const: "tool_input_start" } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "tool_input_delta" } } }, then: { required: ["toolCallId", "delta"] } },
    { if: { properties: { kind: { const: "tool_input_end" } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "tool_call" } } }, then: { required: ["toolCallId", "toolName"] } },
  ],
};

const toolError: Schema = {
  type: "object",
  required: ["message"],
  properties: { type: str, message: str },
};

export const toolUpdatedSchema: Schema = {
  type: "object",
  required: ["kind"],
  properties: {
    kind: { enum: [...TOOL_UPDATED_KINDS] },
    toolCallId: nonEmpty,
    toolName: nonEmpty,
    inputOmitted: { type: "boolean" },
    outputPreview: str,
    stdoutTail: str,
    stderrTail: str,
    error: toolError,
    toolCallIds: { type: "array", items: nonEmpty },
  },
  allOf: [
    { if: { properties: { kind: { enum: ["started", "progress", "result", "error"] } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "scheduled" } } }, then: { required: ["toolCallId", "toolName"] } },
    { if: { properties: { kind: { const: "result" } } }, then: { required: ["result"] } },
    { if: { properties: { kind: { const: "error" } } }, then: { required: ["error"] } },
    { if: { properties: { kind: { const: "batch" } } }, then: { required: ["toolCallIds"] } },
  ],
};

export const turnStartedSchema: Schema = {
  type: "object",
  properties: { turnNumber: { type: "number" }, inputId: str, inputSource: str },
};

export const turnCompletedSchema: Schema = {
  type: "object",
  required: ["resultType"],
  properties: { resultType: nonEmpty, response: str, inputId: str, usage: obj },
};

export const turnFailedSchema: Schema = {
  type: "object",
  required: ["error"],
  properties: { error: toolError, turnPhase: str, inputId: str },
};

export const titleUpdatedSchema: Schema = {
  type: "object",
  required: ["title"],
  properties: { title: str, previousTitle: str, source: str },
};

/** Inner session.event types with a payload schema, keyed by type. */
export const payloadSchemas: Record<string, Schema> = {
  "model.streaming": modelStreamingSchema,
  "tool.updated": toolUpdatedSchema,
  "turn.started": turnStartedSchema,
  "turn.completed": turnCompletedSchema,
  "turn.failed": turnFailedSchema,
  "session.titleUpdated": titleUpdatedSchema,
};
