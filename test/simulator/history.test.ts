/**
 * The simulated host's history behaviour (docs/history.md, ../shared/reference/zcode-history.md):
 * `readSession` honours `messageLimit` (newest N, positive only) and needs a resident session;
 * `readSessionMessages` returns the newest N; every other snapshot carries the whole history; the
 * big-* scenarios make tool results, tool inputs, permission inputs and answers of many MB.
 */
import { describe, expect, it } from "vitest";
import { HostHarness } from "./support/host-harness.js";
import { WS, answerPermission, newInstall, onCleanup, promptToEnd, sessionRig, type SessionRig } from "./support/session-helpers.js";

type Any = any;

const roles = (messages: Any[]): string[] => messages.map((m: Any) => m.info.role);
const ids = (messages: Any[]): string[] => messages.map((m: Any) => m.info.messageId);

async function threeTurns(rig: SessionRig): Promise<void> {
  for (const text of ["one", "two", "three"]) await promptToEnd(rig, text);
}

describe.each(["3.11.2", "3.12.3"] as const)("history reads on %s", (release) => {
  it("readSession keeps the newest messageLimit messages; 0, negatives and fractions are refused (-32602)", async () => {
    const rig = await sessionRig({ release });
    await threeTurns(rig);
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const all = (await rig.conn.agent.readSession(ref)).messages;
    expect(roles(all)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(ids((await rig.conn.agent.readSession({ ...ref, messageLimit: 1 })).messages)).toEqual(ids(all.slice(-1)));
    expect(ids((await rig.conn.agent.readSession({ ...ref, messageLimit: 4 })).messages)).toEqual(ids(all.slice(-4)));
    expect((await rig.conn.agent.readSession({ ...ref, messageLimit: 100 })).messages).toHaveLength(6);
    for (const bad of [0, -1, 1.5, "2"]) {
      await expect(rig.conn.agent.readSession({ ...ref, messageLimit: bad })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("messageLimit"),
      });
    }
  });

  it("readSessionMessages returns the newest `limit`, after an anchor too (an unknown anchor is ignored)", async () => {
    const rig = await sessionRig({ release });
    await threeTurns(rig);
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const all = await rig.conn.agent.readSessionMessages(ref);
    expect(all).toHaveLength(6);
    expect(ids(await rig.conn.agent.readSessionMessages({ ...ref, limit: 2 }))).toEqual(ids(all.slice(-2)));
    expect(ids(await rig.conn.agent.readSessionMessages({ ...ref, afterMessageId: all[0].info.messageId, limit: 2 }))).toEqual(
      ids(all.slice(-2)),
    );
    expect(await rig.conn.agent.readSessionMessages({ ...ref, afterMessageId: "msg_unknown" })).toHaveLength(6);
    await expect(rig.conn.agent.readSessionMessages({ ...ref, limit: 0 })).rejects.toMatchObject({ code: -32602 });
  });

  it("create, resume, set* and a subscription's snapshot carry the whole history", async () => {
    const rig = await sessionRig({ release });
    await threeTurns(rig);
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    expect((await rig.conn.agent.resumeSession(ref)).messages).toHaveLength(6);
    expect((await rig.conn.agent.setMode({ ...ref, mode: "edit" })).messages).toHaveLength(6);
    expect((await rig.conn.agent.setThoughtLevel({ ...ref, thoughtLevel: "max" })).messages).toHaveLength(6);
    const model = (await rig.conn.agent.readSession(ref)).settings.model.current;
    const selection = release === "3.11.2" ? model : { ...model, options: { reasoningLevel: "max" } };
    expect((await rig.conn.agent.setModel({ ...ref, model: selection })).messages).toHaveLength(6);
    const listener = await new Promise<Any>((resolve) => {
      const disposable = rig.conn.agent.onDynamicSessionEvent({ ...ref, deliveryKind: "desktop-continuous", includeSnapshot: true })(
        (event: Any) => {
          if (event.type !== "snapshot") return;
          disposable.dispose();
          resolve(event);
        },
      );
    });
    expect(listener.snapshot.messages).toHaveLength(6);
  });

  it("reads need the session resident: after a host restart they fail -32004 until resumeSession", async () => {
    const install = await newInstall(release);
    const first = await sessionRig({ install });
    await threeTurns(first);
    const ref = { workspacePath: WS, sessionId: first.sessionId };
    expect(await first.host.dispose()).toBe(0);
    const second = HostHarness.start(install, {});
    onCleanup(async () => void (await second.dispose()));
    const conn = await second.connect();
    const notActive = { code: -32004, message: `Session is not active: ${first.sessionId}` };
    await expect(conn.agent.readSession({ ...ref, messageLimit: 1 })).rejects.toMatchObject(notActive);
    await expect(conn.agent.readSessionMessages(ref)).rejects.toMatchObject(notActive);
    expect((await conn.agent.resumeSession(ref)).messages).toHaveLength(6);
    expect((await conn.agent.readSession({ ...ref, messageLimit: 1 })).messages).toHaveLength(1);
    expect(await conn.agent.readSessionMessages(ref)).toHaveLength(6);
  });
});

describe("scenarios that make the history large", () => {
  it("sim:big-read mb=N: a Read result of N MB, persisted whole in the history (also across a restart)", async () => {
    const install = await newInstall("3.11.2");
    const rig = await sessionRig({ install });
    const { turn } = await promptToEnd(rig, "sim:big-read mb=2.5 path=app.log", 15000);
    const result = turn.find((e: Any) => e.type === "tool.updated" && e.payload.kind === "result");
    expect(result.payload).toMatchObject({ toolName: "Read", result: { success: true } });
    expect(result.payload.result.content).toHaveLength(2_500_000);
    const ref = { workspacePath: WS, sessionId: rig.sessionId };
    const [, assistant] = await rig.conn.agent.readSessionMessages(ref);
    const part = assistant.parts.find((p: Any) => p.type === "tool");
    expect(part).toMatchObject({ tool: "Read", state: { status: "completed", input: { file_path: "app.log" } } });
    expect(part.state.output).toHaveLength(2_500_000);
    expect(await rig.host.dispose()).toBe(0);
    const again = HostHarness.start(install, {});
    onCleanup(async () => void (await again.dispose()));
    const conn = await again.connect();
    const resumed = await conn.agent.resumeSession(ref);
    expect(resumed.messages[1].parts.find((p: Any) => p.type === "tool").state.output).toHaveLength(2_500_000);
  });

  it("sim:big-write mb=N permission=1: the input of N MB in the tool_call, the permission request and the history", async () => {
    const rig = await sessionRig({ release: "3.11.2" });
    await rig.prompt("sim:big-write mb=3 permission=1");
    const { request } = await answerPermission(rig, "allow_once");
    expect(request.input.content).toHaveLength(3_000_000);
    const terminal = await rig.events.terminal(1, 15000);
    const turn = rig.events.ofTurn(terminal.turnId);
    const call = turn.find((e: Any) => e.type === "model.streaming" && e.payload.kind === "tool_call");
    expect(call.payload).toMatchObject({ toolName: "Write", input: { file_path: "big.txt" } });
    expect(call.payload.input.content).toHaveLength(3_000_000);
    expect(turn.find((e: Any) => e.type === "tool.updated" && e.payload.kind === "result").payload.result.content).toBe(
      "Wrote 3000000 bytes to big.txt",
    );
  });

  it("sim:big-text mb=N: an answer of N MB", async () => {
    const rig = await sessionRig({ release: "3.11.2" });
    const { terminal } = await promptToEnd(rig, "sim:big-text mb=1.2", 15000);
    expect(terminal.payload.response).toHaveLength(1_200_000);
  });
});
