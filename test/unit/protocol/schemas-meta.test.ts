/**
 * Our JSON Schemas are compiled without meta-schema validation at run time (start-up cost, see
 * src/protocol/event-validation.ts and src/manifest/validate-manifest.ts); here each one is
 * validated against the JSON Schema meta-schema and compiled in strict mode, as ajv would at run
 * time with validation on.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { MANIFEST_SCHEMA } from "../../../src/manifest/manifest-schema.js";
import { PROTOCOL_SCHEMAS } from "../../../src/protocol/validators.js";

const schemas: Array<[string, unknown]> = [["manifest", MANIFEST_SCHEMA], ...Object.entries(PROTOCOL_SCHEMAS)];

describe("JSON Schemas against the meta-schema", () => {
  it.each(schemas)("%s is a valid schema and compiles strictly", (_name, schema) => {
    const ajv = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true });
    expect(ajv.validateSchema(schema as object), JSON.stringify(ajv.errors)).toBe(true);
    expect(() => ajv.compile(schema as object)).not.toThrow();
  });

  it("the check can fail: a misspelt type is refused", () => {
    const ajv = new Ajv({ strict: true });
    expect(ajv.validateSchema({ type: "strnig" })).toBe(false);
  });
});
