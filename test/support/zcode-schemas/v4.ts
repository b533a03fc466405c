/**
 * ZCode's V4 conversation protocol (rows, snapshot and A zone, deltas, logical frames, command acks),
 * as zod schemas.
 *
 * Source: `jimpablo/ZCode@aac47556` (ZCode 3.15.1, Apache-2.0), `packages/shared/src/zcode-protocol-v4/`:
 * `rows.ts` (read_file id 70781229886), `snapshot.ts` (id 70859857478), `delta.ts` (id 70725614984),
 * `transport.ts` (id 70184318669: logical frame, subscribe ack), `wire.ts` (physical envelope; the J copy is
 * not in the index, this follows stored copy id 70084440970), `command.ts` (id 70324444891: ack and
 * result), `input-intent.ts` (id 70662258368: queue items), `toolDisplay.ts` (id 70781198643),
 * `core.ts` (timestamps, streamable paths), `session-config.ts` (the config key; the J copy is not
 * in the index, this follows the nearest stored copy, id 68646811432). Transcribed shapes, not copied code.
 *
 * One deliberate difference: ZCode declares most V4 objects with plain `z.object`, which drops a
 * key it does not know instead of refusing it. The CLI builds these frames from the same types, so
 * a key outside them is a key ZCode never sends: we check every V4 object strictly (`strictObject`),
 * to catch a simulator that invents one. Where ZCode itself is strict we are too.
 * Not transcribed (checked as "any object" or "anything", and said so at the field): tool display
 * kinds (ZCode drops a display it cannot parse: `.catch(undefined)`), workflow runs, shared-context
 * import, workspace hook review, model selections, the model transition. Updating: adr/0035.
 */
import { z } from "zod";
import { jsonObject, modelSelection, v4Timestamp } from "./common.js";
import { contextBreakdown, contextCacheUsage, interactionOrigin, permissionResponse } from "./legacy.js";

// ── rows.ts ──

const rowBase = {
  rowId: z.number(),
  turnId: z.string(),
  entityId: z.string().min(1).optional(),
  productTurnId: z.string().min(1).optional(),
  visibility: z.literal("visible").optional(),
  createdAt: v4Timestamp,
  createdAtSeq: z.number(),
  actions: z
    .strictObject({
      canFork: z.literal(true).optional(),
      canEdit: z.literal(true).optional(),
      canRetry: z.literal(true).optional(),
      canRewindFiles: z.literal(true).optional(),
      editDisposition: z.enum(["rewind", "fork"]).optional(),
    })
    .optional(),
};

const workSegment = z.strictObject({
  segmentId: z.string().min(1),
  triggerEntityId: z.string().min(1).optional(),
  startedAt: v4Timestamp,
  endedAt: v4Timestamp.optional(),
  activeMs: z.number().nonnegative().optional(),
});

export const turnHeaderRow = z.strictObject({
  ...rowBase,
  kind: z.literal("turnHeader"),
  origin: z.enum(["userInput", "backgroundResult", "goalContinuation", "editRerun", "workflowLaunch"]),
  executionKind: z.enum(["agent", "controlOnly"]).optional(),
  sourceCommandId: z.string().optional(),
  historyRoundCount: z.number().int().nonnegative().optional(),
  state: z.enum(["running", "completedSuccess", "completedInterrupted", "failed"]),
  startedAt: v4Timestamp,
  endedAt: v4Timestamp.optional(),
  activeMs: z.number().optional(),
  outputTokens: z.number().int().nonnegative().optional(),
  modelDurationMs: z.number().nonnegative().optional(),
  toolDurationMs: z.number().nonnegative().optional(),
  otherDurationMs: z.number().nonnegative().optional(),
  workSegments: z.array(workSegment).optional(),
  originMeta: jsonObject.optional(), // backgroundResultOriginMetaSchema: not transcribed
  workflowLaunch: jsonObject.optional(), // workflowLaunchMetaSchema: not transcribed
  fileChanges: z
    .strictObject({
      additions: z.number(),
      deletions: z.number(),
      files: z.number(),
      state: z.enum(["active", "reverted"]).optional(),
    })
    .optional(),
});

export const attachmentRef = jsonObject; // attachment-ref.ts: not transcribed

export const userInputRow = z.strictObject({
  ...rowBase,
  kind: z.literal("userInput"),
  inputOrigin: z.enum(["desktop", "mobile"]).optional(),
  botGroupSource: z.unknown().optional(), // bots.ts: not transcribed
  conversationQuotes: z.unknown().optional(), // conversationSelection.ts: not transcribed
  text: z.string(),
  epilogueStart: z.number().int().nonnegative().optional(),
  origin: z.enum(["realUser", "backgroundResult", "goalContinuation", "mailbox", "synthetic", "workflowLaunch"]),
  originMeta: z
    .strictObject({
      backgroundSource: z.enum(["bash", "subagent", "workflow"]).optional(),
      workId: z.string().optional(),
      senderSessionId: z.string().optional(),
      senderLabel: z.string().optional(),
    })
    .optional(),
  workflowLaunch: jsonObject.optional(),
  guided: z.literal(true).optional(),
  sourceCommandId: z.string().optional(),
  rootSourceCommandId: z.string().optional(),
  clientId: z.string().optional(),
  highspeed: z.unknown().optional(), // highspeed.ts: not transcribed
  attachments: z.array(attachmentRef).optional(),
  source: jsonObject.optional(), // conversationInputSourceSchema: not transcribed
});

export const assistantTextRow = z.strictObject({
  ...rowBase,
  kind: z.literal("assistantText"),
  assistantResponseId: z.string().min(1).optional(),
  text: z.string(),
  state: z.enum(["streaming", "complete", "interrupted", "failed"]),
  model: z.string().optional(),
  feedback: z.enum(["like", "dislike"]).optional(),
});

export const reasoningRow = z.strictObject({
  ...rowBase,
  kind: z.literal("reasoning"),
  assistantResponseId: z.string().min(1).optional(),
  text: z.string(),
  state: z.enum(["streaming", "complete", "interrupted"]),
  durationMs: z.number().optional(),
});

/** `toolDisplay.ts` `toolOutputSchema`; `display` is any object (ZCode drops one it cannot parse). */
const toolOutput = z.strictObject({
  text: z.string(),
  display: z.unknown().optional(),
  truncated: z.strictObject({ totalBytes: z.number(), ref: z.string() }).optional(),
});
const toolProgress = z.strictObject({
  bytes: z.number().optional(),
  previewLine: z.string().optional(),
  fraction: z.number().min(0).max(1).optional(),
  total: z.number().optional(),
  message: z.string().max(200).optional(),
  updatedAt: v4Timestamp,
});

export const toolCallRow = z.strictObject({
  ...rowBase,
  kind: z.literal("toolCall"),
  assistantResponseId: z.string().min(1).optional(),
  toolCallId: z.string(),
  toolName: z.string(),
  status: z.enum(["inputStreaming", "pendingApproval", "running", "success", "error", "cancelled"]),
  inputText: z.string(),
  input: z.unknown().optional(),
  cuaApp: z
    .strictObject({ pid: z.number().int().positive(), name: z.string().trim().min(1).max(256), bundleId: z.string().optional() })
    .optional(),
  output: toolOutput.optional(),
  display: z.unknown().optional(), // `.catch(undefined)` in ZCode: never refuses the row
  error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
  progress: toolProgress.optional(),
  outputPreview: jsonObject.optional(), // executionOutputPreviewSchema: not transcribed
  approvalInteractionId: z.string().optional(),
  backgrounded: z.literal(true).optional(),
  workId: z.string().optional(),
  startedAt: v4Timestamp.optional(),
  endedAt: v4Timestamp.optional(),
});

export const artifactRow = z.strictObject({
  ...rowBase,
  kind: z.literal("artifact"),
  artifactVersionId: z.string().trim().min(1),
  logicalArtifactKey: z.string().trim().min(1),
  displayName: z.string().trim().min(1),
  artifactType: z.enum(["pdf", "pptx", "docx", "xlsx", "image", "html", "md", "text"]),
  mimeType: z.string().trim().min(1),
  sizeBytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/u),
  ref: z.string().trim().min(1),
  state: z.literal("current"),
});

export const subagentRow = z.strictObject({
  ...rowBase,
  kind: z.literal("subagent"),
  parentToolCallId: z.string().optional(),
  subagentType: z.string(),
  status: z.enum(["running", "success", "failed", "cancelled"]),
  summaryText: z.string(),
  childSessionId: z.string().optional(),
  backgrounded: z.literal(true).optional(),
  workId: z.string().optional(),
  startedAt: v4Timestamp.optional(),
  endedAt: v4Timestamp.optional(),
});

export const hookInvocationRow = z.strictObject({
  ...rowBase,
  kind: z.literal("hookInvocation"),
  hookInvocationId: z.string().min(1),
  hookEventName: z.enum([
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
  ]),
  hookCount: z.number().int().positive(),
  state: z.enum(["running", "completed", "failed"]),
  startedAt: v4Timestamp,
  endedAt: v4Timestamp.optional(),
  durationMs: z.number().nonnegative().optional(),
  lane: z.enum(["assistantWork", "toolBefore", "toolAfter"]),
  anchorToolCallId: z.string().optional(),
  executions: z.array(jsonObject), // hookExecutionProjectionSchema: not transcribed
});

/** `timelineMarkerPayloadSchema`: the marker is an object discriminated by `type`. */
export const timelineMarkerPayload = z.union([
  z.strictObject({
    type: z.literal("compact"),
    origin: z.enum(["manual", "auto"]),
    status: z.enum(["running", "success", "failed", "noop", "cancelled"]),
    tokensBefore: z.number().optional(),
    tokensAfter: z.number().optional(),
    summaryRef: z.string().optional(),
  }),
  z.strictObject({ type: z.literal("forkNotice"), parentSessionId: z.string(), parentRowId: z.number() }),
  z.strictObject({ type: z.literal("forkCreated"), childSessionId: z.string(), atRowId: z.number() }),
  z.strictObject({
    type: z.literal("modelChange"),
    fromProvider: z.string(),
    fromModel: z.string(),
    toProvider: z.string(),
    toModel: z.string(),
    toThought: z.string(),
  }),
  z.strictObject({ type: z.literal("modelChange"), toProvider: z.string(), toModel: z.string(), toThought: z.string() }),
  z.strictObject({ type: z.literal("goalSet"), objective: z.string(), previousObjective: z.string().optional() }),
  z.strictObject({
    type: z.literal("goalVerify"),
    iteration: z.number(),
    outcome: z.enum(["running", "pass", "notSatisfied", "failed"]),
    detail: z.string().optional(),
  }),
  z.strictObject({ type: z.literal("retryNotice"), attempt: z.number(), reasonCode: z.string() }),
  z.strictObject({ type: z.literal("checkpointRestored"), checkpointId: z.string() }),
]);

export const timelineMarkerRow = z.strictObject({
  ...rowBase,
  kind: z.literal("timelineMarker"),
  sourceCommandId: z.string().optional(),
  lane: z.enum(["assistantWork", "turnTailBoundary", "lightBoundary"]).optional(),
  marker: timelineMarkerPayload,
});

/** `conversationRowSchema`: every row kind. */
export const conversationRow = z.discriminatedUnion("kind", [
  turnHeaderRow,
  userInputRow,
  assistantTextRow,
  reasoningRow,
  toolCallRow,
  artifactRow,
  subagentRow,
  hookInvocationRow,
  timelineMarkerRow,
]);

// ── snapshot.ts: the A zone ──

const errorAttribution = jsonObject; // errorAttributionSchema: checked as an object only

export const sessionControl = z.strictObject({
  phase: z.enum(["draft", "prewarming", "running", "completedSuccess", "completedInterrupted", "error"]),
  sessionEnded: z.boolean(),
  canStop: z.boolean(),
  stopState: z.enum(["idle", "stoppable", "stopping"]),
  stopTargetKind: z.enum(["assistant", "tool", "subagent", "compact", "goalVerifier", "goalContinuation", "turnSteer", "mixed", "unknown"]),
  activeWorks: z.array(
    z.strictObject({
      kind: z.enum(["primaryTurn", "foregroundSubagent", "compact", "goalVerifier", "goalContinuation", "turnSteer"]),
      foregroundExecutionId: z.string().min(1).optional(),
      sourceCommandId: z.string().min(1).optional(),
      startedAt: v4Timestamp,
    }),
  ),
  lastError: z
    .strictObject({
      code: z.string(),
      message: z.string(),
      recoverable: z.boolean(),
      at: v4Timestamp,
      source: z.enum(["provider", "runtime", "tool", "network"]),
      traceId: z.string().optional(),
      detail: z.string().optional(),
      underlyingErrorMessage: z.string().optional(),
      underlyingErrorDetail: z.string().optional(),
      attribution: errorAttribution.optional(),
    })
    .nullable(),
  apiRetry: z.strictObject({ attempt: z.number(), maxAttempts: z.number(), nextRetryAt: v4Timestamp, reasonCode: z.string() }).nullable(),
});

const availability = z.discriminatedUnion("allowed", [
  z.strictObject({ allowed: z.literal(true) }),
  z.strictObject({ allowed: z.literal(false), reasonCode: z.string() }),
]);
export const sessionAvailability = z.strictObject({
  fork: availability,
  compact: availability,
  switchModelConfig: availability,
  setFollowupMode: availability,
  queueEdit: availability,
  sendQueuedNow: availability,
  pauseGoal: availability,
  resumeGoal: availability,
});
export const inputRouting = z.strictObject({
  mode: z.enum(["startNow", "enqueue", "guide", "reject", "choice"]),
  reasonCode: z.string().optional(),
});
export const sessionMeta = z.strictObject({
  title: z.string(),
  titleSource: z.enum(["default", "generated", "custom"]),
});
export const sessionConfig = z.strictObject({
  modelSelection: modelSelection.optional(),
  provider: z.string(),
  model: z.string(),
  thought: z.string(),
  thoughtLevels: z.array(z.string()).optional(), // defaults to [] in ZCode
  followupMode: z.enum(["queue", "guide"]),
  mode: z.string().optional(), // defaults to "build" in ZCode
  planEnabled: z.boolean().optional(),
  permissionGrant: z.strictObject({ interactionId: z.string().min(1) }).optional(),
  planTransition: z.strictObject({ toolCallId: z.string(), planEnabled: z.boolean() }).optional(),
});
export const sessionUsage = z.strictObject({
  contextWindow: z
    .strictObject({
      usedTokens: z.number(),
      maxTokens: z.number(),
      autoCompactThresholdTokens: z.number().nullable(),
      cache: contextCacheUsage.optional(),
      breakdown: contextBreakdown.optional(),
    })
    .nullable(),
  cumulative: z.strictObject({
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadTokens: z.number(),
    cacheWriteTokens: z.number(),
  }),
});

/** `queueItemSchema` = the admitted input intent (input-intent.ts) with a queued dispatch state. */
export const queueItem = z.strictObject({
  inputOrigin: z.enum(["desktop", "mobile"]).optional(),
  botGroupSource: z.unknown().optional(),
  conversationQuotes: z.unknown().optional(),
  sourceCommandId: z.string().min(1),
  queueItemId: z.string().min(1),
  clientId: z.string().min(1),
  kind: z.enum(["sendText", "sendGoalCommand", "compact"]),
  text: z.string(),
  attachments: z.array(attachmentRef).optional(), // defaults to [] in ZCode
  modelSelection: modelSelection.optional(),
  mode: z.unknown().optional(), // submissionModeSchema: not transcribed
  planEnabled: z.boolean().optional(),
  sharedContextRefs: z.array(jsonObject).max(1).optional(),
  delivery: z.strictObject({
    requested: z.enum(["auto", "startNow", "queue", "guide"]),
    admitted: z.enum(["startNow", "queue", "guide"]),
    fallbackReasonCode: z.string().optional(),
  }),
  order: z.strictObject({
    admissionSeq: z.number().int().nonnegative(),
    queuePosition: z.number().int().nonnegative().optional(),
  }),
  steer: z.strictObject({
    state: z.enum(["notRequested", "submitting", "steering", "guided", "fellBack"]),
    reasonCode: z.string().optional(),
  }),
  dispatch: z.strictObject({
    state: z.enum(["queued", "reserved", "promoting"]),
    reservationId: z.string().optional(),
  }),
  admittedAt: v4Timestamp,
  highspeed: z.unknown().optional(),
  provenance: z
    .strictObject({
      sourceCommandId: z.string().min(1),
      queueItemId: z.string().min(1).optional(),
      clientId: z.string().min(1).optional(),
    })
    .optional(),
  source: jsonObject.optional(),
  toolDisallowlist: z.array(z.string().min(1)).optional(),
});
export const queueState = z.strictObject({
  items: z.array(queueItem),
  autoDrain: z.boolean(),
  pauseReason: z.enum(["stopped", "manual", "error"]).optional(),
});

const permissionOption = z.strictObject({
  optionId: z.string(),
  label: z.string(),
  kind: z.enum(["allowOnce", "allowAlways", "deny", "custom"]),
  response: permissionResponse.optional(),
});
const permissionPayload = z.strictObject({
  kind: z.literal("permission"),
  toolCallId: z.string(),
  toolName: z.string(),
  summary: z.string(),
  detail: z.unknown(),
  freeText: z.boolean().optional(),
  origin: interactionOrigin.optional(),
  display: z.unknown().optional(), // `.catch(undefined)` in ZCode
  fullAccessOption: permissionOption.optional(),
  options: z.array(permissionOption),
});
const userInputPayload = z.strictObject({
  kind: z.literal("userInput"),
  prompt: z.string(),
  freeText: z.boolean(),
  options: z.array(z.strictObject({ optionId: z.string(), label: z.string() })).optional(),
  sensitive: z.boolean().optional(),
  toolName: z.string().optional(),
  toolCallId: z.string().optional(),
  traceId: z.string().optional(),
  input: z.unknown().optional(),
  schema: z.unknown().optional(),
  questions: z
    .array(
      z.strictObject({
        question: z.string(),
        header: z.string(),
        options: z.array(
          z.strictObject({
            value: z.string(),
            label: z.string(),
            description: z.string().optional(),
            preview: z.string().optional(),
          }),
        ),
        multiSelect: z.boolean().optional(),
      }),
    )
    .optional(),
  currentQuestionIndex: z.number().optional(),
  answerDrafts: z.record(z.string(), z.array(z.string())).optional(),
  origin: interactionOrigin.optional(),
});
const workspaceHookReviewPayload = z.looseObject({ kind: z.literal("workspaceHookReview"), interactionId: z.string() }); // not transcribed

export const pendingInteraction = z
  .strictObject({
    interactionId: z.string(),
    kind: z.enum(["permission", "userInput", "workspaceHookReview"]),
    anchorRowId: z.number().nullable(),
    createdAt: v4Timestamp,
    autoResolution: jsonObject.optional(), // interactionAutoResolutionSchema: not transcribed
    payload: z.discriminatedUnion("kind", [permissionPayload, userInputPayload, workspaceHookReviewPayload]),
  })
  .superRefine((interaction, context) => {
    if (interaction.kind !== interaction.payload.kind) {
      context.addIssue({ code: "custom", path: ["kind"], message: "the interaction's kind must be its payload's kind" });
    }
  });

export const commandStateSummary = z.strictObject({
  commandId: z.string(),
  clientId: z.string(),
  type: z.string(),
  state: z.enum(["accepted", "executing"]),
  at: v4Timestamp,
});
export const backgroundWork = z.strictObject({
  workId: z.string(),
  kind: z.enum(["bash", "subagent", "workflow"]),
  title: z.string(),
  status: z.enum(["running", "resultPending", "failed", "cancelled"]),
  startedAt: v4Timestamp,
  endedAt: v4Timestamp.optional(),
  cancellable: z.boolean().optional(),
  blocked: z.boolean().optional(),
  anchorRowId: z.number().nullable(),
  childSessionId: z.string().optional(),
});
export const subagentProjection = z.strictObject({
  revision: z.number().int().nonnegative(),
  childSessionIds: z.array(z.string()),
  running: z.array(
    z.strictObject({
      childSessionId: z.string(),
      agentId: z.string().optional(),
      toolCallId: z.string().optional(),
      subagentType: z.string(),
      title: z.string(),
      summary: z.string().optional(),
      status: z.enum(["running", "waiting", "blocked"]),
      startedAt: v4Timestamp.optional(),
    }),
  ),
  endedTotal: z.number().int().nonnegative(),
});
const planItem = z.strictObject({ id: z.string(), content: z.string(), status: z.enum(["pending", "inProgress", "completed"]) });
export const goalState = z.strictObject({
  targetId: z.string().optional(),
  objective: z.string(),
  summaryTitle: z.string().nullable().optional(),
  timeUsedSeconds: z.number().int().nonnegative().optional(),
  activeRunStartedAtMs: z.number().int().nonnegative().nullable().optional(),
  status: z.enum(["active", "paused", "verifying", "verified", "notSatisfied", "failed"]),
  iteration: z.number(),
  verifications: z.array(jsonObject),
  iterations: z.array(jsonObject).optional(),
});
export const planState = z.strictObject({ items: z.array(planItem), updatedAt: v4Timestamp });
const workspaceHookAdmission = z.strictObject({
  pendingCount: z.number().int().nonnegative(),
  bundleDigest: z.string(),
  workspaceIdentity: z.string().optional(),
});

/** `conversationSnapshotSchema`: protocol header, A zone, B zone (the rows window). */
export const conversationSnapshot = z.strictObject({
  protocolVersion: z.literal(1),
  sessionId: z.string(),
  logEpoch: z.string(),
  seq: z.number(),
  revision: z.number(),
  control: sessionControl,
  availability: sessionAvailability,
  inputRouting,
  meta: sessionMeta.optional(), // defaults in ZCode
  sharedContextImport: z.unknown().optional(),
  config: sessionConfig,
  modelTransition: z.unknown().optional(), // sessionModelTransitionSchema: not transcribed; nullable, defaults to null
  usage: sessionUsage,
  queue: queueState,
  pendingInteractions: z.array(pendingInteraction),
  pendingCommands: z.array(commandStateSummary),
  backgroundWorks: z.array(backgroundWork),
  subagents: subagentProjection.optional(),
  workflowRuns: z.unknown().optional(),
  goal: goalState.nullable(),
  plan: planState.nullable(),
  workspaceHookAdmission: workspaceHookAdmission.nullable().optional(),
  rows: z.strictObject({
    window: z.array(conversationRow),
    totalCount: z.number(),
    firstRowId: z.number().nullable(),
  }),
});

// ── delta.ts ──

/** `statePatchSchema`: key-level replacement of A-zone keys (a closed set of keys). */
export const statePatch = z.strictObject({
  revision: z.number().optional(),
  control: sessionControl.optional(),
  sharedContextImport: z.unknown().optional(),
  availability: sessionAvailability.optional(),
  inputRouting: inputRouting.optional(),
  meta: sessionMeta.optional(),
  config: sessionConfig.optional(),
  modelTransition: z.unknown().optional(),
  usage: sessionUsage.optional(),
  queue: queueState.optional(),
  pendingInteractions: z.array(pendingInteraction).optional(),
  pendingCommands: z.array(commandStateSummary).optional(),
  backgroundWorks: z.array(backgroundWork).optional(),
  subagents: subagentProjection.optional(),
  workflowRuns: z.unknown().optional(),
  goal: goalState.nullable().optional(),
  plan: planState.nullable().optional(),
  workspaceHookAdmission: workspaceHookAdmission.nullable().optional(),
});

/** `conversationDeltaSchema` (the plugin UI and workflow-run ops are checked by `op` only). */
export const conversationDelta = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("row.appended"), row: conversationRow }),
  z.strictObject({ op: z.literal("row.upserted"), row: conversationRow }),
  z.strictObject({ op: z.literal("row.removed"), fromRowId: z.number() }),
  z.strictObject({
    op: z.literal("row.delta"),
    rowId: z.number(),
    path: z.enum(["text", "inputText", "output.text", "summaryText"]),
    append: z.string(),
  }),
  z.strictObject({ op: z.literal("state.updated"), patch: statePatch }),
  z.looseObject({ op: z.literal("pluginUi.resourceUpdated") }),
  z.looseObject({ op: z.literal("pluginUi.resourceListChanged") }),
  z.looseObject({ op: z.literal("pluginUi.instanceClosed") }),
  z.looseObject({ op: z.literal("pluginUi.appToolCall") }),
  z.looseObject({ op: z.literal("workflowRun.updated") }),
  z.looseObject({ op: z.literal("workflowRun.removed") }),
]);

// ── transport.ts: the logical conversation frame, the subscribe ack ──

/** `conversationTopicFrameSchema`: one logical frame (after fragment reassembly). */
export const conversationFrame = z
  .strictObject({
    topic: z.string(),
    subscriptionId: z.string(),
    fromSeq: z.number(),
    toSeq: z.number(),
    sentAt: v4Timestamp,
    payload: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("snapshot"), snapshot: conversationSnapshot }),
      z.strictObject({ kind: z.literal("deltas"), deltas: z.array(conversationDelta) }),
    ]),
    ttft: z.unknown().optional(),
    ttftRelated: z.array(z.unknown()).max(16).optional(),
  })
  .superRefine((frame, context) => {
    if (!frame.topic.startsWith("conversation/") || frame.topic.length === "conversation/".length) {
      context.addIssue({ code: "custom", message: "invalid conversation topic", path: ["topic"] });
    }
  });

// ── wire.ts: the physical envelope of a logical frame (complete, or one of its fragments) ──

const wireHead = {
  wireVersion: z.literal(3),
  deliveryKind: z.enum(["initial", "online", "recovery"]),
  logicalFrameId: z.string().min(1),
  logicalFrameOrdinal: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  topic: z.string().min(1),
  subscriptionId: z.string().min(1),
};
/**
 * `createTopicWireFrameSchema` (wire.ts, stored copy id 70084440970). A complete envelope's
 * `frame` is checked here only for the topic and subscription it must repeat (the emit log records
 * the logical frame itself as `v4-frame`).
 */
export const wireFrame = z
  .discriminatedUnion("kind", [
    z.strictObject({ ...wireHead, kind: z.literal("complete"), frame: z.looseObject({ topic: z.unknown(), subscriptionId: z.unknown() }) }),
    z.strictObject({
      ...wireHead,
      kind: z.literal("fragment"),
      fragmentIndex: z.number().int().nonnegative(),
      fragmentCount: z.number().int().positive(),
      logicalBytes: z.number().int().positive(),
      checksum: z.strictObject({ algorithm: z.literal("crc32"), value: z.string().regex(/^[0-9a-f]{8}$/u) }),
      dataBase64: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/u),
    }),
  ])
  .superRefine((wire, context) => {
    if (wire.kind === "fragment") {
      if (wire.fragmentIndex >= wire.fragmentCount) {
        context.addIssue({ code: "custom", message: "fragmentIndex must be below fragmentCount", path: ["fragmentIndex"] });
      }
      if (wire.fragmentCount > wire.logicalBytes) {
        context.addIssue({ code: "custom", message: "fragmentCount cannot exceed logicalBytes", path: ["fragmentCount"] });
      }
      return;
    }
    if (wire.frame.topic !== wire.topic)
      context.addIssue({ code: "custom", message: "the logical frame's topic differs", path: ["topic"] });
    if (wire.frame.subscriptionId !== wire.subscriptionId) {
      context.addIssue({ code: "custom", message: "the logical frame's subscriptionId differs", path: ["subscriptionId"] });
    }
  });

export const subscribeAck = z.strictObject({
  subscriptionId: z.string(),
  mode: z.enum(["snapshot", "resume"]),
  logEpoch: z.string(),
  openTiming: jsonObject.optional(),
});

/** `conversationRowsRange` result: not in the shared package at this commit; the rows are checked [guess for the envelope]. */
export const rowsRange = z.looseObject({ rows: z.array(conversationRow) });

// ── command.ts: acks ──

const delivery = z.enum(["startNow", "queue", "guide"]);
export const commandResult = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.enum(["createSession", "createSelectionSideSession", "forkAssistant"]),
    sessionId: z.string(),
    input: z.strictObject({ delivery, inputId: z.string(), messageId: z.string().optional() }).optional(),
  }),
  z.strictObject({
    type: z.literal("resolveInteraction"),
    resolvedBy: z.strictObject({ clientId: z.string(), optionId: z.string().optional() }),
  }),
  z.looseObject({ type: z.literal("applyFileRewind") }), // preview shape: not transcribed
  z.strictObject({
    type: z.literal("editUserQuery"),
    disposition: z.enum(["rewind", "fork", "blocked"]),
    sessionId: z.string().min(1),
    reasonCode: z.string().min(1).optional(),
    preview: jsonObject.optional(),
  }),
  z.strictObject({ type: z.literal("startSavedWorkflow"), runId: z.string().min(1), toolCallId: z.string().min(1) }),
  z.looseObject({ type: z.literal("amendWorkflowRunSettings") }), // not transcribed
  z.strictObject({ type: z.literal("inputAccepted"), delivery, inputId: z.string(), messageId: z.string().optional() }),
  z.strictObject({ type: z.literal("inputDisposition"), delivery }),
]);

/** `commandAckSchema`: the answer to one V4 command (and a command query's known result). */
export const commandAck = z.strictObject({
  memoryEnabled: z.boolean().optional(),
  ttftExcluded: z.literal("capacity").optional(),
  commandId: z.string(),
  status: z.enum(["accepted", "rejected", "stale", "duplicate", "noop", "failed"]),
  reasonCode: z.string().optional(),
  message: z.string().optional(),
  revisionAtDecision: z.number(),
  result: commandResult.optional(),
});
