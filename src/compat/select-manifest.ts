/**
 * Pure rules of steps 2 and 4 (docs/runtime-contract.md §3): which manifests accept the bundle metadata, and
 * which single manifest the app and CLI versions select.
 */
import type { LoadedManifest } from "../manifest/load-manifests.js";

export interface MetadataValues {
  runtime: unknown;
  entry: unknown;
  source: unknown;
}

export const METADATA_FIELDS = ["runtime", "entry", "source"] as const;

export function metadataMatches(candidate: LoadedManifest, actual: MetadataValues): boolean {
  return METADATA_FIELDS.every((field) => candidate.manifest.artifact.metadata[field] === actual[field]);
}

/** distinct expected values of a metadata field over the manifests (one value, or a sorted list) */
export function expectedValues(manifests: readonly LoadedManifest[], pick: (m: LoadedManifest) => string): string | string[] {
  const values = [...new Set(manifests.map(pick))].sort(compareVersions);
  return values.length === 1 ? values[0]! : values;
}

/** numeric-aware comparison so that 3.9.2 < 3.10.2 */
export function compareVersions(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

export function verifiedReleases(manifests: readonly LoadedManifest[]): string[] {
  return [...new Set(manifests.map((m) => m.manifest.artifact.appVersion))].sort(compareVersions);
}

export type Selection =
  | { kind: "selected"; manifest: LoadedManifest }
  | { kind: "unknown-app"; verified: string[] }
  | { kind: "cli-mismatch"; expectedCli: string[] }
  | { kind: "ambiguous"; matches: LoadedManifest[] };

/**
 * `candidates` are the manifests whose metadata matched (step 2). `cliVersion` undefined: it could
 * not be read without running the CLI, so the app version alone selects (one manifest, else ambiguous).
 */
export function selectManifest(candidates: readonly LoadedManifest[], appVersion: string, cliVersion: string | undefined): Selection {
  const byApp = candidates.filter((m) => m.manifest.artifact.appVersion === appVersion);
  if (byApp.length === 0) return { kind: "unknown-app", verified: verifiedReleases(candidates) };
  const local = byApp.filter((m) => m.manifest.trust === "local");
  if (local.length > 1) return { kind: "ambiguous", matches: local };
  const exact = cliVersion === undefined ? byApp : byApp.filter((m) => m.manifest.artifact.cliVersion === cliVersion);
  if (exact.length === 0) {
    return { kind: "cli-mismatch", expectedCli: [...new Set(byApp.map((m) => m.manifest.artifact.cliVersion))].sort(compareVersions) };
  }
  if (exact.length > 1) return { kind: "ambiguous", matches: exact };
  return { kind: "selected", manifest: exact[0]! };
}
