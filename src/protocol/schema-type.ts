/**
 * The TypeScript type of one of our JSON Schemas (adr/0014-one-validation-stack.md): what ajv
 * accepts is what the code sees. Fields marked `unchecked.*` in ./event-schemas.ts get their
 * documented type without being validated; conditional (`if`/`then`) requirements are not part
 * of the type, only of the validation.
 */
import type { FromSchema, JSONSchema } from "json-schema-to-ts";

export type FromHostSchema<S extends JSONSchema> = FromSchema<
  S,
  {
    deserialize: [
      { pattern: { $comment: "unchecked: string" }; output: string },
      { pattern: { $comment: "unchecked: number" }; output: number },
      { pattern: { $comment: "unchecked: boolean" }; output: boolean },
      { pattern: { $comment: "unchecked: object" }; output: Record<string, unknown> },
    ];
  }
>;
