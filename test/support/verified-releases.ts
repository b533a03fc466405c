/**
 * The releases this zcode-acp verifies, read from manifests/ (one pinned manifest per file), so
 * no test repeats the list: a new manifest is picked up by every test that means "each pinned
 * release". Each call reads the files again, so a test may change what it gets.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { implementedLineIds } from "../../src/manifest/release-lines.js";
import type { Manifest } from "../../src/manifest/types.js";

export const MANIFESTS_DIR = fileURLToPath(new URL("../../manifests/", import.meta.url));

export interface PinnedManifest {
  /** the file name in manifests/, e.g. zcode-3.11.2.json */
  file: string;
  path: string;
  manifest: Manifest;
}

const byVersion = (a: string, b: string): number => a.localeCompare(b, "en", { numeric: true });

/** every manifest in manifests/, ordered by app version */
export function pinnedManifests(): PinnedManifest[] {
  return readdirSync(MANIFESTS_DIR)
    .filter((file) => file.endsWith(".json"))
    .map((file) => {
      const path = join(MANIFESTS_DIR, file);
      return { file, path, manifest: JSON.parse(readFileSync(path, "utf8")) as Manifest };
    })
    .sort((a, b) => byVersion(a.manifest.artifact.appVersion, b.manifest.artifact.appVersion));
}

/** the app versions of the pinned manifests, ascending, e.g. ["3.10.2", "3.11.2", …] */
export function verifiedReleases(): string[] {
  return pinnedManifests().map((m) => m.manifest.artifact.appVersion);
}

/** the pinned manifest of `appVersion`; throws when no manifest pins it */
export function pinnedManifest(appVersion: string): PinnedManifest {
  const found = pinnedManifests().find((m) => m.manifest.artifact.appVersion === appVersion);
  if (!found) throw new Error(`no manifest in ${MANIFESTS_DIR} pins ZCode ${appVersion} (pinned: ${verifiedReleases().join(", ")})`);
  return found;
}

/** the newest pinned release of `lineId` not newer than `appVersion` (what `onboard` compares a build with) */
export function nearestPinnedOfLine(lineId: string, appVersion: string): PinnedManifest {
  const ofLine = pinnedManifests().filter((m) => m.manifest.protocol.id === lineId);
  const found = ofLine.filter((m) => byVersion(m.manifest.artifact.appVersion, appVersion) <= 0).at(-1) ?? ofLine[0];
  if (!found) throw new Error(`no manifest in ${MANIFESTS_DIR} pins a release of the line ${lineId}`);
  return found;
}

/** "zcode-task-v1, zcode-task-v2": the implemented lines as the refusal messages list them, escaped for a RegExp */
export function implementedLinesPattern(): string {
  return implementedLineIds()
    .join(", ")
    .replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
