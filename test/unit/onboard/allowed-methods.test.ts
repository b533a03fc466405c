/** An onboarded build is allowed only the methods its host bundle names; V4 input all together or not at all. */
import { describe, expect, it } from "vitest";
import { allowedMethods, describeAllowed } from "../../../src/onboard/allowed-methods.js";
import { findLine, V4_INPUT_METHODS } from "../../../src/manifest/release-lines.js";
import { pinnedManifest } from "../../support/verified-releases.js";

const base = pinnedManifest("3.12.3").manifest.protocol;
const line = findLine("zcode-task-v2")!;
const everything = Object.values(base.allowlist).flat().join("\n");

describe("allowedMethods", () => {
  it("a bundle that names every method keeps the base allowlist, V4 input included", () => {
    const allowed = allowedMethods(base, line, everything);
    expect(allowed.protocol).toEqual(base);
    expect(allowed.v4).toBe("named");
    expect(allowed.leftOut).toEqual([]);
    expect(describeAllowed(allowed).join("\n")).toContain("prompts go through sendText");
  });

  it("a bundle missing one V4 method loses all of them (prompts go through sendPrompt); required methods stay", () => {
    const bundle = everything.replace("attachmentAbortV4", "");
    const allowed = allowedMethods(base, line, bundle);
    for (const method of V4_INPUT_METHODS) expect(allowed.protocol.allowlist.agent).not.toContain(method);
    expect(allowed.protocol.allowlist.agent).toContain("sendPrompt");
    expect(allowed.v4).toBe("absent");
    expect(allowed.v4Missing).toEqual(["attachmentAbortV4"]);
    expect(describeAllowed(allowed).join("\n")).toContain(
      "V4 input left out: the host bundle does not name attachmentAbortV4; prompts go through sendPrompt, without steering or queueing",
    );
  });

  it("getContextComposition (3.18+), which the base lacks, is added only when the bundle names it, and said; never on zcode-task-v1", () => {
    expect(base.allowlist.agent).not.toContain("getContextComposition");
    const named = allowedMethods(base, line, `${everything}\ngetContextComposition`);
    expect(named.protocol.allowlist.agent).toContain("getContextComposition");
    expect(named.added).toEqual(["getContextComposition"]);
    expect(describeAllowed(named)).toContain(
      "added, named in the host bundle (newer than the nearest pinned release): getContextComposition",
    );
    const unnamed = allowedMethods(base, line, everything);
    expect(unnamed.protocol.allowlist.agent).not.toContain("getContextComposition");
    expect(unnamed.added).toEqual([]);
    const v1 = pinnedManifest("3.11.2").manifest.protocol;
    expect(allowedMethods(v1, findLine("zcode-task-v1")!, `${everything}\ngetContextComposition`).added).toEqual([]);
  });

  it("an optional method the bundle does not name is left out and said; a required one is kept (the line's evidence covers it)", () => {
    const bundle = everything.replace("readSessionEvents", "").replace("getView", "");
    const allowed = allowedMethods(base, line, bundle);
    expect(allowed.protocol.allowlist.agent).not.toContain("readSessionEvents");
    expect(allowed.leftOut).toEqual(["readSessionEvents"]);
    expect(allowed.protocol.allowlist.modelSelection).toEqual(["getView"]); // required on this line
    expect(describeAllowed(allowed)).toContain("left out, not named in the host bundle: readSessionEvents");
    expect(base.allowlist.agent).toContain("readSessionEvents"); // the base is not changed
  });

  it("a base without V4 input says nothing about it", () => {
    const v1 = pinnedManifest("3.10.2").manifest.protocol;
    const allowed = allowedMethods(v1, findLine("zcode-task-v1")!, everything + "\nreadWorkspaceState");
    expect(allowed.v4).toBe("not in base");
    expect(describeAllowed(allowed).join("\n")).not.toContain("V4");
  });
});
