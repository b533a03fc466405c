import { describe, expect, it } from "vitest";
import { tmpdir } from "node:os";
import { realpathSync } from "node:fs";
import { MAX_TITLE_CHARS, parseFork, parseSetTitle } from "../../../src/acp/session-management.js";
import { sessionManagementCapabilities } from "../../../src/acp/session-management-capabilities.js";

describe("session management params and capabilities", () => {
  it("normalises a title: line breaks to spaces, trimmed, cut by characters; refuses empty ones", () => {
    expect(parseSetTitle({ sessionId: "s", title: "  a\r\nb\tc  " })).toEqual({ sessionId: "s", title: "a b c" });
    const long = "😀".repeat(MAX_TITLE_CHARS + 5);
    expect(Array.from(parseSetTitle({ sessionId: "s", title: long }).title)).toHaveLength(MAX_TITLE_CHARS);
    for (const bad of [{ sessionId: "s", title: " \n " }, { sessionId: "s" }, { title: "x" }, null, { sessionId: "", title: "x" }]) {
      expect(() => parseSetTitle(bad)).toThrow(expect.objectContaining({ code: "INVALID_PARAMS" }));
    }
  });

  it("reads a fork's JetBrains AIR messageId and checks cwd and mcpServers", async () => {
    const cwd = realpathSync(tmpdir());
    expect(await parseFork({ sessionId: "s", cwd })).toEqual({ sessionId: "s", cwd, mcpServers: undefined, messageId: undefined });
    expect(await parseFork({ sessionId: "s", cwd, mcpServers: [], _meta: { jetbrains: { air: { fork: { messageId: "m1" } } } } })).toEqual({
      sessionId: "s",
      cwd,
      mcpServers: [],
      messageId: "m1",
    });
    for (const bad of [
      { sessionId: "s", cwd: "relative" },
      { sessionId: "s", cwd, mcpServers: "x" },
      { sessionId: "s", cwd, _meta: { jetbrains: { air: { fork: { messageId: 3 } } } } },
      { cwd },
    ]) {
      await expect(parseFork(bad)).rejects.toMatchObject({ code: "INVALID_PARAMS" });
    }
  });

  it("advertises only what the install offers", () => {
    expect(sessionManagementCapabilities(undefined)).toEqual({});
    expect(sessionManagementCapabilities({ delete: true, setTitle: true, fork: false })).toEqual({ delete: {}, title: {} });
    expect(sessionManagementCapabilities({ delete: true, setTitle: true, fork: true })).toEqual({ delete: {}, title: {}, fork: {} });
  });
});
