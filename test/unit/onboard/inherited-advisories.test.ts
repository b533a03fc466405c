/** A local manifest inherits the advisories of a pinned release only with that release's very host entry (adr/0021). */
import { describe, expect, it } from "vitest";
import { inheritedAdvisories } from "../../../src/onboard/inherited-advisories.js";
import { pinnedManifest } from "../../support/verified-releases.js";

describe("inheritedAdvisories", () => {
  it("the host entry of the pinned 3.12.3 inherits its advisory; another entry inherits none", () => {
    const pinned = [pinnedManifest("3.11.2"), pinnedManifest("3.12.3")];
    const entry = pinned[1]!.manifest.artifact.hostIndex;
    expect(inheritedAdvisories(pinned, entry).map((a) => a.id)).toEqual(["repo-snapshot-uploader"]);
    expect(inheritedAdvisories(pinned, { ...entry, sha256: "0".repeat(64) })).toEqual([]);
    expect(inheritedAdvisories(pinned, { path: "out/host/other.js", sha256: entry.sha256 })).toEqual([]);
  });

  it("a pinned release without advisories passes none on", () => {
    const pinned = [pinnedManifest("3.10.2")];
    expect(pinned[0]!.manifest.advisories).toBeUndefined();
    expect(inheritedAdvisories(pinned, pinned[0]!.manifest.artifact.hostIndex)).toEqual([]);
  });
});
