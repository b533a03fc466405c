/**
 * session/delete with the fake host (adr/0032): ZCode's real delete (`zcode-task.deleteTask`) after
 * the bridge's close, including the close of a release still on its way (review 2026-12-07 #14);
 * an id ZCode does not list is deleted already (nothing sent); session/list leaves out the ids
 * `listDeletedTaskIds` names and fails clearly when it cannot say; a deleted id is not resumed.
 */
import { describe, expect, it } from "vitest";
import { MAX_ATTACHED_SESSIONS } from "../../../src/session/session-service.js";
import { until } from "../../support/until.js";
import { CWD, openSession, setup } from "./harness.js";

type Harness = ReturnType<typeof setup>;

/** an install with ZCode's real delete; `deleted` is what listDeletedTaskIds names (deleteTask adds to it) */
function withRealDelete(h: Harness, deleted = new Set<string>()): Set<string> {
  h.host.allowed.add("task.deleteTask");
  h.host.allowed.add("task.listDeletedTaskIds");
  h.host.handlers.set("task.deleteTask", (params) => void deleted.add(params.taskId as string));
  h.host.handlers.set("task.listDeletedTaskIds", () => [...deleted]);
  return deleted;
}

/** the native calls that concern one session, by name, in order */
function callsFor(h: Harness, sessionId: string, names: string[]): string[] {
  return h.host.records
    .filter((r) => r.kind === "call" && names.includes(r.name))
    .filter((r) => r.params.sessionId === sessionId || r.params.taskId === sessionId)
    .map((r) => r.name);
}

async function promptedSession(h: Harness): Promise<string> {
  const first = await openSession(h);
  h.host.script.onPrompt = (s) => {
    s.startTurn();
    s.complete();
  };
  await first.engine.prompt([{ type: "text", text: "keep me" }]);
  return first.opened.sessionId;
}

describe("session/delete through ZCode's real delete", () => {
  it("deletes a released session only after its release's native close is done", async () => {
    const h = setup();
    withRealDelete(h);
    const sessionId = await promptedSession(h);
    let finishClose: (() => void) | undefined;
    let closed = false;
    h.host.handlers.set(
      "agent.closeSession",
      () =>
        new Promise((resolve) => {
          finishClose = () => {
            closed = true;
            resolve(true);
          };
        }),
    );
    const deletedAfterClose: boolean[] = [];
    h.host.handlers.set("task.deleteTask", () => void deletedAfterClose.push(closed));
    for (let i = 1; i <= MAX_ATTACHED_SESSIONS; i++) await openSession(h);
    await until(() => finishClose !== undefined);
    expect(h.service.diagnostics().releasedSessions).toBe(1);

    const deleting = h.service.deleteSession(sessionId);
    // one macrotask: a delete that does not wait (all its steps are microtasks here) goes out now
    await new Promise((resolve) => setImmediate(resolve));
    expect(deletedAfterClose).toEqual([]);
    finishClose!();
    await deleting;
    expect(deletedAfterClose).toEqual([true]);
    expect(callsFor(h, sessionId, ["agent.closeSession", "task.deleteTask"])).toEqual(["agent.closeSession", "task.deleteTask"]);
    expect(h.service.diagnostics().releasedSessions).toBe(0);
  });

  it("closes an open session first, then deleteTask with its workspace; no V4 deleteSession, no resume", async () => {
    const h = setup();
    withRealDelete(h);
    const sessionId = await promptedSession(h);
    await h.service.deleteSession(sessionId);
    expect(
      callsFor(h, sessionId, ["agent.closeSession", "task.deleteTask", "agent.resumeSession", "agent.sendConversationCommandV4"]),
    ).toEqual(["agent.closeSession", "task.deleteTask"]);
    expect(h.host.callsOf("deleteTask")[0]!.params).toEqual({ taskId: sessionId, workspacePath: CWD });
  });

  it("answers an id ZCode does not list (unknown, or deleted already) without sending anything", async () => {
    const h = setup();
    const deleted = withRealDelete(h);
    await h.service.deleteSession("ses_never_was");
    const sessionId = await promptedSession(h);
    await h.service.closeSession(sessionId);
    deleted.add(sessionId);
    await h.service.deleteSession(sessionId);
    expect(h.host.callsOf("deleteTask")).toHaveLength(0);
    expect(h.host.callsOf("resumeSession")).toHaveLength(0);
  });

  it("leaves deleted sessions out of session/list, and does not resume them", async () => {
    const h = setup();
    withRealDelete(h);
    const gone = await promptedSession(h);
    const kept = await promptedSession(h);
    await h.service.deleteSession(gone);
    expect((await h.service.listSessions(CWD)).map((s) => s.sessionId)).toEqual([kept]);
    await expect(h.service.resumeSession({ sessionId: gone, cwd: CWD, replay: false })).rejects.toMatchObject({
      code: "SESSION_NOT_FOUND",
      message: expect.stringContaining("deleted"),
    });
    expect(h.host.callsOf("resumeSession")).toHaveLength(0);
  });

  it("fails session/list clearly when ZCode cannot say which sessions were deleted, or names too many", async () => {
    const h = setup();
    withRealDelete(h);
    await promptedSession(h);
    h.host.handlers.set("task.listDeletedTaskIds", () => {
      throw new Error("tasks index unavailable");
    });
    await expect(h.service.listSessions(CWD)).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
      message: expect.stringMatching(/did not say which sessions .* were deleted/),
    });
    h.host.handlers.set("task.listDeletedTaskIds", () => [1, 2]);
    await expect(h.service.listSessions(CWD)).rejects.toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    h.host.handlers.set("task.listDeletedTaskIds", () => Array.from({ length: 50_001 }, (_, i) => `ses_${i}`));
    await expect(h.service.listSessions(CWD)).rejects.toMatchObject({
      code: "NATIVE_PROTOCOL_ERROR",
      message: expect.stringContaining("50000"),
    });
  });

  it("refuses where the install has no real delete (UNSUPPORTED_ZCODE), after the bridge's close", async () => {
    const h = setup();
    const sessionId = await promptedSession(h);
    await expect(h.service.deleteSession(sessionId)).rejects.toMatchObject({ code: "UNSUPPORTED_ZCODE" });
    expect(h.host.callsOf("deleteTask")).toHaveLength(0);
  });
});
