/**
 * ZCode's legacy session protocol (the `session.event` stream of `onDynamicSessionEvent`), as strict
 * zod schemas.
 *
 * Source: `jimpablo/ZCode@aac47556` (ZCode 3.15.1, Apache-2.0):
 * - `packages/shared/src/zcode-protocol/index.ts` (stored copy: read_file id 68309550697):
 *   `zcodeEventEnvelopeSchema`, `zcodeSessionEventSchema` and every payload schema,
 *   `zcodeStateUpdatedNotificationSchema`, `zcodeSessionSubagentsResultSchema`;
 * - `packages/shared/src/zcode-protocol-legacy-types.ts` (id 70491098542): message parts, tool
 *   states, the interaction origin, permission responses, context usage.
 * Transcribed shapes, not copied code. ZCode declares these `.strict()`: its consumers drop an event
 * with a key they do not know, so a key outside these shapes is a key ZCode never sends. Where a
 * shape is not transcribed (tool-result display kinds, bounded execution previews) it is checked as
 * "any object" and says so. Updating for a new release: adr/0035.
 */
import { z } from "zod";
import { jsonObject, modelSelection, nonEmpty, timestampMs } from "./common.js";

// ── legacy-types ──

export const deliveryKind = z.enum(["desktop-continuous", "web-remote-replayable"]);
export const messageVisibility = z.enum(["user-visible", "model-only"]);
/** `zcodeSyntheticUserMessageSourceSchema`: also the `turn.started.inputSource` vocabulary */
export const syntheticUserMessageSource = z.enum([
  "agent_listing_delta",
  "background_task",
  "fork",
  "goal_state_change",
  "goal-continuation",
  "plugin_reference",
  "bot_topic_context",
  "rewind",
  "selection_side_chat",
  "subagent",
  "subagent_message",
  "todo_reminder",
  "workflow_launch",
  "shared_context",
]);
export const workspaceRef = z.strictObject({
  workspacePath: nonEmpty,
  workspaceIdentity: nonEmpty.optional(),
  remoteSessionId: nonEmpty.optional(),
  workspaceKey: nonEmpty,
});
export const permissionDecision = z.enum(["allow", "deny", "escalate", "modify"]);
export const permissionUpdate = z.strictObject({
  type: z.literal("addRules"),
  behavior: z.enum(["allow", "deny", "ask"]),
  rules: z.array(z.strictObject({ toolName: nonEmpty, ruleContent: z.string().optional() })).min(1),
});
export const permissionResponse = z.strictObject({
  decision: permissionDecision,
  reason: z.string().optional(),
  modifiedInput: z.unknown().optional(),
  permissionUpdates: z.array(permissionUpdate).optional(),
});
export const sessionMode = z.enum(["plan", "build", "edit", "yolo", "guarded", "auto"]);

/** `zcodeInteractionRequestOriginSchema`: who raised a permission or question (legacy and V4). */
export const interactionOrigin = z.strictObject({
  kind: z.literal("subagent"),
  agentId: nonEmpty,
  agentType: nonEmpty,
  childSessionId: nonEmpty,
  childTurnId: nonEmpty.optional(),
  description: z.string().optional(),
  parentSessionId: nonEmpty,
  parentToolCallId: nonEmpty.optional(),
  parentTurnId: nonEmpty.optional(),
});

const tokenUsage = z.strictObject({
  total: z.number().int().nonnegative().optional(),
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  reasoning: z.number().int().nonnegative(),
  cache: z.strictObject({ read: z.number().int().nonnegative(), write: z.number().int().nonnegative() }),
});

export const toolState = z.discriminatedUnion("status", [
  z.strictObject({ status: z.literal("pending"), input: jsonObject, raw: z.string() }),
  z.strictObject({
    status: z.literal("running"),
    input: jsonObject,
    title: z.string().optional(),
    metadata: jsonObject.optional(),
    startedAt: timestampMs,
  }),
  z.strictObject({
    status: z.literal("completed"),
    input: jsonObject,
    output: z.string(),
    title: z.string(),
    metadata: jsonObject,
    startedAt: timestampMs,
    completedAt: timestampMs,
  }),
  z.strictObject({
    status: z.literal("error"),
    input: jsonObject,
    error: z.string(),
    metadata: jsonObject.optional(),
    startedAt: timestampMs,
    completedAt: timestampMs,
  }),
]);

const partBase = { partId: nonEmpty, sessionId: nonEmpty, messageId: nonEmpty };
const timelineModel = z.looseObject({ label: z.string().optional() });

export const timelinePart = z.strictObject({
  ...partBase,
  type: z.literal("timeline"),
  timelineType: z.enum(["context_compaction", "goal_verification", "session_fork", "model_change"]),
  display: z.enum(["separator", "worklog"]),
  status: z.string().optional(),
  anchorMessageId: nonEmpty.optional(),
  anchorTurnId: nonEmpty.optional(),
  time: z.strictObject({ start: timestampMs.optional(), end: timestampMs.optional() }).optional(),
  operationId: z.string().optional(),
  trigger: z.enum(["manual", "auto", "partial", "reactive", "session_memory"]).optional(),
  phase: z.enum(["standalone_turn", "pre_request", "mid_turn", "reactive"]).optional(),
  compactReason: z.string().optional(),
  boundaryId: z.string().optional(),
  summaryMessageId: nonEmpty.optional(),
  preCompactTokenCount: z.number().int().nonnegative().optional(),
  postCompactTokenCount: z.number().int().nonnegative().optional(),
  truePostCompactTokenCount: z.number().int().nonnegative().optional(),
  attempt: z.number().int().nonnegative().optional(),
  maxAttempts: z.number().int().nonnegative().optional(),
  reason: z.string().optional(),
  targetId: z.string().optional(),
  verificationId: z.string().optional(),
  goalIteration: z.number().int().nonnegative().optional(),
  verification: z.strictObject({ passed: z.boolean(), reason: z.string(), nextAction: z.string().nullable().optional() }).optional(),
  parentSessionId: nonEmpty.optional(),
  targetMessageId: nonEmpty.optional(),
  targetCheckpointId: z.string().optional(),
  restoredFileCount: z.number().int().nonnegative().optional(),
  fromModel: timelineModel.optional(),
  toModel: timelineModel.optional(),
});

export const messagePart = z.discriminatedUnion("type", [
  z.strictObject({
    ...partBase,
    type: z.literal("text"),
    text: z.string(),
    synthetic: z.boolean().optional(),
    ignored: z.boolean().optional(),
    metadata: jsonObject.optional(),
  }),
  z.strictObject({ ...partBase, type: z.literal("reasoning"), text: z.string(), metadata: jsonObject.optional() }),
  z.strictObject({
    ...partBase,
    type: z.literal("file"),
    mime: nonEmpty,
    filename: z.string().optional(),
    url: nonEmpty,
    metadata: jsonObject.optional(),
  }),
  z.strictObject({
    ...partBase,
    type: z.literal("tool"),
    callId: nonEmpty,
    tool: nonEmpty,
    state: toolState,
    metadata: jsonObject.optional(),
  }),
  z.strictObject({ ...partBase, type: z.literal("step-start"), snapshot: z.string().optional() }),
  z.strictObject({
    ...partBase,
    type: z.literal("step-finish"),
    reason: z.string(),
    snapshot: z.string().optional(),
    cost: z.number().nonnegative(),
    tokens: tokenUsage,
  }),
  z.strictObject({ ...partBase, type: z.literal("snapshot"), snapshot: z.string() }),
  z.strictObject({ ...partBase, type: z.literal("patch"), hash: nonEmpty, files: z.array(z.string()) }),
  z.strictObject({
    ...partBase,
    type: z.literal("compaction"),
    auto: z.boolean(),
    reason: z.string().optional(),
    summaryMessageId: nonEmpty.optional(),
    metadata: jsonObject.optional(),
  }),
  timelinePart,
  z.strictObject({
    ...partBase,
    type: z.literal("subagent"),
    prompt: z.string(),
    description: z.string(),
    agent: nonEmpty,
    model: modelSelection.optional(),
    command: z.string().optional(),
  }),
  z.strictObject({ ...partBase, type: z.literal("agent"), name: nonEmpty }),
  z.strictObject({ ...partBase, type: z.literal("retry"), attempt: z.number().int().nonnegative(), error: jsonObject }),
]);

export const contextCacheUsage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
  latestHitRate: z.number().nonnegative().nullable().optional(),
  hitRateRequestCount: z.number().int().nonnegative().optional(),
  totalInputTokens: z.number().int().nonnegative().optional(),
  totalCacheReadTokens: z.number().int().nonnegative().optional(),
  totalCacheWriteTokens: z.number().int().nonnegative().optional(),
  hitRate: z.number().nonnegative().nullable(),
});
export const contextBreakdown = z.array(
  z.strictObject({
    source: z.enum(["system_prompt", "meta_user_context", "skills", "tool_prompt", "system_tool_schemas", "mcp_tool_schemas", "messages"]),
    chars: z.number().int().nonnegative(),
  }),
);
/** `zcodeSessionContextUsageSchema`: the legacy session's context usage (`used`/`size`, as ACP). */
export const sessionContextUsage = z.strictObject({
  used: z.number().int().nonnegative(),
  size: z.number().int().positive(),
  cost: z.strictObject({ amount: z.number().nonnegative(), currency: nonEmpty }).nullable().optional(),
  cache: contextCacheUsage.optional(),
  breakdown: contextBreakdown.optional(),
});

// ── index.ts: event payloads ──

const errorDetail = z.strictObject({
  type: nonEmpty,
  message: nonEmpty,
  stack: z.string().optional(),
  code: z.string().optional(),
  detail: z.string().optional(),
  underlyingErrorMessage: z.string().optional(),
  underlyingErrorDetail: z.string().optional(),
  attribution: jsonObject.optional(), // `errorAttributionSchema` (V4 snapshot.ts); checked as an object only
  retryable: z.boolean().optional(),
  data: z.unknown().optional(),
});
const permissionOption = z.strictObject({
  optionId: nonEmpty,
  kind: nonEmpty,
  name: nonEmpty,
  description: z.string().optional(),
  response: permissionResponse,
});
const steerDelivery = z.enum(["queue", "guide"]);

/** The tool-call fields every `tool.updated` kind but `batch` shares, with the subagent mirror's. */
const toolCallBase = {
  toolCallId: nonEmpty,
  toolName: z.string().optional(),
  parentToolCallId: nonEmpty.optional(),
  source: z.enum(["subagent"]).optional(),
  agentId: nonEmpty.optional(),
  agentType: nonEmpty.optional(),
  background: z.boolean().optional(),
  childSessionId: nonEmpty.optional(),
  childToolCallId: nonEmpty.optional(),
  description: z.string().optional(),
};

/**
 * A tool result is any object; ZCode checks `result.display` only for three kinds
 * (`node_repl_images`, `create_workflow`, `bash_output`), whose shapes are not transcribed here
 * (the simulator sends none of them).
 */
const toolResult = jsonObject;

export const toolUpdatedPayload = z.discriminatedUnion("kind", [
  z.strictObject({
    ...toolCallBase,
    kind: z.literal("scheduled"),
    assistantMessageId: nonEmpty.optional(),
    toolName: nonEmpty,
    input: z.unknown().optional(),
    inputByteLength: z.number().int().nonnegative().optional(),
    inputOmitted: z.boolean().optional(),
    inputRef: z.literal("model_stream").optional(),
    dependencies: z.array(nonEmpty).optional(),
    parallelGroupIndex: z.number().int().nonnegative().optional(),
    canRunParallel: z.boolean().optional(),
    schedule: jsonObject.optional(),
  }),
  z.strictObject({
    ...toolCallBase,
    kind: z.literal("started"),
    startedAt: z.union([timestampMs, nonEmpty]), // ZCode also takes a Date, which never crosses a wire
  }),
  z.strictObject({
    ...toolCallBase,
    kind: z.literal("progress"),
    elapsedMs: z.number().nonnegative().optional(),
    pid: z.number().int().optional(),
    stdoutBytes: z.number().int().nonnegative().optional(),
    stderrBytes: z.number().int().nonnegative().optional(),
    outputBytes: z.number().int().nonnegative().optional(),
    outputPreview: jsonObject.optional(), // `executionOutputPreviewSchema`: not transcribed
    stdoutTail: z.string().optional(),
    stderrTail: z.string().optional(),
  }),
  z.strictObject({ ...toolCallBase, kind: z.literal("result"), result: toolResult, duration: z.number().nonnegative() }),
  z.strictObject({ ...toolCallBase, kind: z.literal("error"), error: errorDetail }),
  z.strictObject({
    kind: z.literal("batch"),
    toolCallIds: z.array(nonEmpty),
    successCount: z.number().int().nonnegative(),
    errorCount: z.number().int().nonnegative(),
  }),
  z.strictObject({ ...toolCallBase, kind: z.literal("raw"), payload: jsonObject }),
]);

const payloads = {
  "session.created": z.strictObject({ mode: sessionMode, contextWindow: z.number().int().nonnegative() }),
  "session.resumed": z.strictObject({
    directory: nonEmpty,
    interruptedToolCount: z.number().int().nonnegative(),
    messageCount: z.number().int().nonnegative(),
    partCount: z.number().int().nonnegative(),
    recoveredCompactTimelineCount: z.number().int().nonnegative().optional(),
    recoveredSteerInputCount: z.number().int().nonnegative().optional(),
    resumedTodoCount: z.number().int().nonnegative().optional(),
  }),
  /**
   * Any object in ZCode's event union. One key is checked further [inferred, not in the union]: a
   * `contextUsage` is the session's context usage, which ZCode types as `zcodeSessionContextUsageSchema`.
   */
  "session.updated": z.looseObject({ contextUsage: sessionContextUsage.optional() }),
  "session.titleUpdated": z.strictObject({
    messageID: nonEmpty.optional(),
    previousTitle: z.string(),
    source: z.enum(["default", "first_input", "generated", "custom"]),
    title: z.string(),
  }),
  "session.closed": z.strictObject({ reason: z.string().optional() }),
  "turn.started": z.strictObject({
    turnNumber: z.number().int().nonnegative(),
    input: z.string(),
    inputId: nonEmpty.optional(),
    queryId: nonEmpty.optional(),
    inputSource: syntheticUserMessageSource.optional(),
    inputVisibility: messageVisibility.optional(),
    executionKind: z.enum(["agent", "controlOnly"]).optional(),
    targetId: nonEmpty.optional(),
    messageId: nonEmpty.optional(),
    foregroundExecutionId: nonEmpty.optional(),
    intent: jsonObject.optional(),
    originMeta: jsonObject.optional(),
    backgroundSource: z.enum(["bash", "subagent"]).optional(),
    attachments: z.array(jsonObject).optional(),
  }),
  "turn.steerQueued": z.strictObject({
    pendingInputId: nonEmpty,
    inputId: nonEmpty.optional(),
    queryId: nonEmpty.optional(),
    input: z.string(),
    inputPreview: z.string(),
    inputSize: z.number().int().nonnegative(),
    commandKind: z.enum(["sendText", "sendGoalCommand", "compact"]).optional(),
    source: z.enum(["plan_approval_feedback", "workflow_refine_feedback"]).optional(),
    toolDisallowlist: z.array(nonEmpty).optional(),
    delivery: steerDelivery.optional(),
    targetTurnId: nonEmpty,
    queueLength: z.number().int().nonnegative(),
    intent: jsonObject.optional(),
  }),
  "turn.steerDrained": z.strictObject({
    pendingInputIds: z.array(nonEmpty),
    queryIds: z.array(nonEmpty).optional(),
    targetTurnId: nonEmpty,
    injectedMessageIds: z.array(nonEmpty),
    drainedInputs: z
      .array(
        z.strictObject({
          pendingInputId: nonEmpty,
          messageId: nonEmpty,
          text: z.string(),
          delivery: steerDelivery.optional(),
          intent: jsonObject.optional(),
          toolDisallowlist: z.array(nonEmpty).optional(),
        }),
      )
      .optional(),
  }),
  "turn.completed": z.strictObject({
    response: z.string(),
    tokenCount: z.number().int().nonnegative(),
    usage: z.unknown().optional(),
    toolCallCount: z.number().int().nonnegative(),
    historyRoundCount: z.number().int().nonnegative().optional(),
    duration: z.number().nonnegative(),
    cacheStats: z
      .strictObject({
        totalMessages: z.number().int().nonnegative(),
        cachedMessages: z.number().int().nonnegative(),
        lastCacheHit: z.boolean(),
        cacheReadTokens: z.number().int().nonnegative().optional(),
      })
      .optional(),
    inputId: nonEmpty.optional(),
    resultType: z.enum(["success", "cancelled", "error_max_turns", "error_max_budget", "error_during_execution", "error_max_tool_calls"]),
    backgroundSubagentResultConsumed: z.boolean().optional(),
  }),
  "turn.failed": z.strictObject({
    error: errorDetail,
    turnPhase: z.string(),
    inputId: nonEmpty.optional(),
    backgroundSubagentResultConsumed: z.boolean().optional(),
  }),
  "message.upserted": z.strictObject({
    content: z.string(),
    attachments: z.array(z.unknown()).optional(),
    toolCalls: z.array(z.unknown()).optional(),
    type: z.string().optional(),
    compactBoundary: z.unknown().optional(),
  }),
  "message.removed": z.strictObject({ messageId: nonEmpty, reason: z.string().optional() }),
  "part.started": z.strictObject({ part: messagePart }),
  "part.delta": z.strictObject({
    messageId: nonEmpty,
    partId: nonEmpty,
    field: z.enum(["text", "reasoning", "input", "output"]).optional(),
    delta: z.string(),
  }),
  "part.upserted": z.strictObject({ part: messagePart }),
  "part.removed": z.strictObject({ messageId: nonEmpty, partId: nonEmpty, reason: z.string().optional() }),
  "model.streaming": z.strictObject({
    assistantMessageId: z.string().optional(),
    delta: z.string().optional(),
    done: z.boolean().optional(),
    input: z.unknown().optional(),
    kind: z.enum([
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
    ]),
    partId: z.string().optional(),
    providerExecuted: z.boolean().optional(),
    toolCallId: z.string().optional(),
    toolName: z.string().optional(),
  }),
  "tool.updated": toolUpdatedPayload,
  "permission.requested": z.strictObject({
    requestId: nonEmpty.optional(),
    toolCallId: nonEmpty,
    toolName: nonEmpty,
    riskLevel: z.enum(["low", "medium", "high", "critical"]),
    reason: z.string(),
    input: z.unknown(),
    suggestedPermissionUpdates: z.array(permissionUpdate).optional(),
    origin: interactionOrigin.optional(),
    options: z.array(permissionOption).min(1),
    childSessionId: nonEmpty.optional(),
    background: z.boolean().optional(),
  }),
  "permission.resolved": z.strictObject({
    requestId: nonEmpty.optional(),
    toolCallId: nonEmpty,
    toolName: nonEmpty.optional(),
    decision: permissionDecision.optional(),
    reason: z.string().optional(),
    modifiedInput: z.unknown().optional(),
    inputSummary: z.unknown().optional(),
    childSessionId: nonEmpty.optional(),
    background: z.boolean().optional(),
  }),
  "userInput.requested": z.strictObject({
    requestId: nonEmpty,
    prompt: z.string(),
    inputType: z.enum(["text", "choice", "confirm"]).optional(),
    choices: z.array(z.string()).optional(),
  }),
  "userInput.resolved": z.strictObject({ requestId: nonEmpty, value: z.unknown().optional(), cancelled: z.boolean().optional() }),
  "checkpoint.created": jsonObject,
  "rewind.triggered": jsonObject,
  "streamRecovery.updated": jsonObject,
} as const;

type EventType = keyof typeof payloads;

const envelopeFields = {
  eventId: nonEmpty,
  sessionId: nonEmpty,
  turnId: nonEmpty.optional(),
  seq: z.number().int().nonnegative(),
  traceId: nonEmpty.optional(),
  timestamp: timestampMs,
  deliveryKind: deliveryKind.optional(),
};

function envelopeOf<T extends EventType>(type: T) {
  return z.strictObject({ ...envelopeFields, type: z.literal(type), payload: payloads[type].optional() });
}

const eventTypes = Object.keys(payloads) as EventType[];

/** `zcodeSessionEventSchema`: one `session.event` envelope, discriminated by `type`. */
export const sessionEvent = z.discriminatedUnion(
  "type",
  eventTypes.map((type) => envelopeOf(type)) as unknown as [ReturnType<typeof envelopeOf>, ...ReturnType<typeof envelopeOf>[]],
);

/** `zcodeStateUpdatedNotificationSchema`: a legacy `state.updated` notice. */
export const stateUpdatedNotification = z.strictObject({
  type: z.literal("state.updated"),
  scope: z.enum(["server", "workspace", "session"]),
  workspace: workspaceRef.optional(),
  sessionId: nonEmpty.optional(),
  revision: z.number().int().nonnegative(),
  reason: z.string().optional(),
  patch: z.unknown(),
});

// ── the subagent directory (`session/subagents`, host `listSessionSubagents`) ──

const subagentEntry = {
  childSessionId: nonEmpty,
  agentId: nonEmpty.optional(),
  toolCallId: nonEmpty.optional(),
  subagentType: nonEmpty,
  title: nonEmpty,
  summary: z.string().optional(),
  startedAt: timestampMs.optional(),
  endedAt: timestampMs.optional(),
};
/** `zcodeSessionSubagentsResultSchema` */
export const subagentsResult = z.strictObject({
  revision: z.number().int().nonnegative(),
  childSessionIds: z.array(nonEmpty),
  running: z.array(z.strictObject({ ...subagentEntry, status: z.enum(["running", "waiting", "blocked"]) })),
  ended: z.strictObject({
    total: z.number().int().nonnegative(),
    items: z.array(z.strictObject({ ...subagentEntry, status: z.enum(["success", "failed", "cancelled", "lost"]) })),
    nextCursor: nonEmpty.optional(),
  }),
});
