/** Release advisories in a manifest (adr/0021): a closed, bounded list, validated like the rest. */
import { describe, expect, it } from "vitest";
import { validateManifest } from "../../../src/manifest/validate-manifest.js";
import { BridgeError } from "../../../src/util/errors.js";
import type { Advisory, Manifest } from "../../../src/manifest/types.js";
import { builtInManifest } from "../../support/hand-install.js";

const ADVISORY: Advisory = {
  id: "example-advisory",
  severity: "info",
  summary: "Something users of this release should know.",
  action: "Update to 9.9.9.",
  source: "https://example.com/advisory",
  fixedIn: "9.9.9",
};

async function withAdvisories(advisories: unknown): Promise<Manifest> {
  return { ...structuredClone(await builtInManifest()), advisories } as Manifest;
}

function problem(value: unknown): { field: string; message: string } {
  try {
    validateManifest(value, "/m/x.json");
  } catch (error) {
    expect(error).toBeInstanceOf(BridgeError);
    expect((error as BridgeError).code).toBe("INVALID_MANIFEST");
    return { field: String((error as BridgeError).details?.field), message: (error as BridgeError).message };
  }
  throw new Error("expected INVALID_MANIFEST");
}

describe("manifest advisories", () => {
  it("accepts advisories, with or without a fixing release, and none at all", async () => {
    const { fixedIn: _unfixed, ...open } = ADVISORY;
    expect(
      validateManifest(await withAdvisories([ADVISORY, { ...open, id: "open-one", severity: "warning" }]), "/m/x.json").advisories,
    ).toHaveLength(2);
    expect(validateManifest(await withAdvisories([]), "/m/x.json").advisories).toEqual([]);
    const none = structuredClone(await builtInManifest());
    delete none.advisories;
    expect(validateManifest(none, "/m/x.json").advisories).toBeUndefined();
  });

  it("the pinned 3.11.2 states the repository-snapshot uploader, fixed in 3.14.0", async () => {
    expect((await builtInManifest()).advisories).toEqual([
      expect.objectContaining({
        id: "repo-snapshot-uploader",
        severity: "warning",
        fixedIn: "3.14.0",
        source: expect.stringMatching(/^https:\/\//),
      }),
    ]);
  });

  it.each([
    ["an unknown key", { ...ADVISORY, link: "https://example.com" }, "advisories[0].link", "is not a known field"],
    ["a severity outside the closed list", { ...ADVISORY, severity: "critical" }, "advisories[0].severity", "must be one of"],
    ["a missing action", (({ action: _a, ...rest }) => rest)(ADVISORY), "advisories[0].action", "is missing"],
    ["a summary of two lines", { ...ADVISORY, summary: "one\ntwo" }, "advisories[0].summary", "invalid value"],
    ["a source that is not an https URL", { ...ADVISORY, source: "http://example.com" }, "advisories[0].source", "invalid value"],
    ["a fixing release that is not a version", { ...ADVISORY, fixedIn: "soon" }, "advisories[0].fixedIn", "invalid value"],
    ["an id with spaces", { ...ADVISORY, id: "two words" }, "advisories[0].id", "invalid value"],
  ])("refuses %s", async (_what, advisory, field, text) => {
    const found = problem(await withAdvisories([advisory]));
    expect(found.field).toBe(field);
    expect(found.message).toContain(text);
  });

  it("refuses two advisories with one id, and more than 16", async () => {
    expect(problem(await withAdvisories([ADVISORY, { ...ADVISORY, summary: "again" }])).field).toBe("advisories[1].id");
    const many = Array.from({ length: 17 }, (_, i) => ({ ...ADVISORY, id: `a${i}` }));
    expect(problem(await withAdvisories(many)).field).toBe("advisories");
  });
});
