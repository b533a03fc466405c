/**
 * Building blocks shared by the transcribed ZCode schemas (legacy.ts, v4.ts).
 *
 * Source: ZCode's shared protocol package, `jimpablo/ZCode@aac47556` (ZCode 3.15.1, Apache-2.0):
 * `packages/shared/src/zcode-protocol-legacy-types.ts` and `packages/shared/src/zcode-protocol-v4/core.ts`.
 * These are the shapes, transcribed in our own words as zod 4 schemas (the licence permits reuse;
 * we still write our own code, docs/architecture.md). How to update them: adr/0035.
 */
import { z } from "zod";

/** A string that is not empty once trimmed (ZCode's `nonEmptyString`). */
export const nonEmpty = z.string().trim().min(1);
/** Any JSON object (ZCode's `jsonObjectSchema`). */
export const jsonObject = z.record(z.string(), z.unknown());
/** Unix milliseconds, a non-negative integer (the legacy protocol's timestamps). */
export const timestampMs = z.number().int().nonnegative();
/** V4 timestamps: Unix milliseconds of the CLI's clock, any number (`core.ts` `timestampSchema`). */
export const v4Timestamp = z.number();

/**
 * `model-selection.ts` `modelSelectionSchema` is not in the stored tree at this commit's index;
 * a model selection is checked as an object only (not transcribed: **opaque here**).
 */
export const modelSelection = jsonObject;
