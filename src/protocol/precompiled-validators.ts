/**
 * Precompiled protocol validators. In src/ (tests, tsx) there are none and ./validators.ts
 * compiles its schemas with ajv on first use; `npm run build` replaces this module's output with
 * standalone ajv code generated from the same schemas and options (scripts/precompile-validators.mjs),
 * so the CLI compiles nothing at run time. Keys: those of PROTOCOL_SCHEMAS in ./validators.ts.
 */
import type { ValidateFunction } from "ajv";

export const precompiledValidators: Readonly<Record<string, ValidateFunction>> | undefined = undefined;
