/** Optional parameters a newer agent CLI dropped are sent only to builds whose manifest names an older CLI (docs/runtime-contract.md §8). */
import { describe, expect, it } from "vitest";
import { acceptsOptionalParam } from "../../../src/manifest/release-lines.js";
import { loadManifests } from "../../../src/manifest/load-manifests.js";

describe("listSessions includeArchived (dropped in CLI 0.17.0)", () => {
  it("every pinned manifest (CLI 0.16.x and older) keeps sending it, as before", async () => {
    const { manifests } = await loadManifests();
    expect(manifests.length).toBeGreaterThan(0);
    for (const { manifest } of manifests)
      expect(acceptsOptionalParam(manifest.artifact.cliVersion, "agent", "listSessions", "includeArchived")).toBe(true);
  });

  it("a CLI of 0.17.0 or later, a pre-release of 0.17.0, or an unknown CLI version never gets it", () => {
    for (const version of ["0.17.0", "0.17.1", "0.17.0-rc.1", "1.0.0", "unknown", ""])
      expect(acceptsOptionalParam(version, "agent", "listSessions", "includeArchived"), version).toBe(false);
    for (const version of ["0.16.9", "0.16.10-beta", "0.9.99"])
      expect(acceptsOptionalParam(version, "agent", "listSessions", "includeArchived"), version).toBe(true);
  });

  it("parameters no CLI dropped are unaffected", () => {
    expect(acceptsOptionalParam("unknown", "agent", "listSessions", "limit")).toBe(true);
  });
});
