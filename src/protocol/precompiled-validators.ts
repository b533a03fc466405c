/**
 * Precompiled event validators. In src/ (tests, tsx) there are none and event-validation.ts
 * compiles its schemas with ajv on first use; `npm run build` replaces this module's output with
 * standalone ajv code generated from the same schemas and options (scripts/precompile-validators.mjs),
 * so the CLI compiles nothing at run time. Keys: "snapshot", "envelope", "top:<type>", "payload:<type>".
 */
import type { ValidateFunction } from "ajv";

export const precompiledEventValidators: Readonly<Record<string, ValidateFunction>> | undefined = undefined;
