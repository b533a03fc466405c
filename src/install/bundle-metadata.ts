/**
 * `glm/.node-bundle-meta.json`: the bundle metadata of the agent CLI (docs/runtime-contract.md §1). Only
 * `runtime`, `entry`, `source` and `platform` are used; other fields may appear. The raw SHA-256
 * of the file is kept as a diagnostic.
 */
import { readFile, stat } from "node:fs/promises";
import { describeError } from "../util/errors.js";
import { installProblem } from "./install-problem.js";
import { sha256OfBuffer } from "./sha256.js";

export interface BundleMetadata {
  /** SHA-256 of the file bytes (diagnostic only) */
  rawSha256: string;
  runtime: unknown;
  entry: unknown;
  source: unknown;
  platform: unknown;
}

const MAX_METADATA_BYTES = 256 * 1024;
const LABEL = "glm/.node-bundle-meta.json";

export async function readBundleMetadata(file: string): Promise<BundleMetadata> {
  const { size } = await stat(file);
  if (size > MAX_METADATA_BYTES) {
    throw installProblem(`${LABEL} is ${size} bytes, far more than bundle metadata. Reinstall ZCode.`, {
      [LABEL]: { expected: `at most ${MAX_METADATA_BYTES} bytes`, actual: size },
    });
  }
  const bytes = await readFile(file);
  const rawSha256 = sha256OfBuffer(bytes);
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw installProblem(
      `${LABEL} is not valid JSON (${describeError(error)}). Reinstall ZCode.`,
      { [LABEL]: { expected: "a JSON object", actual: "invalid JSON" } },
      error,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw installProblem(`${LABEL} is not a JSON object. Reinstall ZCode.`, {
      [LABEL]: { expected: "a JSON object", actual: Array.isArray(data) ? "array" : typeof data },
    });
  }
  const record = data as Record<string, unknown>;
  return { rawSha256, runtime: record.runtime, entry: record.entry, source: record.source, platform: record.platform };
}
