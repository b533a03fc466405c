/**
 * Released sessions (adr/0017) with the fake host: the reopen sets again the mode the session had
 * and checks it, a failed reopen keeps the record (the next use tries again, after the failed
 * attempt's native close), cancel does not reopen, and a new open of an id waits for that id's
 * pending native close.
 */
import { describe, expect, it } from "vitest";
import { MAX_ATTACHED_SESSIONS } from "../../../src/session/session-service.js";
import { BridgeError } from "../../../src/util/errors.js";
import { until } from "../../support/until.js";
import { CWD, openSession, setup } from "./harness.js";

type Harness = ReturnType<typeof setup>;

/** a prompted session (ZCode keeps it: reopened by resumeSession) in plan, released */
async function releasedInPlan(): Promise<{ h: Harness; sessionId: string }> {
  const h = setup();
  const first = await openSession(h);
  h.host.script.onPrompt = (s) => {
    s.startTurn();
    s.complete();
  };
  await first.engine.prompt([{ type: "text", text: "keep me" }]);
  await first.engine.setMode("plan");
  for (let i = 1; i <= MAX_ATTACHED_SESSIONS; i++) await openSession(h);
  await until(() => h.host.callsOf("closeSession").length === 1);
  expect(h.service.diagnostics().releasedSessions).toBe(1);
  return { h, sessionId: first.opened.sessionId };
}

/** ZCode loses plan on the resume (upstream 3.12.3 after a cold resume) */
function resumeLosesPlan(h: Harness): void {
  h.host.handlers.set("agent.resumeSession", (params) => {
    const session = h.host.session(params.sessionId as string);
    session.snapshot.settings.mode.current = "build";
    session.snapshot.session.mode = "build";
    return structuredClone(session.snapshot);
  });
}

/** setMode: fails the first `failures` calls; with `ignore`, answers without changing the mode */
function setModeFails(h: Harness, options: { failures?: number; ignore?: boolean }): void {
  let failures = options.failures ?? 0;
  h.host.handlers.set("agent.setMode", (params) => {
    if (failures-- > 0) throw new BridgeError("HOST_TIMEOUT", "setMode timed out");
    const session = h.host.session(params.sessionId as string);
    if (!options.ignore) {
      session.snapshot.settings.mode.current = params.mode;
      session.snapshot.session.mode = params.mode;
    }
    return structuredClone(session.snapshot);
  });
}

/** the session's native resumes and closes, in order */
function opensAndCloses(h: Harness, sessionId: string): string[] {
  return h.host.records
    .filter((r) => r.kind === "call" && (r.name === "agent.resumeSession" || r.name === "agent.closeSession"))
    .filter((r) => r.params.sessionId === sessionId)
    .map((r) => r.name.slice("agent.".length));
}

describe("released sessions", () => {
  it("a session released in plan whose resume lost plan comes back in plan (the bridge sets it again)", async () => {
    const { h, sessionId } = await releasedInPlan();
    resumeLosesPlan(h);
    const engine = await h.service.acquire(sessionId);
    expect(engine.modes().currentModeId).toBe("plan");
    expect(h.host.callsOf("resumeSession").at(-1)!.params.sessionId).toBe(sessionId);
    expect(h.host.callsOf("setMode").at(-1)!.params).toMatchObject({ sessionId, mode: "plan" });
  });

  it("a reopen that cannot set the mode again fails clearly and keeps the record; the next use tries again", async () => {
    const { h, sessionId } = await releasedInPlan();
    resumeLosesPlan(h);
    setModeFails(h, { failures: 1 });
    const sends = h.host.callsOf("sendPrompt").length;

    const engine = h.service.session(sessionId);
    const cancelsBefore = engine.cancelCount;
    await expect(engine.whenOpen()).rejects.toThrow(
      /could not be reopened with its mode "plan".*setMode timed out.*send the request again/,
    );
    await expect(engine.prompt([{ type: "text", text: "not in build" }], cancelsBefore)).rejects.toThrow();
    expect(h.host.callsOf("sendPrompt")).toHaveLength(sends);
    // released again at once (what the failed attempt opened is closed natively)
    expect(h.service.diagnostics().releasedSessions).toBe(1);
    expect(h.service.session(sessionId, { reopen: false })).toBeUndefined();

    const again = await h.service.acquire(sessionId);
    expect(again).not.toBe(engine);
    expect(again.modes().currentModeId).toBe("plan");
    await expect(again.prompt([{ type: "text", text: "in plan" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("sendPrompt")).toHaveLength(sends + 1);
    // the retry's resume follows the failed attempt's native close
    expect(opensAndCloses(h, sessionId)).toEqual(["closeSession", "resumeSession", "closeSession", "resumeSession"]);
  });

  it("a reopen whose mode stays other than the record's fails rather than run in it", async () => {
    const { h, sessionId } = await releasedInPlan();
    resumeLosesPlan(h);
    setModeFails(h, { ignore: true });
    await expect(h.service.acquire(sessionId)).rejects.toThrow(
      /reopened with other settings than it had \(mode "build" instead of "plan"\)/,
    );
    await until(() => opensAndCloses(h, sessionId).length === 3);
    expect(h.service.diagnostics().releasedSessions).toBe(1);
  });

  it("cancel of a released session does not reopen it", async () => {
    const { h, sessionId } = await releasedInPlan();
    const resumes = h.host.callsOf("resumeSession").length;
    expect(h.service.session(sessionId, { reopen: false })).toBeUndefined();
    expect(h.host.callsOf("resumeSession")).toHaveLength(resumes);
    expect(h.service.diagnostics().releasedSessions).toBe(1);
  });

  it("close of a released session whose native close is still on its way, then resume: the resume waits for that close", async () => {
    const h = setup();
    const first = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete();
    };
    await first.engine.prompt([{ type: "text", text: "keep me" }]);
    const sessionId = first.opened.sessionId;
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
    const resumedAfterClose: boolean[] = [];
    h.host.handlers.set("agent.resumeSession", (params) => {
      resumedAfterClose.push(closed);
      return structuredClone(h.host.session(params.sessionId as string).snapshot);
    });
    for (let i = 1; i <= MAX_ATTACHED_SESSIONS; i++) await openSession(h);
    await until(() => finishClose !== undefined);

    await h.service.closeSession(sessionId); // the released record goes; its native close is still held
    const resumed = h.service.resumeSession({ sessionId, cwd: CWD, replay: false });
    // one macrotask: a resume that does not wait (all its steps are microtasks here) goes out now
    await new Promise((resolve) => setImmediate(resolve));
    finishClose!();
    await expect(resumed).resolves.toMatchObject({ sessionId });
    expect(resumedAfterClose).toEqual([true]);
    expect(opensAndCloses(h, sessionId)).toEqual(["closeSession", "resumeSession"]);
  });
});
