/**
 * JSON Schemas (ajv, draft-07) of the host's dynamic session events (docs/zcode-host.md §5) and of
 * the parts of the session snapshot the bridge reads (§7). Objects allow extra properties
 * (the host adds fields over time); what the bridge relies on is required and typed.
 * Each schema is a constant (`as const`): ./native-types.ts derives the TypeScript types from
 * them (adr/0014-one-validation-stack.md), so a schema and its type cannot disagree.
 */
import type { JSONSchema } from "json-schema-to-ts";

export const MODEL_STREAMING_KINDS = [
  "start",
  "finish",
  "error",
  "text_start",
  "text_delta",
  "text_end",
  "reasoning_start",
  "reasoning_delta",
  "reasoning_end",
  "tool_input_start",
  "tool_input_delta",
  "tool_input_end",
  "tool_call",
] as const;

export const TOOL_UPDATED_KINDS = ["scheduled", "started", "progress", "result", "error", "batch", "raw"] as const;

export const str = { type: "string" } as const;
export const nonEmpty = { type: "string", minLength: 1 } as const;
const obj = { type: "object" } as const;
const count = { type: "integer", minimum: 0 } as const;

/**
 * Fields the bridge reads but the schemas do not check: any value passes, as it always has; the
 * `$comment` only gives the field its TypeScript type (./schema-type.ts), the host's documented
 * one. Checking such a field is a change of behaviour (such events are then refused): give it a
 * real schema on purpose, not by accident.
 */
export const unchecked = {
  string: { $comment: "unchecked: string" },
  number: { $comment: "unchecked: number" },
  boolean: { $comment: "unchecked: boolean" },
  /** any value, typed as an object of unknown fields */
  object: { $comment: "unchecked: object" },
  /** any value, typed `unknown` */
  value: {},
} as const;

const modelRef = {
  type: "object",
  required: ["providerId", "modelId"],
  properties: { providerId: nonEmpty, modelId: nonEmpty, variant: { type: ["string", "null"] } },
} as const satisfies JSONSchema;

export const snapshotSchema = {
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
            defaultLevel: unchecked.string,
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
    projection: unchecked.object,
    runtime: {
      type: "object",
      properties: {
        eventSeq: count,
        activeTurnId: { type: ["string", "null"] },
        /** V4 only: ZCode holds its input queue (`queue.autoDrain` false: after a stop, or a compaction that failed or was stopped) */
        queueHeld: { type: "boolean" },
        /** V4 only: why ZCode holds it (`queue.pauseReason`: stopped, manual, error; adr/0038) */
        queuePauseReason: { type: "string", maxLength: 64 },
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
} as const satisfies JSONSchema;

export const sessionEventEnvelopeSchema = {
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
} as const satisfies JSONSchema;

// ---- the 7 top-level event types (§5.2); `type` is the key they were looked up by ----

export const snapshotEventSchema = {
  type: "object",
  required: ["type", "snapshot"],
  properties: { type: { const: "snapshot" }, snapshot: snapshotSchema },
} as const satisfies JSONSchema;

export const stateUpdatedEventSchema = {
  type: "object",
  required: ["type", "notification"],
  properties: {
    type: { const: "state.updated" },
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
} as const satisfies JSONSchema;

/** a reverse request of the host; `request` is parsed by the interaction broker (./request-schemas.ts) */
const requestEventSchema = <T extends string>(type: T) =>
  ({ type: "object", required: ["type", "request"], properties: { type: { const: type }, request: obj } }) as const satisfies JSONSchema;

export const permissionRequestEventSchema = requestEventSchema("permission.request");
export const userInputRequestEventSchema = requestEventSchema("userInput.request");
export const providerHeadersRequestEventSchema = requestEventSchema("providerRuntimeHeaders.request");

export const userInputResponseEventSchema = {
  type: "object",
  required: ["type", "requestId", "response"],
  properties: { type: { const: "userInput.response" }, requestId: nonEmpty, response: unchecked.value },
} as const satisfies JSONSchema;

export const sessionEventSchema = {
  type: "object",
  required: ["type", "event"],
  properties: { type: { const: "session.event" }, event: sessionEventEnvelopeSchema },
} as const satisfies JSONSchema;

// ---- payloads of the inner types the bridge translates (§5.5–5.8) ----

const toolCallIdRequired = { required: ["toolCallId"], properties: { toolCallId: nonEmpty } } as const;

export const modelStreamingSchema = {
  type: "object",
  required: ["kind"],
  properties: {
    kind: { enum: MODEL_STREAMING_KINDS },
    assistantMessageId: str,
    partId: str,
    delta: str,
    done: unchecked.boolean,
    input: unchecked.value,
    toolCallId: nonEmpty,
    toolName: nonEmpty,
    providerExecuted: unchecked.boolean,
  },
  allOf: [
    { if: { properties: { kind: { enum: ["text_delta", "reasoning_delta"] } } }, then: { required: ["delta"] } },
    { if: { properties: { kind: { const: "tool_input_start" } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "tool_input_delta" } } }, then: { required: ["toolCallId", "delta"] } },
    { if: { properties: { kind: { const: "tool_input_end" } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "tool_call" } } }, then: { required: ["toolCallId", "toolName"] } },
  ],
} as const satisfies JSONSchema;

const toolError = {
  type: "object",
  required: ["message"],
  properties: { type: str, message: str, code: unchecked.value, detail: unchecked.value },
} as const satisfies JSONSchema;

export const toolUpdatedSchema = {
  type: "object",
  required: ["kind"],
  properties: {
    kind: { enum: TOOL_UPDATED_KINDS },
    toolCallId: nonEmpty,
    toolName: nonEmpty,
    parentToolCallId: unchecked.string,
    source: unchecked.string,
    childSessionId: unchecked.string,
    // ZCode's mirror of a subagent's tool (docs/zcode-host.md §6.1): its own id in the child, who ran it, backgrounded
    childToolCallId: unchecked.string,
    agentId: unchecked.string,
    agentType: unchecked.string,
    background: unchecked.boolean,
    description: unchecked.string,
    input: unchecked.value,
    inputOmitted: { type: "boolean" },
    // progress (Bash)
    elapsedMs: unchecked.number,
    outputPreview: str,
    stdoutTail: str,
    stderrTail: str,
    // result / error
    result: unchecked.value,
    duration: unchecked.number,
    error: toolError,
    // batch
    toolCallIds: { type: "array", items: nonEmpty },
  },
  allOf: [
    { if: { properties: { kind: { enum: ["started", "progress", "result", "error"] } } }, then: toolCallIdRequired },
    { if: { properties: { kind: { const: "scheduled" } } }, then: { required: ["toolCallId", "toolName"] } },
    { if: { properties: { kind: { const: "result" } } }, then: { required: ["result"] } },
    { if: { properties: { kind: { const: "error" } } }, then: { required: ["error"] } },
    { if: { properties: { kind: { const: "batch" } } }, then: { required: ["toolCallIds"] } },
  ],
} as const satisfies JSONSchema;

/**
 * The bridge's own event for a V4 `subagent` row of the parent (src/native/v4-read/projection.ts;
 * no legacy stream sends it): the child it names, ZCode's status and summary, and the background
 * work that cancels it while ZCode lists that work `cancellable`.
 */
export const subagentUpdatedSchema = {
  type: "object",
  required: ["childSessionId", "status"],
  properties: {
    childSessionId: nonEmpty,
    status: { enum: ["running", "success", "failed", "cancelled"] },
    parentToolCallId: str,
    subagentType: str,
    summaryText: str,
    backgrounded: { type: "boolean" },
    cancellableWorkId: str,
  },
} as const satisfies JSONSchema;

export const turnStartedSchema = {
  type: "object",
  properties: { turnNumber: { type: "number" }, input: unchecked.value, inputId: str, inputSource: str },
} as const satisfies JSONSchema;

/** ZCode injected guided inputs into its running turn (ZCode's `zcodeTurnSteerDrainedEventPayloadSchema`; the bridge reads the ids) */
export const turnSteerDrainedSchema = {
  type: "object",
  required: ["pendingInputIds"],
  properties: {
    pendingInputIds: { type: "array", items: str },
    queryIds: { type: "array", items: str },
    targetTurnId: str,
  },
} as const satisfies JSONSchema;

export const turnCompletedSchema = {
  type: "object",
  required: ["resultType"],
  properties: {
    resultType: nonEmpty,
    response: str,
    tokenCount: unchecked.number,
    toolCallCount: unchecked.number,
    duration: unchecked.number,
    inputId: str,
    usage: obj,
  },
} as const satisfies JSONSchema;

export const turnFailedSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message"],
      properties: { ...toolError.properties, underlyingErrorMessage: unchecked.string },
    },
    turnPhase: str,
    inputId: str,
  },
} as const satisfies JSONSchema;

export const titleUpdatedSchema = {
  type: "object",
  required: ["title"],
  properties: { title: str, previousTitle: str, source: str },
} as const satisfies JSONSchema;
