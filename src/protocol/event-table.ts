/**
 * Every host event type the bridge knows, one row each (docs/architecture.md, "A new host event
 * type"). A top-level type has its schema; an inner `session.event` type has its scope — `turn`
 * (belongs to the running prompt: routed only to it), `session` (applies to the session
 * whatever runs) or `ignored` (known and deliberately not shown, adr/0004) — and, where the bridge
 * reads its payload, the payload's schema. The session layer has exactly one handler per `turn`
 * and `session` row (src/session/event-router.ts). A type without a row is refused:
 * NATIVE_PROTOCOL_ERROR, nothing is guessed.
 */
import type { JSONSchema } from "json-schema-to-ts";
import {
  modelStreamingSchema,
  permissionRequestEventSchema,
  providerHeadersRequestEventSchema,
  sessionEventSchema,
  snapshotEventSchema,
  stateUpdatedEventSchema,
  subagentUpdatedSchema,
  titleUpdatedSchema,
  toolUpdatedSchema,
  turnCompletedSchema,
  turnFailedSchema,
  turnStartedSchema,
  turnSteerDrainedSchema,
  userInputRequestEventSchema,
  userInputResponseEventSchema,
} from "./event-schemas.js";
import type { FromHostSchema } from "./schema-type.js";

/** The 7 top-level event types (§5.2), keyed by `type`. */
export const TOP_LEVEL_EVENTS = {
  snapshot: snapshotEventSchema,
  "state.updated": stateUpdatedEventSchema,
  "permission.request": permissionRequestEventSchema,
  "userInput.request": userInputRequestEventSchema,
  "userInput.response": userInputResponseEventSchema,
  "providerRuntimeHeaders.request": providerHeadersRequestEventSchema,
  "session.event": sessionEventSchema,
} as const satisfies Record<string, JSONSchema>;

export type SessionEventScope = "turn" | "session" | "ignored";

export interface SessionEventRow {
  readonly scope: SessionEventScope;
  /** the payload's schema; without one the payload is an object read field by field */
  readonly payload?: JSONSchema;
}

/** The inner `session.event` types (§5.4–5.8), keyed by the envelope's `type`. */
export const SESSION_EVENTS = {
  "model.streaming": { scope: "turn", payload: modelStreamingSchema },
  "tool.updated": { scope: "turn", payload: toolUpdatedSchema },
  "turn.started": { scope: "turn", payload: turnStartedSchema },
  "turn.completed": { scope: "turn", payload: turnCompletedSchema },
  "turn.failed": { scope: "turn", payload: turnFailedSchema },
  "session.titleUpdated": { scope: "session", payload: titleUpdatedSchema },
  "session.updated": { scope: "session" },
  "streamRecovery.updated": { scope: "ignored" },
  "permission.requested": { scope: "ignored" },
  "permission.resolved": { scope: "ignored" },
  "checkpoint.created": { scope: "ignored" },
  "session.created": { scope: "ignored" },
  "session.resumed": { scope: "ignored" },
  "session.closed": { scope: "ignored" },
  "turn.steerQueued": { scope: "ignored" },
  "turn.steerDrained": { scope: "session", payload: turnSteerDrainedSchema },
  "message.upserted": { scope: "ignored" },
  "message.removed": { scope: "ignored" },
  "part.started": { scope: "ignored" },
  "part.delta": { scope: "ignored" },
  // a `compaction` part is ZCode compacting the context (GUESS: docs/zcode-host.md §5.11); other parts are ignored
  "part.upserted": { scope: "session" },
  "part.removed": { scope: "ignored" },
  "userInput.requested": { scope: "ignored" },
  "userInput.resolved": { scope: "ignored" },
  "rewind.triggered": { scope: "ignored" },
  // the bridge's own: a V4 parent's `subagent` row (src/native/v4-read/projection.ts), read by the subagent tracker
  "subagent.updated": { scope: "turn", payload: subagentUpdatedSchema },
} as const satisfies Record<string, SessionEventRow>;

export type TopLevelEventType = keyof typeof TOP_LEVEL_EVENTS;
export type TopLevelEvent<T extends TopLevelEventType = TopLevelEventType> = { [K in T]: FromHostSchema<(typeof TOP_LEVEL_EVENTS)[K]> }[T];

export type SessionEventType = keyof typeof SESSION_EVENTS;
export type ScopeOf<T extends SessionEventType> = (typeof SESSION_EVENTS)[T]["scope"];
/** the types with a handler in the session layer: scope `turn` or `session` */
export type HandledSessionEventType = { [T in SessionEventType]: ScopeOf<T> extends "ignored" ? never : T }[SessionEventType];
/** the validated payload of an inner type */
export type PayloadOf<T extends SessionEventType> = (typeof SESSION_EVENTS)[T] extends { payload: infer S extends JSONSchema }
  ? FromHostSchema<S>
  : Record<string, unknown>;

/** The row of a top-level or inner type; undefined for one without a row (never from the prototype). */
export function topLevelSchemaOf(type: string): JSONSchema | undefined {
  return Object.hasOwn(TOP_LEVEL_EVENTS, type) ? TOP_LEVEL_EVENTS[type as TopLevelEventType] : undefined;
}

export function sessionEventRowOf(type: string): SessionEventRow | undefined {
  return Object.hasOwn(SESSION_EVENTS, type) ? SESSION_EVENTS[type as SessionEventType] : undefined;
}
