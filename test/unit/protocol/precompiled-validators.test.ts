/**
 * The build's precompiled validators (scripts/precompile-validators.mjs, used by the built CLI)
 * against the same schemas compiled at run time (what src/ does): the same verdict and the same
 * errors for valid documents, their mutations and random values. Needs `npm run build`.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { MANIFEST_AJV_OPTIONS } from "../../../src/manifest/validate-manifest.js";
import { MANIFEST_SCHEMA } from "../../../src/manifest/manifest-schema.js";
import { PROTOCOL_AJV_OPTIONS, PROTOCOL_SCHEMAS } from "../../../src/protocol/validators.js";
import { makeSnapshot } from "../../support/fake-host.js";
import { pinnedManifests } from "../../support/verified-releases.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const BUILT = join(ROOT, "build/tsc");

let events: Record<string, ValidateFunction>;
let manifest: ValidateFunction;

beforeAll(async () => {
  const eventsFile = join(BUILT, "protocol/precompiled-validators.js");
  const manifestFile = join(BUILT, "manifest/precompiled-validator.js");
  if (!existsSync(eventsFile) || !existsSync(manifestFile))
    throw new Error('the precompiled validators are missing: run "npm run build" first');
  events = (await import(pathToFileURL(eventsFile).href)).precompiledValidators;
  manifest = (await import(pathToFileURL(manifestFile).href)).precompiledManifestValidator;
});

/** [verdict, errors] of a validator on a value */
function outcome(validate: ValidateFunction, value: unknown): [boolean, unknown] {
  const ok = validate(value);
  return [ok, ok ? null : JSON.parse(JSON.stringify(validate.errors))];
}

/** the value with the property at a random path deleted or replaced */
const mutation = (base: unknown) =>
  fc.tuple(fc.nat(), fc.oneof(fc.constant(undefined), fc.anything({ maxDepth: 2 }))).map(([pick, replacement]) => {
    const copy = structuredClone(base) as Record<string, unknown>;
    const paths: Array<[Record<string, unknown>, string]> = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== "object") return;
      for (const [key, child] of Object.entries(node)) {
        paths.push([node as Record<string, unknown>, key]);
        walk(child);
      }
    };
    walk(copy);
    if (paths.length === 0) return copy;
    const [parent, key] = paths[pick % paths.length]!;
    if (replacement === undefined) delete parent[key];
    else parent[key] = replacement;
    return copy;
  });

describe("precompiled validators", () => {
  it("cover every event schema", () => {
    expect(Object.keys(events).sort()).toEqual(Object.keys(PROTOCOL_SCHEMAS).sort());
  });

  it("the manifest validator agrees with ajv at run time on the built-in manifests and their mutations", () => {
    const runtime = new Ajv(MANIFEST_AJV_OPTIONS).compile(MANIFEST_SCHEMA);
    const documents = pinnedManifests().map((m) => m.manifest as unknown);
    expect(documents.length).toBeGreaterThan(0);
    for (const doc of documents) expect(outcome(manifest, doc)).toEqual([true, null]);
    fc.assert(
      fc.property(fc.constantFrom(...documents).chain(mutation), (value) => {
        expect(outcome(manifest, value)).toEqual(outcome(runtime, value));
      }),
      { numRuns: 300 },
    );
  });

  it("the event validators agree with ajv at run time on a snapshot, its mutations and random values", () => {
    const ajv = new Ajv(PROTOCOL_AJV_OPTIONS);
    const snapshot = makeSnapshot("ses_1", "/w");
    const runtime = (key: string): ValidateFunction =>
      ajv.getSchema(key) ?? (ajv.addSchema(PROTOCOL_SCHEMAS[key]!, key), ajv.getSchema(key)!);
    expect(outcome(events.snapshot!, snapshot)).toEqual([true, null]);
    fc.assert(
      fc.property(mutation(snapshot), (value) => {
        expect(outcome(events.snapshot!, value)).toEqual(outcome(runtime("snapshot"), value));
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(PROTOCOL_SCHEMAS)), fc.anything({ maxDepth: 3 }), (key, value) => {
        expect(outcome(events[key]!, value)).toEqual(outcome(runtime(key), value));
      }),
      { numRuns: 300 },
    );
  });
});
