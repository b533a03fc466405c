/**
 * The advisories a local manifest inherits (adr/0021): an advisory speaks of a release's host entry
 * (out/host/index.js), so a build onboarded with the very host entry of a pinned release carries
 * that release's advisories. Any other host entry inherits none: zcode-acp does not guess.
 */
import type { Advisory, Manifest } from "../manifest/types.js";

export function inheritedAdvisories(pinned: readonly { manifest: Manifest }[], hostIndex: { path: string; sha256: string }): Advisory[] {
  const same = pinned.filter(
    ({ manifest }) => manifest.artifact.hostIndex.path === hostIndex.path && manifest.artifact.hostIndex.sha256 === hostIndex.sha256,
  );
  const advisories: Advisory[] = [];
  for (const { manifest } of same) {
    for (const advisory of manifest.advisories ?? []) {
      if (!advisories.some((known) => known.id === advisory.id)) advisories.push(structuredClone(advisory));
    }
  }
  return advisories;
}
