/**
 * Which line an unpinned build belongs to (src/onboard/line-evidence.ts): a bundle that still
 * reads through the legacy stream is never taken for zcode-task-v3, although it names every V4
 * call v3 needs (3.14 bundles do); one without the legacy stream is.
 */
import { describe, expect, it } from "vitest";
import { chooseLine, lineEvidence } from "../../../src/onboard/line-evidence.js";
import { RELEASE_LINES } from "../../../src/manifest/release-lines.js";

const v3 = RELEASE_LINES.find((line) => line.id === "zcode-task-v3")!;
const v2 = RELEASE_LINES.find((line) => line.id === "zcode-task-v2")!;
const names = (line: typeof v3): string[] => [...Object.values(line.requiredMethods).flatMap((list) => [...(list ?? [])]), ...line.markers];

describe("onboard: the line of an unpinned build", () => {
  it("takes a bundle that names the V4 read calls and still the legacy stream for zcode-task-v2, not v3", () => {
    const bundle = [...names(v2), ...names(v3), "onDynamicSessionEvent", "sendPrompt"].join(" ");
    const evidence = lineEvidence(bundle);
    expect(evidence.find((e) => e.id === "zcode-task-v3")!.missing).toEqual(["no onDynamicSessionEvent (the bundle still names it)"]);
    expect(chooseLine(evidence)?.id).toBe("zcode-task-v2");
  });

  it("takes a bundle without the legacy stream for zcode-task-v3", () => {
    const bundle = names(v3).join(" ");
    expect(chooseLine(lineEvidence(bundle))?.id).toBe("zcode-task-v3");
  });
});
