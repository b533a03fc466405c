/**
 * The precompiled manifest validator. In src/ (tests, tsx) there is none and validate-manifest.ts
 * compiles the schema with ajv on first use; `npm run build` replaces this module's output with
 * standalone ajv code generated from the same schema and options (scripts/precompile-validators.mjs),
 * so no ajv compile sits before a host launch or in `check`.
 */
import type { ValidateFunction } from "ajv";
import type { Manifest } from "./types.js";

export const precompiledManifestValidator: ValidateFunction<Manifest> | undefined = undefined;
