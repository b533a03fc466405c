/**
 * Validation of raw host events against the event table (./event-table.ts). Every function either
 * returns a typed value or throws `BridgeError("NATIVE_PROTOCOL_ERROR")` naming what was wrong (the
 * event type and the first schema violation). Types without a row are errors: nothing is guessed.
 */
import { BridgeError } from "../util/errors.js";
import { TOP_LEVEL_EVENTS, sessionEventRowOf, topLevelSchemaOf } from "./event-table.js";
import type { HostEvent, SessionEventEnvelope, SessionSnapshot } from "./native-types.js";
import { describeAjvError, validatorOf } from "./validators.js";

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
  if (!topLevelSchemaOf(type)) {
    throw protocolError(`ZCode sent an unknown top-level event type "${type}"`, { eventType: type });
  }
  const validate = validatorOf(`top:${type}`);
  if (!validate(raw)) {
    throw protocolError(`ZCode sent a malformed "${type}" event: ${describeAjvError(validate.errors)}`, {
      eventType: type,
    });
  }
  return raw as unknown as HostEvent;
}

/**
 * The payload of an inner type, validated when its row has a schema (then it is the row's
 * `PayloadOf<type>`); a type without a row throws.
 */
export function parseSessionEventPayload(event: SessionEventEnvelope, row = sessionEventRowOf(event.type)): unknown {
  if (!row) throw protocolError(`ZCode sent an unknown session event type "${event.type}"`, { eventType: event.type });
  if (!row.payload) return event.payload;
  const validate = validatorOf(`payload:${event.type}`);
  if (!validate(event.payload)) {
    throw protocolError(`ZCode sent a malformed "${event.type}" event (seq ${event.seq}): payload${describeAjvError(validate.errors)}`, {
      eventType: event.type,
      seq: event.seq,
    });
  }
  return event.payload;
}

/** Validate a snapshot returned by a call (createSession, resumeSession, readSession, set*). */
export function parseSnapshot(raw: unknown, what: string): SessionSnapshot {
  const validate = validatorOf("snapshot");
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
  validatorOf("snapshot");
  validatorOf("envelope");
  for (const type of Object.keys(TOP_LEVEL_EVENTS)) validatorOf(`top:${type}`);
}

/** Validate a bare session.event envelope (exposed for tests and replays). */
export function isValidEnvelope(raw: unknown): raw is SessionEventEnvelope {
  return validatorOf("envelope")(raw);
}
