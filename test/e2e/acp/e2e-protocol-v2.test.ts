/**
 * ACP v2 beside v1 in one build (adr/0028), end to end through the built CLI and the simulated
 * install, with the SDK's own v2 client over real pipes: initialize, session/new, a prompt
 * answered with a receipt, the turn's updates as v2 upserts with message ids, the end of the turn
 * as a `state_update` idle with its stop reason, a permission in v2's shape, cancel, refused
 * methods; every line validated against the SDK's v2 schema. A v1 client on the same build is
 * served v1 as before.
 */
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { DEFAULT_MAX_MESSAGE_BYTES } from "@agentclientprotocol/sdk";
import { AcpV2TestClient, type AcpV2TestClientOptions } from "../../support/acp-v2-test-client.js";
import { e2e } from "../../support/e2e-harness.js";
import { answersFor } from "../answers.js";

const t = e2e();
const v2Clients: AcpV2TestClient[] = [];

afterEach(async () => {
  const open = v2Clients.splice(0);
  await Promise.all(
    open.map((c) =>
      c.child.exitCode === null && c.child.signalCode === null ? c.close().catch(() => c.kill("SIGKILL")) : Promise.resolve(undefined),
    ),
  );
});

function startV2(options: AcpV2TestClientOptions = {}): AcpV2TestClient {
  const client = AcpV2TestClient.start({ ...options, env: { ...t.sim().env, ...options.env } });
  v2Clients.push(client);
  onTestFailed(() => console.error(`--- v2 CLI pid ${client.child.pid} stderr tail:\n${client.stderr.slice(-4000)}`));
  return client;
}

async function v2Session(options: AcpV2TestClientOptions = {}): Promise<{ client: AcpV2TestClient; sessionId: string }> {
  const client = startV2(options);
  await client.initialize();
  const { sessionId } = await client.newSession(await t.workspace());
  return { client, sessionId };
}

const isState = (state: string) => (u: any) => u.sessionUpdate === "state_update" && u.state === state;

describe("e2e: ACP v2 beside v1", () => {
  it("initialize v2: the router selects v2 and the answer is v2's (info, capabilities, agent auth method)", async () => {
    const client = startV2();
    const init = await client.initialize();
    expect(init.protocolVersion).toBe(2);
    expect(init.info).toMatchObject({ name: "zcode-acp" });
    expect(init.capabilities?.session?.prompt).toEqual({ image: {}, audio: {}, embeddedContext: {} });
    expect(init.authMethods).toEqual([expect.objectContaining({ type: "agent", methodId: "zcode-app" })]);
    // no v1 fields on a v2 answer
    expect(init).not.toHaveProperty("agentCapabilities");
    client.expectValid();
  });

  it("a prompt is answered with a receipt; running, the answer chunks with one messageId, then idle with end_turn", async () => {
    const { client, sessionId } = await v2Session();
    const receipt = await client.prompt(sessionId, "hello v2");
    expect(Object.keys(receipt)).toEqual(["messageId"]);
    expect(typeof receipt.messageId).toBe("string");
    const idle = await client.waitForIdle(sessionId);
    expect(idle).toMatchObject({ state: "idle", stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: hello v2");
    const updates = client.updates(sessionId);
    const running = updates.findIndex(isState("running"));
    const firstChunk = updates.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
    const ended = updates.findIndex(isState("idle"));
    expect(running).toBeGreaterThanOrEqual(0);
    expect(running).toBeLessThan(firstChunk);
    expect(firstChunk).toBeLessThan(ended);
    const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
    expect(new Set(chunks.map((u) => u.messageId)).size).toBe(1);
    expect(chunks[0].messageId).not.toBe(receipt.messageId);
    // the receipt went out before the turn's end
    const receiptLine = client.transcript.lines.findIndex((l) => l.from === "agent" && l.message?.result?.messageId === receipt.messageId);
    const idleLine = client.transcript.lines.findIndex(
      (l) => l.from === "agent" && l.message?.method === "session/update" && l.message.params.update.state === "idle",
    );
    expect(receiptLine).toBeGreaterThanOrEqual(0);
    expect(receiptLine).toBeLessThan(idleLine);
    // the next prompt is a new turn: a new message id
    await client.prompt(sessionId, "second");
    await client.waitForIdle(sessionId, 1);
    const second = client
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.messageId !== chunks[0].messageId);
    expect(second.length).toBeGreaterThan(0);
    // no v1-only updates on a v2 connection
    expect(client.updates(sessionId).map((u) => u.sessionUpdate)).not.toContain("current_mode_update");
    expect(client.updates(sessionId).map((u) => u.sessionUpdate)).not.toContain("tool_call");
    client.expectValid();
  });

  it("two prompts back to back: two receipts, both turns run, one idle when the last one ends (states are aggregate)", async () => {
    const { client, sessionId } = await v2Session();
    const [a, b] = await Promise.all([client.prompt(sessionId, "first of two"), client.prompt(sessionId, "second of two")]);
    expect(a.messageId).not.toBe(b.messageId);
    expect(await client.waitForIdle(sessionId, 0, 20_000)).toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: first of two");
    expect(client.text(sessionId)).toContain("You said: second of two");
    // nothing of either turn after the idle, and only one idle
    const updates = client.updates(sessionId);
    expect(updates.filter(isState("idle"))).toHaveLength(1);
    expect(updates.at(-1)).toMatchObject({ sessionUpdate: "state_update", state: "idle" });
    client.expectValid();
  });

  it("a permission in v2's shape (title, tool-call subject); the chosen option reaches ZCode once; the tool call is an upsert", async () => {
    const { client, sessionId } = await v2Session({
      onPermission: (params) => ({
        outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
      }),
    });
    await client.prompt(sessionId, "sim:permission");
    const idle = await client.waitForIdle(sessionId);
    expect(idle.stopReason).toBe("end_turn");
    expect(client.permissionRequests).toHaveLength(1);
    const asked = client.permissionRequests[0]!;
    expect(asked.title).toBeTruthy();
    expect(asked.subject).toMatchObject({ type: "tool_call", toolCall: { kind: "execute", rawInput: { command: "npm test" } } });
    expect(asked.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"]);
    const toolCallId = (asked.subject as { toolCall: { toolCallId: string } }).toolCall.toolCallId;
    const calls = client.updates(sessionId).filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === toolCallId);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.at(-1)).toMatchObject({ status: "completed" });
    const log = await t.sim().readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([expect.objectContaining({ optionId: "allow_once" })]);
    client.expectValid();
  });

  it("a permission the client cancels is a real deny for ZCode, never an allow", async () => {
    const { client, sessionId } = await v2Session();
    await client.prompt(sessionId, "sim:permission");
    await client.waitForIdle(sessionId);
    const log = await t.sim().readCallLog();
    const answers = answersFor(log, "respondPermission", sessionId).map((a) => a.optionId);
    expect(answers).not.toContain("allow_once");
    expect(answers).not.toContain("allow_always");
    client.expectValid();
  });

  it("cancel: the turn ends with idle cancelled, exactly one stop reaches ZCode, the next prompt works", async () => {
    const { client, sessionId } = await v2Session();
    await client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await client.cancel(sessionId);
    await client.cancel(sessionId);
    const idle = await client.waitForIdle(sessionId);
    expect(idle).toMatchObject({ state: "idle", stopReason: "cancelled" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    await client.prompt(sessionId, "after cancel");
    expect(await client.waitForIdle(sessionId, 1)).toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: after cancel");
    client.expectValid();
  });

  it("a prompt cancelled on the wire while another runs: no idle until the running turn ended (states are aggregate, adr/0036)", async () => {
    const { client, sessionId } = await v2Session();
    await client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    // the second prompt and the cancel back to back: the cancel is read before (or right after) its handler runs
    const second = client.prompt(sessionId, "queued then cancelled");
    void client.cancel(sessionId);
    await second;
    expect(await client.waitForIdle(sessionId, 0, 20_000)).toMatchObject({ stopReason: "cancelled" });
    await client.prompt(sessionId, "after both");
    expect(await client.waitForIdle(sessionId, 1, 20_000)).toMatchObject({ stopReason: "end_turn" });
    const updates = client.updates(sessionId);
    // one idle for the cancelled work, written after every update of the running turn, and one for the last prompt
    expect(updates.filter(isState("idle")).map((u: any) => u.stopReason)).toEqual(["cancelled", "end_turn"]);
    client.expectValid();
  });

  it("session/resume in a new process: history replayed from the start as v2 chunks with ids, then the state snapshot, then the response", async () => {
    const { client: first, sessionId } = await v2Session();
    await first.prompt(sessionId, "remember this");
    await first.waitForIdle(sessionId);
    await first.prompt(sessionId, "and this");
    await first.waitForIdle(sessionId, 1);
    const workspace = first.transcript.lines.find((l) => l.from === "client" && l.message?.method === "session/new")!.message.params
      .cwd as string;
    await first.close();

    const second = startV2();
    await second.initialize();
    const resumed = await second.agent.request(acp.methods.agent.session.resume, {
      sessionId,
      cwd: workspace,
      replayFrom: { type: "start" },
    });
    expect(resumed.configOptions?.length).toBeGreaterThan(0);
    const replayed = second.updates(sessionId);
    const users = replayed.filter((u) => u.sessionUpdate === "user_message_chunk");
    const answers = replayed.filter((u) => u.sessionUpdate === "agent_message_chunk");
    expect(users.map((u) => u.content.text).join("")).toContain("remember this");
    expect(answers.map((u) => u.content.text).join("")).toContain("You said: and this");
    // two exchanges: two user messages and two answers, each with its own id
    expect(new Set(users.map((u) => u.messageId)).size).toBe(2);
    expect(new Set(answers.map((u) => u.messageId)).size).toBe(2);
    // the snapshot comes after the replay and before the response
    const lines = second.transcript.lines.filter((l) => l.from === "agent");
    const snapshot = lines.findIndex(
      (l) => l.message?.method === "session/update" && l.message.params.update.sessionUpdate === "state_update",
    );
    const lastReplay = lines.findLastIndex(
      (l) => l.message?.method === "session/update" && l.message.params.update.sessionUpdate === "agent_message_chunk",
    );
    const response = lines.findIndex((l) => l.message?.result?.configOptions !== undefined);
    expect(lines[snapshot]!.message.params.update).toEqual({ sessionUpdate: "state_update", state: "idle" });
    expect(lastReplay).toBeLessThan(snapshot);
    expect(snapshot).toBeLessThan(response);
    // the resumed session prompts
    await second.prompt(sessionId, "after resume");
    expect(await second.waitForIdle(sessionId, 1)).toMatchObject({ stopReason: "end_turn" });
    second.expectValid();

    // without replayFrom: no history, only the snapshot
    await second.close();
    const third = startV2();
    await third.initialize();
    await third.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: workspace });
    expect(third.updates(sessionId).filter((u) => u.sessionUpdate.endsWith("_chunk"))).toEqual([]);
    expect(third.updates(sessionId)[0]).toEqual({ sessionUpdate: "state_update", state: "idle" });
    third.expectValid();
  });

  it("a prompt for an unknown session is refused (no receipt); unsupported v2 methods get a typed -32601 that says to use v1", async () => {
    const client = startV2();
    await client.initialize();
    await expect(client.prompt("no-such-session", "hi")).rejects.toMatchObject({ code: -32002 });
    await expect(client.agent.request(acp.methods.agent.toolCall.cancel, { sessionId: "x", toolCallId: "t" })).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining("ACP protocol version 1"),
    });
    client.expectValid();
  });

  it("session/delete where the install offers it (advertised), and auth/logout scoped to this connection until auth/login", async () => {
    const client = startV2({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    const init = await client.initialize();
    // ZCode's real delete (zcode-task deleteTask and listDeletedTaskIds) where the release has it (adr/0032)
    const deletes = ["deleteTask", "listDeletedTaskIds"].every((m) => t.sim().manifest.protocol.allowlist.task?.includes(m) === true);
    expect(init.capabilities?.session?.delete).toEqual(deletes ? {} : undefined);
    const cwd = await t.workspace();
    const { sessionId } = await client.newSession(cwd);
    await client.prompt(sessionId, "hello");
    await client.waitForIdle(sessionId);
    if (deletes) {
      await expect(client.agent.request(acp.methods.agent.session.delete, { sessionId })).resolves.toEqual({});
      const listed = await client.agent.request(acp.methods.agent.session.list, { cwd });
      expect(listed.sessions.map((s) => s.sessionId)).not.toContain(sessionId);
      // the diagnostics extension request is served on v2 too: the deleted session is not held
      const diagnostics = (await client.agent.request("_zcode/diagnostics" as never, {} as never)) as { sessions: { sessions: number } };
      expect(diagnostics.sessions.sessions).toBe(0);
      expect(
        (await t.sim().readCallLog()).filter((e) => e.kind === "call" && e.method === "deleteTask").map((e) => (e.params as any).taskId),
      ).toEqual([sessionId]);
    } else {
      await expect(client.agent.request(acp.methods.agent.session.delete, { sessionId })).rejects.toMatchObject({ code: -32601 });
    }
    // logout: this connection opens nothing until it signs in again; the app is not signed out
    await client.agent.request(acp.methods.agent.auth.logout, {});
    await expect(client.newSession(cwd)).rejects.toMatchObject({ code: -32000 });
    await client.agent.request(acp.methods.agent.auth.login, { methodId: "zcode-app" });
    await expect(client.newSession(cwd)).resolves.toMatchObject({ sessionId: expect.any(String) });
    client.expectValid();
  });

  it("a v1 client on the same build is served v1 exactly as before", async () => {
    const client = await t.start();
    const init = await client.initialize();
    expect(init.protocolVersion).toBe(1);
    expect(init).toHaveProperty("agentCapabilities");
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "hello v1")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.updates(sessionId).map((u) => u.sessionUpdate)).not.toContain("state_update");
    client.expectValid();
  });

  it("cancel while a permission is pending and the client does not answer it: $/cancel_request, a real deny once, one stop, idle cancelled", async () => {
    const hold = (_params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> =>
      new Promise((resolve) => {
        const done = (): void => resolve({ outcome: { outcome: "cancelled" } });
        if (signal.aborted) done();
        else signal.addEventListener("abort", done, { once: true });
      });
    const { client, sessionId } = await v2Session({ onPermission: hold });
    await client.prompt(sessionId, "sim:permission");
    const asked = await client.waitForLine((l) => l.from === "agent" && l.message.method === "session/request_permission");
    await client.cancel(sessionId);
    expect(await client.waitForIdle(sessionId, 0, 20_000)).toMatchObject({ state: "idle", stopReason: "cancelled" });
    await client.waitForLine((l) => l.from === "agent" && l.message.method === "$/cancel_request", 20_000);
    await client.waitForLine((l) => l.from === "client" && l.message.method === undefined && l.message.id === asked.message.id);
    const log = await t.sim().readCallLog();
    expect(answersFor(log, "respondPermission", sessionId).map((c) => c.optionId)).toEqual(["deny"]);
    expect(await t.stops(sessionId)).toHaveLength(1);
    await client.prompt(sessionId, "hello again");
    expect(await client.waitForIdle(sessionId, 1)).toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("a turn that fails ends with idle stopReason error carrying the typed JSON-RPC error (no deny option, client declines)", async () => {
    const { client, sessionId } = await v2Session();
    await client.prompt(sessionId, "sim:permission-no-deny");
    const idle = await client.waitForIdle(sessionId, 0, 20_000);
    expect(idle).toMatchObject({ state: "idle", stopReason: "error", error: { data: { code: "INTERACTION_UNSUPPORTED" } } });
    expect(typeof idle.error.message).toBe("string");
    const log = await t.sim().readCallLog();
    expect(answersFor(log, "respondPermission", sessionId)).toEqual([]);
    client.expectValid();
  });

  it("a line over the message limit is refused with -32602 naming the limit, and the v2 connection keeps serving", async () => {
    const { client, sessionId } = await v2Session();
    const huge = {
      jsonrpc: "2.0",
      id: "raw-huge",
      method: "session/prompt",
      params: { sessionId, prompt: [{ type: "text", text: "y".repeat(DEFAULT_MAX_MESSAGE_BYTES) }] },
    };
    await client.writeRaw(`${JSON.stringify(huge)}\n`);
    const refused = await client.waitForLine((l) => l.from === "agent" && l.message.id === "raw-huge", 20_000);
    expect(refused.message.error).toMatchObject({
      code: -32602,
      data: { code: "MESSAGE_TOO_LARGE", limitBytes: DEFAULT_MAX_MESSAGE_BYTES },
    });
    await client.prompt(sessionId, "still here");
    expect(await client.waitForIdle(sessionId)).toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: still here");
    client.expectValid();
  });

  it("ZCODE_ACP_PROTOCOL_V2=0: a v2 client's initialize gets v1's answer (protocol 1), as before this change", async () => {
    const client = startV2({ env: { ZCODE_ACP_PROTOCOL_V2: "0" } });
    // the SDK's v2 client refuses a v1 answer; what matters is the line on the wire
    void client.initialize().catch(() => undefined);
    const answer = await client.waitForLine((l) => l.from === "agent" && l.message.id !== undefined);
    expect(answer.message.result).toMatchObject({ protocolVersion: 1, agentCapabilities: expect.any(Object) });
    expect(answer.message.result).not.toHaveProperty("info");
  });

  it("release advisories: one v2 notice per new session where the release has one, none where it has none", async () => {
    // the advisories of the simulated install's manifest: what the bridge reads
    const advisories = t.sim().manifest.advisories ?? [];
    const client = startV2();
    await client.initialize();
    const ws = await t.workspace();
    const first = await client.newSession(ws);
    const second = await client.newSession(ws);
    // a turn after each answer: whatever followed the session/new answer has been written by then
    for (const { sessionId } of [first, second]) {
      await client.prompt(sessionId, "hello");
      await client.waitForIdle(sessionId);
    }
    for (const { sessionId } of [first, second]) {
      const notices = client.updates(sessionId).filter((u) => u.sessionUpdate === "notice");
      expect(notices).toHaveLength(advisories.length);
      if (advisories.length > 0)
        expect(notices[0]).toMatchObject({ severity: "warning", _meta: { "zcode-acp/advisory": advisories[0]!.id } });
    }
    client.expectValid();
  });
});
