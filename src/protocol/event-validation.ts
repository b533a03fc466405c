/**
 * Validation of raw host events with ajv. Every function either returns a typed value or throws
 * `BridgeError("NATIVE_PROTOCOL_ERROR")` naming what was wrong (the event type and the first
 * schema violation). Unknown top-level or inner types are errors: nothing is guessed.
 */
import { createRequire } from "node:module";
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from "ajv";
import { BridgeError } from "../util/errors.js";
import {
  payloadSchemas,
  sessionEventEnvelopeSchema,
  snapshotSchema,
  topLevelSchemas,
} from "./event-schemas.js";
import type { HostEvent, SessionEventEnvelope, SessionSnapshot } from "./native-types.js";
import { precompiledEventValidators } from "./precompiled-validators.js";

let ajv: AjvClass | undefined;

/**
 * The ajv options of the event schemas (scripts/precompile-validators.mjs uses the same).
 * strictRequired is off: conditional `then: { required }` branches name properties declared one
 * level up. validateSchema is off: these are our own constant schemas, checked against the
 * meta-schema by test/unit/protocol/schemas-meta.test.ts.
 */
export const EVENT_AJV_OPTIONS = { allErrors: false, strict: true, strictRequired: false, allowUnionTypes: true, validateSchema: false } as const;

/** Every schema by its key: "snapshot", "envelope", "top:<type>", "payload:<type>". */
export const EVENT_SCHEMAS: Readonly<Record<string, Record<string, unknown>>> = {
  snapshot: snapshotSchema,
  envelope: sessionEventEnvelopeSchema,
  ...Object.fromEntries(Object.entries(topLevelSchemas).map(([type, schema]) => [`top:${type}`, schema])),
  ...Object.fromEntries(Object.entries(payloadSchemas).map(([type, schema]) => [`payload:${type}`, schema])),
};

/**
 * The build's precompiled validator of `key`, else one compiled on first use (or by
 * compileSessionValidators); ajv itself is loaded only then, so the built CLI never loads it.
 */
function lazy(key: string): () => ValidateFunction {
  let compiled: ValidateFunction | undefined;
  return () => {
    if (compiled) return compiled;
    const precompiled = precompiledEventValidators?.[key];
    if (precompiled) return (compiled = precompiled);
    if (!ajv) {
      const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      ajv = new Ajv(EVENT_AJV_OPTIONS);
    }
    return (compiled = ajv.compile(EVENT_SCHEMAS[key]!));
  };
}

const topLevel = new Map(Object.keys(topLevelSchemas).map((type) => [type, lazy(`top:${type}`)]));
const payloads = new Map(Object.keys(payloadSchemas).map((type) => [type, lazy(`payload:${type}`)]));
const snapshotValidator = lazy("snapshot");
const envelopeValidator = lazy("envelope");

/**
 * Inner session.event types that are known and deliberately not translated (adr/0004).
 * Everything not here and not in `payloadSchemas`/`session.updated` is an unknown type.
 */
export const NO_OP_SESSION_EVENT_TYPES: ReadonlySet<string> = new Set([
  "streamRecovery.updated",
  "permission.requested",
  "permission.resolved",
  "checkpoint.created",
  "session.created",
  "session.resumed",
  "session.closed",
  "turn.steerQueued",
  "turn.steerDrained",
  "message.upserted",
  "message.removed",
  "part.started",
  "part.delta",
  "part.upserted",
  "part.removed",
  "userInput.requested",
  "userInput.resolved",
  "rewind.triggered",
]);

function describeAjvError(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "invalid";
  const where = first.instancePath || "(root)";
  return `${where} ${first.message ?? "is invalid"}`;
}

function protocolError(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", message, details ? { details } : {});
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validate one raw top-level event (§5.2) and, for `session.event`, its envelope (§5.3). */
export function parseHostEvent(raw: unknown): HostEvent {
  if (!isRecord(raw)) throw protocolError("ZCode sent a session event that is not an object");
  const type = raw.type;
  if (typeof type !== "string") throw protocolError("ZCode sent a session event without a type");
  const validate = topLevel.get(type)?.();
  if (!validate) {
    throw protocolError(`ZCode sent an unknown top-level event type "${type}"`, { eventType: type });
  }
  if (!validate(raw)) {
    throw protocolError(`ZCode sent a malformed "${type}" event: ${describeAjvError(validate.errors)}`, {
      eventType: type,
    });
  }
  return raw as unknown as HostEvent;
}

/** Validate the payload of a translated inner type; returns it typed. Unknown types throw. */
export function parseSessionEventPayload<T>(event: SessionEventEnvelope): T {
  const validate = payloads.get(event.type)?.();
  if (!validate) {
    if (event.type === "session.updated" || NO_OP_SESSION_EVENT_TYPES.has(event.type)) return event.payload as T;
    throw protocolError(`ZCode sent an unknown session event type "${event.type}"`, { eventType: event.type });
  }
  if (!validate(event.payload)) {
    throw protocolError(
      `ZCode sent a malformed "${event.type}" event (seq ${event.seq}): payload${describeAjvError(validate.errors)}`,
      { eventType: event.type, seq: event.seq },
    );
  }
  return event.payload as T;
}

/** Validate a snapshot returned by a call (createSession, resumeSession, readSession, set*). */
export function parseSnapshot(raw: unknown, what: string): SessionSnapshot {
  const validate = snapshotValidator();
  if (!validate(raw)) {
    throw protocolError(`ZCode returned a malformed session snapshot from ${what}: ${describeAjvError(validate.errors)}`);
  }
  return raw as SessionSnapshot;
}

/**
 * Compile now the validators a new session needs first (its snapshot, the top-level events, the
 * envelope), instead of at their first use: the CLI does this while the host process starts.
 */
export function compileSessionValidators(): void {
  snapshotValidator();
  envelopeValidator();
  for (const validator of topLevel.values()) validator();
}

/** Validate a bare session.event envelope (exposed for tests and replays). */
export function isValidEnvelope(raw: unknown): raw is SessionEventEnvelope {
  return envelopeValidator()(raw);
}
