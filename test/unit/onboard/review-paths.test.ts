/** Which paths an onboarded build would use, and the probe report's redaction (docs/runtime-contract.md §8). */
import { describe, expect, it } from "vitest";
import { checklistMethods, inputPath, readPath } from "../../../src/onboard/inspect.js";
import { redactText, shareableCapabilities } from "../../../src/onboard/probe-report.js";
import { V4_INPUT_METHODS } from "../../../src/manifest/release-lines.js";

describe("the paths the review reports", () => {
  it("reads through onDynamicSessionEvent where the bundle names it, also beside the V4 read path", () => {
    expect(readPath("x onDynamicSessionEvent y")).toEqual({ path: "legacy onDynamicSessionEvent", missing: [] });
    const both = readPath("onDynamicSessionEvent subscribeConversationV4 onDynamicConversationFrame");
    expect(both.missing).toEqual([]);
    expect(both.path).toContain(
      "also names the V4 read path: subscribeConversationV4, onDynamicConversationFrame; read only where the running host does not serve the legacy stream",
    );
  });

  it("a bundle with only the V4 read path: read through V4 frames when it names every read call, else what it lacks", () => {
    const all = readPath(
      "subscribeConversationV4 onDynamicConversationFrame resyncConversationV4 unsubscribeConversationV4 conversationRowsRangeV4",
    );
    expect(all).toEqual({ path: "V4 conversation frames (the zcode-task-v3 line)", missing: [] });
    const some = readPath("subscribeConversationV4");
    expect(some.path).toMatch(/^V4 conversation frames, incomplete/);
    expect(some.missing).toEqual([
      "onDynamicConversationFrame",
      "resyncConversationV4",
      "unsubscribeConversationV4",
      "conversationRowsRangeV4",
    ]);
    expect(readPath("nothing").missing).toEqual(["onDynamicSessionEvent"]);
  });

  it("input goes through V4 only when every V4 input call is named, else sendPrompt", () => {
    expect(inputPath(`${V4_INPUT_METHODS.join(" ")} sendPrompt`)).toMatch(/^V4 input/);
    expect(inputPath(`${V4_INPUT_METHODS.slice(1).join(" ")} sendPrompt`)).toMatch(/^legacy sendPrompt/);
    expect(inputPath("")).toMatch(/^none this zcode-acp knows/);
  });

  it("the checklist methods split into named and not named", () => {
    const { named, notNamed } = checklistMethods("stopSubagent getContextComposition sendPrompt");
    expect(named).toEqual(["sendPrompt", "getContextComposition", "stopSubagent"]);
    expect(notNamed).toContain("onDynamicSessionEvent");
  });
});

describe("the probe report's redaction", () => {
  const context = { homes: ["/home/ann", "C:\\Users\\ann"], user: "ann" };

  it("masks home directories, user names in paths, e-mail addresses and tokens", () => {
    expect(redactText("at /home/ann/.zcode/db and C:\\Users\\ann\\AppData\\Local", context)).toBe("at ~/.zcode/db and ~\\AppData\\Local");
    expect(redactText("C:/Users/ann/x", context)).toBe("~/x");
    expect(redactText("/Users/bob/Library and /home/carol/x", context)).toBe("/Users/<user>/Library and /home/<user>/x");
    expect(redactText("/tmp/ann/file", context)).toBe("/tmp/<user>/file");
    expect(redactText("signed in as ann@example.com", context)).toBe("signed in as <email>");
    expect(redactText("key sk_live_abcdefghijklmnopqrstuvwxyz012", context)).toBe("key <token>");
    expect(redactText("protocol 3, annotations", context)).toBe("protocol 3, annotations");
  });

  it("keeps capability flags and drops anything account-like or structured", () => {
    expect(
      shareableCapabilities({
        nativeDialogs: true,
        compression: "none",
        maxFrames: 4,
        authToken: "abc",
        userEmail: "a@b.c",
        workspace: "/home/ann/project",
        nested: { a: 1 },
      }),
    ).toEqual({ nativeDialogs: true, compression: "none", maxFrames: 4, workspace: "(redacted)", nested: "(object)" });
    expect(shareableCapabilities(null)).toEqual({});
  });
});
