import { describe, expect, it } from "vitest";
import { promptToEnd, sessionRig } from "./support/session-helpers.js";
import { terminals } from "./support/envelopes.js";

describe("reverse requests mid-turn (docs/zcode-host.md §2.7, §2.8, §12.2 #21-22)", () => {
  it("browser: navigate, local-media and feedback requests are answered and recorded", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:browser url=https://example.org/");
    expect(terminal.payload.response).toBe("Reverse requests: browser backend_unavailable; media ok=false; feedback ok=false.");
    const requests = rig.host.messages.filter((m) => /-request$/.test(m.type));
    expect(requests.map((m) => m.type)).toEqual([
      "browser-execute-request",
      "browser-execute-request",
      "local-media-preview-path-authorize-request",
      "feedback-log-archive-request",
    ]);
    expect(requests[1].command).toEqual({ method: "navigate", url: "https://example.org/" });
    expect(requests[1].turnId).toBe(terminal.turnId);
    const answers = (await rig.install.readCallLog()).filter((e) => e.kind === "reverse-answer");
    expect(answers.map((a) => [a.requestKind, a.requestId, a.ok, a.matched])).toEqual(
      requests.map((r, k) => [["browser", "browser", "media", "feedback"][k], r.requestId, false, true]),
    );
  });

  it("browser without answers: each mid-turn request waits reverseWaitMs and is logged as a timeout", async () => {
    const rig = await sessionRig({ answerReverse: false, profile: { browserWaitMs: 50, reverseWaitMs: 50 } });
    const { terminal } = await promptToEnd(rig, "sim:browser");
    expect(terminal.payload.response).toBe("Reverse requests: browser unanswered; media unanswered; feedback unanswered.");
    expect((await rig.install.readCallLog()).filter((e) => e.kind === "reverse-timeout")).toHaveLength(4);
  });
});

describe("host crash mid-turn (docs/zcode-host.md §12.2 #31)", () => {
  it("how=throw: an uncaught error ends the worker with a non-zero code and closes the RPC port", async () => {
    const rig = await sessionRig();
    const portClosed = new Promise<void>((resolve) => rig.conn.protocol.onDidClose(() => resolve()));
    await rig.prompt("sim:crash how=throw");
    const code = await rig.host.exited;
    expect(code).not.toBe(0);
    expect(rig.host.error?.message).toContain("simulated host crash");
    expect(terminals(rig.events.sessionEvents())).toEqual([]);
    await portClosed;
    await expect(rig.conn.agent.initialize({ workspacePath: "/w" })).rejects.toMatchObject({ name: "ConnectionClosed" });
  });

  it("how=exit: process.exit(1) ends the worker with 1", async () => {
    const rig = await sessionRig();
    await rig.prompt("sim:crash how=exit");
    expect(await rig.host.exited).toBe(1);
    expect((await rig.install.readCallLog()).at(-1)).toMatchObject({ kind: "exit", code: 1 });
  });
});

describe("protocol violations the bridge must fail closed on (docs/zcode-host.md §12.2 #32-35, #38)", () => {
  it("unknown-event: a session.event with type turn.mystery inside an otherwise normal turn", async () => {
    const rig = await sessionRig();
    const { turn, terminal } = await promptToEnd(rig, "sim:unknown-event");
    expect(turn.map((e) => e.type)).toContain("turn.mystery");
    expect(terminal.payload.resultType).toBe("success");
  });

  it("unknown-toplevel: a top-level event type outside the union", async () => {
    const rig = await sessionRig();
    await promptToEnd(rig, "sim:unknown-toplevel");
    expect(rig.events.events.some((e) => e.type === "something.new")).toBe(true);
  });

  it.each([
    ["duplicate", 0],
    ["lower", 2],
  ])("seq-regression mode=%s: one event repeats or lowers the seq", async (mode, drop) => {
    const rig = await sessionRig();
    const { turn } = await promptToEnd(rig, `sim:seq-regression mode=${mode}`);
    const index = turn.findIndex((e) => e.payload.partId === "prt_regressed");
    expect(index).toBeGreaterThan(0);
    expect(turn[index].seq).toBe(turn[index - 1].seq - drop);
    expect(turn[index + 1].seq).toBeGreaterThan(turn[index - 1].seq);
  });

  it("unknown-result: turn.completed with resultType weird", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:unknown-result");
    expect(terminal.payload.resultType).toBe("weird");
  });

  it("late-event: a text_delta for the ended turn arrives after its terminal", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:late-event delay=10");
    const late = await rig.events.waitFor((e) => e.type === "session.event" && e.event.payload.partId === "prt_late");
    expect(late.event.turnId).toBe(terminal.turnId);
    expect(late.event.seq).toBeGreaterThan(terminal.seq);
    expect(terminals(rig.events.ofTurn(terminal.turnId))).toHaveLength(1);
  });
});

describe("agent runtime restart (adr/0033, review #7)", () => {
  it("sim:agent-restart: its own turn ends normally (the restart comes at the session's next input)", async () => {
    const rig = await sessionRig();
    const { terminal } = await promptToEnd(rig, "sim:agent-restart");
    expect(terminal.payload).toMatchObject({ resultType: "success" });
  });
});
