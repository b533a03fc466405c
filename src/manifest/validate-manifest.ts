/**
 * Validation of one parsed manifest: the closed schema (ajv), then the cross-field rules the
 * schema cannot say (the artifact names its protocol; operations are allowlisted methods).
 * Every failure is a BridgeError("INVALID_MANIFEST") that names the file and the field.
 */
import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";
import { BridgeError } from "../util/errors.js";
import type { Manifest } from "./types.js";
import { MANIFEST_SCHEMA } from "./manifest-schema.js";
import { findLine, implementedLineIds, type ChannelKey, type ReleaseLine } from "./release-lines.js";
import { precompiledManifestValidator } from "./precompiled-validator.js";

export interface ManifestProblem {
  /** dotted field path, e.g. "artifact.hostIndex.sha256" ("(root)" for the document) */
  field: string;
  problem: string;
}

/** the ajv options of the manifest schema (scripts/precompile-validators.mjs uses the same) */
export const MANIFEST_AJV_OPTIONS = { allErrors: true, strict: true, code: { optimize: false }, validateSchema: false } as const;

let compiled: ValidateFunction<Manifest> | undefined;
/**
 * The build's precompiled validator, else compiled on first use (ajv is loaded only then, so the
 * built CLI never loads it). `optimize: false` halves the compile time of this small schema and
 * `validateSchema: false` skips compiling the meta-schema (the schema is a constant of ours,
 * meta-validated by test/unit/protocol/schemas-meta.test.ts).
 */
function validator(): ValidateFunction<Manifest> {
  compiled ??= precompiledManifestValidator ?? compileWithAjv();
  return compiled;
}

function compileWithAjv(): ValidateFunction<Manifest> {
  const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  return new Ajv(MANIFEST_AJV_OPTIONS).compile<Manifest>(MANIFEST_SCHEMA);
}

/** "/protocol/allowlist/agent/3" → "protocol.allowlist.agent[3]" */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (child !== undefined) parts.push(child);
  let out = "";
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : out === "" ? part : `.${part}`;
  return out === "" ? "(root)" : out;
}

function describe(error: ErrorObject): ManifestProblem {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "additionalProperties":
      return { field: fieldPath(error.instancePath, String(params.additionalProperty)), problem: "is not a known field" };
    case "required":
      return { field: fieldPath(error.instancePath, String(params.missingProperty)), problem: "is missing" };
    case "pattern":
      return { field: fieldPath(error.instancePath), problem: `has an invalid value (must match ${String(params.pattern)})` };
    case "const":
      return { field: fieldPath(error.instancePath), problem: `must be ${JSON.stringify(params.allowedValue)}` };
    case "enum":
      return { field: fieldPath(error.instancePath), problem: `must be one of ${JSON.stringify(params.allowedValues)}` };
    default:
      return { field: fieldPath(error.instancePath), problem: error.message ?? `fails "${error.keyword}"` };
  }
}

function invalid(file: string, problems: ManifestProblem[]): BridgeError {
  const shown = problems.slice(0, 5).map((p) => `"${p.field}" ${p.problem}`);
  const more = problems.length > shown.length ? ` (and ${problems.length - shown.length} more)` : "";
  const first = problems[0]!;
  return new BridgeError(
    "INVALID_MANIFEST",
    `Invalid manifest ${file}: field ${shown.join("; field ")}${more}. Fix or remove this manifest file.`,
    { details: { file, field: first.field, problems } },
  );
}

/** Returns the value typed as a Manifest, or throws INVALID_MANIFEST naming `file` and the field. */
export function validateManifest(value: unknown, file: string): Manifest {
  const validate = validator();
  if (!validate(value)) {
    // an "if" error only says which branch failed; the branch's own errors name the field
    const problems = (validate.errors ?? []).filter((e) => e.keyword !== "if").map(describe);
    // the most specific problems first: deeper fields explain more than their parents
    problems.sort((a, b) => b.field.split(/[.[]/).length - a.field.split(/[.[]/).length);
    throw invalid(file, problems.length > 0 ? problems : [{ field: "(root)", problem: "is not a manifest" }]);
  }
  const manifest = value;
  const problems: ManifestProblem[] = [];
  if (manifest.artifact.protocolId !== manifest.protocol.id) {
    problems.push({
      field: "artifact.protocolId",
      problem: `is "${manifest.artifact.protocolId}" but the paired protocol descriptor is "${manifest.protocol.id}" (an artifact must name its own protocol)`,
    });
  }
  if (manifest.trust === "local" && manifest.artifact.rpcModule.pin === "first-use") {
    problems.push({
      field: "artifact.rpcModule.pin",
      problem: "is not allowed in a local manifest: `onboard --accept` pins the RPC module's path and SHA-256 exactly",
    });
  }
  const line = findLine(manifest.protocol.id);
  if (line === undefined) {
    problems.push({
      field: "protocol.id",
      problem:
        `is "${manifest.protocol.id}", a release line this zcode-acp does not implement ` +
        `(it implements ${implementedLineIds().join(", ")}); update zcode-acp`,
    });
  } else {
    problems.push(...lineProblems(manifest, line));
  }
  for (const [name, op] of Object.entries(manifest.protocol.operations)) {
    if (!manifest.protocol.allowlist[op.service].includes(op.method)) {
      problems.push({
        field: `protocol.operations.${name}.method`,
        problem: `"${op.method}" is not in protocol.allowlist.${op.service}`,
      });
    }
  }
  (manifest.advisories ?? []).forEach((advisory, index, all) => {
    if (all.findIndex((other) => other.id === advisory.id) !== index)
      problems.push({ field: `advisories[${index}].id`, problem: `"${advisory.id}" is the id of an earlier advisory (ids are unique)` });
  });
  if (problems.length > 0) throw invalid(file, problems);
  return manifest;
}

/** What the release line allows: its channels with their native names, known methods and events only, its required methods present. */
function lineProblems(manifest: Manifest, line: ReleaseLine): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const { protocol } = manifest;
  const keys = new Set<ChannelKey>([
    ...(Object.keys(protocol.channels) as ChannelKey[]),
    ...(Object.keys(protocol.allowlist) as ChannelKey[]),
    ...(Object.keys(protocol.events) as ChannelKey[]),
    ...(Object.keys(line.channels) as ChannelKey[]),
  ]);
  for (const key of keys) {
    const expected = line.channels[key];
    const actual = protocol.channels[key];
    if (expected === undefined) {
      problems.push({ field: `protocol.channels.${key}`, problem: `is not a channel of the ${line.id} line` });
      continue;
    }
    if (actual !== expected) {
      problems.push({
        field: `protocol.channels.${key}`,
        problem:
          actual === undefined
            ? `is missing (the ${line.id} line needs "${expected}")`
            : `is "${actual}" but the ${line.id} line uses "${expected}"`,
      });
    }
    const known = line.methods[key] ?? [];
    const allowed = protocol.allowlist[key] ?? [];
    allowed.forEach((method, index) => {
      if (!known.includes(method))
        problems.push({
          field: `protocol.allowlist.${key}[${index}]`,
          problem: `"${method}" is not a method the ${line.id} line uses; it cannot be allowed`,
        });
    });
    for (const method of line.requiredMethods[key] ?? []) {
      if (!allowed.includes(method))
        problems.push({ field: `protocol.allowlist.${key}`, problem: `lacks "${method}", which the ${line.id} line needs` });
    }
    const knownEvents = line.events[key] ?? [];
    (protocol.events[key] ?? []).forEach((event, index) => {
      if (!knownEvents.includes(event))
        problems.push({ field: `protocol.events.${key}[${index}]`, problem: `"${event}" is not an event the ${line.id} line uses` });
    });
  }
  return problems;
}
