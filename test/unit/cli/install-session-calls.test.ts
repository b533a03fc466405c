import { describe, expect, it } from "vitest";
import type { Assessment } from "../../../src/compat/types.js";
import { InstallSessionCalls } from "../../../src/cli/install-session-calls.js";
import { NO_SESSION_CALLS, sessionCallsOf } from "../../../src/native/session-calls.js";

const assessment = (agent: string[] | undefined, supported = true, task: string[] = []): Assessment =>
  ({
    supported,
    message: "",
    steps: [],
    manifest: agent ? { protocol: { allowlist: { agent, task } } } : undefined,
  }) as unknown as Assessment;

const DELETE_CALLS = ["deleteTask", "listDeletedTaskIds"];

describe("what an install offers of session management", () => {
  it("reads the allowlist: V4 commands give set_title, with the rows pages fork too; zcode-task's delete and deleted ids give delete", () => {
    expect(sessionCallsOf(undefined)).toEqual(NO_SESSION_CALLS);
    expect(sessionCallsOf({ agent: ["createSession"] })).toEqual({ delete: false, setTitle: false, fork: false });
    // ZCode's V4 deleteSession only closes: the V4 commands alone offer no delete
    expect(sessionCallsOf({ agent: ["sendConversationCommandV4"] })).toEqual({ delete: false, setTitle: true, fork: false });
    expect(sessionCallsOf({ agent: ["sendConversationCommandV4", "conversationRowsRangeV4"] })).toEqual({
      delete: false,
      setTitle: true,
      fork: true,
    });
    expect(sessionCallsOf({ agent: ["conversationRowsRangeV4"] })).toEqual({ delete: false, setTitle: false, fork: false });
    expect(sessionCallsOf({ agent: ["sendConversationCommandV4"], task: DELETE_CALLS })).toEqual({
      delete: true,
      setTitle: true,
      fork: false,
    });
    // the delete without the deleted ids would leave deleted sessions in session/list
    expect(sessionCallsOf({ agent: [], task: ["deleteTask"] })).toEqual({ delete: false, setTitle: false, fork: false });
    expect(sessionCallsOf({ agent: [], task: ["listDeletedTaskIds"] })).toEqual({ delete: false, setTitle: false, fork: false });
    expect(sessionCallsOf({ task: DELETE_CALLS })).toEqual({ delete: true, setTitle: false, fork: false });
  });

  it("decides from the first assessment once the warm-up is done; an unsupported one offers nothing", async () => {
    const calls = new InstallSessionCalls(60_000);
    const decided = calls.get(async () => calls.observe(assessment(["sendConversationCommandV4"], true, DELETE_CALLS)));
    expect(await decided).toEqual({ delete: true, setTitle: true, fork: false });
    calls.observe(assessment([]));
    expect(await calls.get(async () => undefined)).toEqual({ delete: true, setTitle: true, fork: false });

    const unsupported = new InstallSessionCalls(60_000);
    expect(await unsupported.get(async () => unsupported.observe(assessment(["sendConversationCommandV4"], false)))).toEqual(
      NO_SESSION_CALLS,
    );
  });

  it("offers nothing when the warm-up ends without an assessment, or does not end in time (and says so)", async () => {
    const none = new InstallSessionCalls(60_000);
    expect(await none.get(async () => undefined)).toEqual(NO_SESSION_CALLS);
    let told = 0;
    const slow = new InstallSessionCalls(20, () => told++);
    expect(await slow.get(() => new Promise<void>(() => {}))).toEqual(NO_SESSION_CALLS);
    expect(told).toBe(1);
  });
});
