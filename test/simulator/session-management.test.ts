/**
 * The simulated host's session management as ZCode's source has it (shared/reference/
 * zcode-3.15.1-source.md §2.5; fixtures/README.md): the V4 `deleteSession` only closes (the session
 * stays listed and can be resumed; a session that is not live is refused `proto.sessionNotFound`);
 * the desktop's delete is zcode-task `deleteTask`, which hides the task from the desktop's own list
 * (`listTasks`) and names it in `listDeletedTaskIds` while the agent keeps the conversation; rows
 * say where a fork is allowed (`actions.canFork`: the last answer of a finished turn), and
 * `forkAssistant` refuses any other row as ZCode's handler does.
 */
import { describe, expect, it } from "vitest";
import type { Any } from "./support/host-harness.js";
import { promptToEnd, sessionRig, WS, type SessionRig } from "./support/session-helpers.js";
import { command, handshake } from "./support/v4-helpers.js";

async function rows(rig: SessionRig): Promise<Any> {
  return rig.conn.agent.conversationRowsRangeV4({ workspacePath: WS, sessionId: rig.sessionId, limit: 200 });
}

function fork(rig: SessionRig, page: Any, row: Any): Promise<Any> {
  return command(
    rig,
    "forkAssistant",
    { target: { rowId: row.rowId, entityId: row.entityId } },
    { baseRevision: page.atRevision, baseLogEpoch: page.atLogEpoch },
  );
}

describe("the desktop's task delete and the V4 deleteSession (simulated 3.18.2)", () => {
  it("deleteTask hides the task from listTasks and names it in listDeletedTaskIds; the agent keeps the session", async () => {
    const rig = await sessionRig({ release: "3.18.2" });
    await promptToEnd(rig, "keep me");
    const ids = async (): Promise<string[]> => (await rig.conn.task.listTasks({ workspacePath: WS })).map((t: Any) => t.taskId);
    expect(await ids()).toEqual([rig.sessionId]);
    expect(await rig.conn.task.listDeletedTaskIds({ workspacePath: WS })).toEqual([]);

    await expect(rig.conn.task.deleteTask({ taskId: rig.sessionId, workspacePath: WS })).resolves.toBeUndefined();
    expect(await ids()).toEqual([]);
    expect(await rig.conn.task.listDeletedTaskIds({ workspacePath: WS })).toEqual([rig.sessionId]);
    // "the CLI session content is kept": the agent still lists and resumes it
    expect((await rig.conn.agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
    await expect(rig.conn.agent.resumeSession({ workspacePath: WS, sessionId: rig.sessionId })).resolves.toMatchObject({
      session: { sessionId: rig.sessionId },
    });
    // an unknown task: nothing marked (GUESS: resolves)
    await expect(rig.conn.task.deleteTask({ taskId: "ses_never_was", workspacePath: WS })).resolves.toBeUndefined();
    expect(await rig.conn.task.listDeletedTaskIds({ workspacePath: WS })).toEqual([rig.sessionId]);
    await expect(rig.conn.task.deleteTask({ taskId: rig.sessionId })).rejects.toThrow(/workspacePath/);
  });

  it("V4 deleteSession closes the live session only: it stays listed, a second one is refused sessionNotFound", async () => {
    const rig = await sessionRig({ release: "3.18.2" });
    await handshake(rig);
    await promptToEnd(rig, "keep me");
    expect(await command(rig, "deleteSession", {})).toMatchObject({ status: "accepted" });
    expect((await rig.conn.agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
    expect(await rig.conn.task.listDeletedTaskIds({ workspacePath: WS })).toEqual([]);
    expect(await command(rig, "deleteSession", {})).toMatchObject({ status: "rejected", reasonCode: "proto.sessionNotFound" });
  });

  it("has no task delete before 3.16 (3.14.4)", async () => {
    const rig = await sessionRig({ release: "3.14.4" });
    await expect(rig.conn.task.deleteTask({ taskId: rig.sessionId, workspacePath: WS })).rejects.toThrow();
  });
});

describe("forkAssistant only where the rows allow it (simulated 3.14.4)", () => {
  it("canFork on each finished turn's last answer; an earlier segment, a question and a changed entity are refused as ZCode does", async () => {
    const rig = await sessionRig({ release: "3.14.4" });
    await handshake(rig);
    await promptToEnd(rig, "sim:todos");
    const page = await rows(rig);
    const answers = page.rows.filter((r: Any) => r.kind === "assistantText");
    expect(answers.map((r: Any) => r.actions)).toEqual([undefined, { canFork: true }]); // ZCode: `canFork: true` or no key
    expect(page.rows.filter((r: Any) => r.kind !== "assistantText").every((r: Any) => r.actions === undefined)).toBe(true);
    const user = page.rows.find((r: Any) => r.kind === "userInput");

    expect(await fork(rig, page, answers[0])).toMatchObject({ status: "failed", reasonCode: "fault.command.executionFailed" });
    expect(await fork(rig, page, { ...user, entityId: user.entityId ?? "question" })).toMatchObject({
      status: "failed",
      reasonCode: "guard.forkAssistantOnly",
    });
    expect(await fork(rig, page, { ...answers[1], entityId: "other" })).toMatchObject({
      status: "failed",
      reasonCode: "guard.forkTargetNotStable",
    });
    const forked = await fork(rig, page, answers[1]);
    expect(forked).toMatchObject({ status: "accepted", result: { type: "forkAssistant", sessionId: expect.any(String) } });
  });

  it("the profile knob v4ForkRefusal refuses every fork with its guard", async () => {
    const rig = await sessionRig({ release: "3.14.4", profile: { v4ForkRefusal: "guard.forkTargetAmbiguous" } });
    await handshake(rig);
    await promptToEnd(rig, "first");
    const page = await rows(rig);
    const answer = page.rows.find((r: Any) => r.kind === "assistantText");
    expect(answer.actions).toEqual({ canFork: true });
    expect(await fork(rig, page, answer)).toMatchObject({ status: "failed", reasonCode: "guard.forkTargetAmbiguous" });
  });
});
