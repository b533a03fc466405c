/**
 * Native types of the ZCode host's `onDynamicSessionEvent` stream and session snapshot
 * (docs/zcode-host.md §5, §7), derived from their JSON Schemas (./event-schemas.ts, ./event-table.ts)
 * so that a type and what is validated cannot disagree (adr/0014-one-validation-stack.md). Only
 * what the bridge reads is typed; everything else stays `unknown` and passes through. Values of
 * these types have been validated by ./event-validation.ts.
 */
import type * as S from "./event-schemas.js";
import type { PayloadOf, TopLevelEvent } from "./event-table.js";
import type * as R from "./request-schemas.js";
import type { FromHostSchema } from "./schema-type.js";

export { MODEL_STREAMING_KINDS, TOOL_UPDATED_KINDS } from "./event-schemas.js";
export type { TopLevelEventType } from "./event-table.js";

export type HostEvent = TopLevelEvent;
export type StateUpdatedEvent = TopLevelEvent<"state.updated">;
export type SessionEventEnvelope = FromHostSchema<typeof S.sessionEventEnvelopeSchema>;

// ---- session.event payloads the bridge translates ----

export type ModelStreamingPayload = PayloadOf<"model.streaming">;
export type ToolUpdatedPayload = PayloadOf<"tool.updated">;
export type TurnStartedPayload = PayloadOf<"turn.started">;
export type TurnCompletedPayload = PayloadOf<"turn.completed">;
export type TurnFailedPayload = PayloadOf<"turn.failed">;

// ---- snapshot (§7) ----

export type SessionSnapshot = FromHostSchema<typeof S.snapshotSchema>;
type Settings = NonNullable<SessionSnapshot["settings"]>;
export type ModelRef = NonNullable<NonNullable<Settings["model"]>["current"]>;
export type SnapshotModelEntry = NonNullable<NonNullable<Settings["model"]>["available"]>[number];
export type SnapshotThoughtLevel = NonNullable<Settings["thoughtLevel"]>;
export type SnapshotMessage = NonNullable<SessionSnapshot["messages"]>[number];
export type SnapshotPart = SnapshotMessage["parts"][number];

// ---- results of native calls that no schema checks ----

export interface TaskTokenUsage {
  sessionId?: string;
  totalTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  reasoningTokens?: number;
  cacheCreationTokens?: number;
  cacheReadTokens?: number;
  [key: string]: unknown;
}

export interface SessionListEntry {
  sessionId: string;
  workspace?: { workspacePath?: string };
  title?: string;
  updatedAt?: number;
}

// ---- reverse requests (§6), parsed by src/session/interactions/native-requests.ts ----

export type NativePermissionOption = FromHostSchema<typeof R.permissionOptionSchema>;
export type NativePermissionRequestFields = FromHostSchema<typeof R.permissionRequestSchema>;
export type NativeQuestion = FromHostSchema<typeof R.questionsSchema>[number];
export type NativeUserInputRequestFields = FromHostSchema<typeof R.userInputRequestSchema>;
export type NativeProviderHeadersRequest = FromHostSchema<typeof R.providerHeadersRequestSchema>;
