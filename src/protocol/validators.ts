/**
 * The one place our protocol JSON Schemas become validators (adr/0014-one-validation-stack.md):
 * every host event, snapshot and reverse-request schema by a key, the ajv options they are
 * compiled with, and the validator of a key — the build's precompiled one
 * (scripts/precompile-validators.mjs), else one compiled by ajv on first use. ajv itself is loaded
 * only then, so the built CLI never loads it.
 */
import { createRequire } from "node:module";
import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from "ajv";
import { sessionEventEnvelopeSchema, snapshotSchema } from "./event-schemas.js";
import { SESSION_EVENTS, TOP_LEVEL_EVENTS } from "./event-table.js";
import { precompiledValidators } from "./precompiled-validators.js";
import {
  permissionOptionSchema,
  permissionRequestSchema,
  providerHeadersRequestSchema,
  questionsSchema,
  userInputRequestSchema,
} from "./request-schemas.js";

/**
 * The ajv options of these schemas (scripts/precompile-validators.mjs uses the same).
 * strictRequired is off: conditional `then: { required }` branches name properties declared one
 * level up. validateSchema is off: these are our own constant schemas, checked against the
 * meta-schema by test/unit/protocol/schemas-meta.test.ts.
 */
export const PROTOCOL_AJV_OPTIONS = {
  allErrors: false,
  strict: true,
  strictRequired: false,
  allowUnionTypes: true,
  validateSchema: false,
} as const;

/**
 * Every schema by its key: "snapshot", "envelope", "top:<type>" and "payload:<type>" (from the
 * event table), "request:<what>" (the reverse requests).
 */
export const PROTOCOL_SCHEMAS: Readonly<Record<string, object>> = {
  snapshot: snapshotSchema,
  envelope: sessionEventEnvelopeSchema,
  ...Object.fromEntries(Object.entries(TOP_LEVEL_EVENTS).map(([type, schema]) => [`top:${type}`, schema])),
  ...Object.fromEntries(
    Object.entries(SESSION_EVENTS).flatMap(([type, row]) => ("payload" in row ? [[`payload:${type}`, row.payload]] : [])),
  ),
  "request:permission": permissionRequestSchema,
  "request:permissionOption": permissionOptionSchema,
  "request:userInput": userInputRequestSchema,
  "request:questions": questionsSchema,
  "request:providerHeaders": providerHeadersRequestSchema,
};

let ajv: AjvClass | undefined;
const compiled = new Map<string, ValidateFunction>();

/** The validator of a schema key (see PROTOCOL_SCHEMAS); compiled at most once. */
export function validatorOf(key: string): ValidateFunction {
  const cached = compiled.get(key);
  if (cached) return cached;
  let validate = precompiledValidators?.[key];
  if (!validate) {
    const schema = PROTOCOL_SCHEMAS[key];
    if (!schema) throw new Error(`no protocol schema "${key}"`);
    if (!ajv) {
      const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      ajv = new Ajv(PROTOCOL_AJV_OPTIONS);
    }
    validate = ajv.compile(schema);
  }
  compiled.set(key, validate);
  return validate;
}

/** "<where> <what>" of ajv's first error, e.g. "/kind must be equal to one of the allowed values" */
export function describeAjvError(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "invalid";
  const where = first.instancePath || "(root)";
  return `${where} ${first.message ?? "is invalid"}`;
}
