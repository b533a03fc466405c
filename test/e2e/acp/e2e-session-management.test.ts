/**
 * session/delete and session/set_title through the built CLI (docs/acp.md "Session management"):
 * advertised and served on the flavour of the project (every simulated release with ZCode's V4
 * commands), and on the simulated 3.10.2, which has none, neither advertised nor served
 * (method-not-found). Deleting closes the session the bridge has first (its prompt answered
 * `cancelled`, its permission request answered, its subscription ended), then ZCode's
 * `deleteSession`; the session then leaves session/list and session/load finds nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { simFlavour } from "../../../fixtures/sim-releases.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e } from "../../support/e2e-harness.js";

const t = e2e();

const DELETE = "session/delete";
const SET_TITLE = "session/set_title";
const FORK = "session/fork";

/** session/fork needs ZCode's rows pages beside its V4 commands: the zcode-task-v3 line (4.0.0) */
const forks = (): boolean => t.sim().manifest.protocol.allowlist.agent.includes("conversationRowsRangeV4");
/** the same, known before the install exists (the flavour of this project) */
const FORKS = simFlavour().line === "zcode-task-v3";

type Listed = { sessions: Array<{ sessionId: string; title?: string | null }> };

async function listed(client: AcpTestClient, cwd: string): Promise<Listed["sessions"]> {
  return ((await client.agent.request("session/list", { cwd })) as Listed).sessions;
}

/** a session ZCode has persisted (it had a prompt) */
async function promptedSession(client: AcpTestClient, ws: string): Promise<string> {
  const { sessionId } = await client.newSession(ws);
  expect(await client.prompt(sessionId, "hello")).toMatchObject({ stopReason: "end_turn" });
  return sessionId;
}

describe("e2e: session management where the host offers it", () => {
  it("advertises session/delete and session/set_title (early and SDK initialize alike)", async () => {
    const client = await t.start();
    const init = await client.initialize();
    expect(init.agentCapabilities?.sessionCapabilities).toEqual({
      list: {},
      resume: {},
      close: {},
      delete: {},
      title: {},
      ...(forks() ? { fork: {} } : {}),
    });
    // the SDK path: a first line that is not initialize leaves initialize to the SDK
    const late = await t.start();
    await expect(late.agent.request("session/list", {})).rejects.toMatchObject({ code: -32600 });
    const sdkInit = await late.initialize();
    expect(sdkInit.agentCapabilities?.sessionCapabilities).toEqual(init.agentCapabilities?.sessionCapabilities);
    client.expectValid();
    late.expectValid();
  });

  it("deletes a session: ZCode's deleteSession once, gone from session/list, session/load not found", async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    const kept = await promptedSession(client, ws);
    expect((await listed(client, ws)).map((s) => s.sessionId).sort()).toEqual([sessionId, kept].sort());

    expect(await client.agent.request(DELETE, { sessionId })).toEqual({});
    const deletes = (await t.commands("deleteSession")).filter((c) => (c.params as { sessionId: string }).sessionId === sessionId);
    expect(deletes).toHaveLength(1);
    expect((await listed(client, ws)).map((s) => s.sessionId)).toEqual([kept]);
    await expect(client.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining(sessionId),
    });
    await expect(client.prompt(sessionId, "still there?")).rejects.toMatchObject({ code: -32002 });
    // the other session is untouched
    expect(await client.prompt(kept, "hello again")).toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("closes a running session first: its prompt ends cancelled, its permission request is answered, then ZCode deletes it", async () => {
    const permissions: string[] = [];
    let asked!: () => void;
    const askedOnce = new Promise<void>((resolve) => (asked = resolve));
    const client = await t.start({
      onPermission: async (params) => {
        permissions.push(params.toolCall.toolCallId);
        asked();
        // never answered by the client: the delete must answer it
        return new Promise(() => {});
      },
    });
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    const running = client.prompt(sessionId, "sim:permission command=ls");
    await askedOnce;

    const deleted = client.agent.request(DELETE, { sessionId });
    expect(await running).toEqual({ stopReason: "cancelled" });
    expect(await deleted).toEqual({});
    expect(permissions).toHaveLength(1);
    expect((await listed(client, ws)).map((s) => s.sessionId)).not.toContain(sessionId);
    // the bridge closed it (unsubscribed, closeSession) before ZCode's deleteSession
    const log = await t.sim().readCallLog();
    const at = (predicate: (e: (typeof log)[number]) => boolean): number => log.findIndex(predicate);
    const ofSession = (e: (typeof log)[number]): boolean => (e.params as { sessionId?: string } | undefined)?.sessionId === sessionId;
    const closed = at((e) => e.kind === "call" && e.method === "closeSession" && ofSession(e));
    const deletedAt = at(
      (e) =>
        e.kind === "call" &&
        e.method === "sendConversationCommandV4" &&
        (e.params as { envelope?: { type?: string; sessionId?: string } }).envelope?.type === "deleteSession" &&
        (e.params as { envelope: { sessionId: string } }).envelope.sessionId === sessionId,
    );
    expect(closed).toBeGreaterThanOrEqual(0);
    expect(deletedAt).toBeGreaterThan(closed);
    // ZCode's permission request got exactly one answer (the legacy task answer, or the V4 resolveInteraction)
    const answers = log.filter(
      (e) =>
        e.kind === "call" &&
        ((e.method === "respondPermission" && (e.params as { taskId?: string } | undefined)?.taskId === sessionId) ||
          (e.method === "sendConversationCommandV4" &&
            (e.params as { envelope?: { type?: string; sessionId?: string } }).envelope?.type === "resolveInteraction" &&
            (e.params as { envelope: { sessionId: string } }).envelope.sessionId === sessionId)),
    );
    expect(answers).toHaveLength(1);
    client.expectValid({ allowUnanswered: true });
  });

  it("answers two deletes of one session with one deletion, a load beside a delete with not-found, and an unknown session with not-found", async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    const before = (await t.commands("deleteSession")).length;
    const [a, b] = await Promise.all([client.agent.request(DELETE, { sessionId }), client.agent.request(DELETE, { sessionId })]);
    expect([a, b]).toEqual([{}, {}]);
    expect((await t.commands("deleteSession")).length - before).toBe(1);
    // a load sent together with a delete waits for it, then finds no session
    const other = await promptedSession(client, ws);
    const [deleted, loaded] = await Promise.allSettled([
      client.agent.request(DELETE, { sessionId: other }),
      client.agent.request("session/load", { sessionId: other, cwd: ws, mcpServers: [] }),
    ]);
    expect(deleted).toEqual({ status: "fulfilled", value: {} });
    expect(loaded).toMatchObject({ status: "rejected", reason: { code: -32002 } });
    // the SDK client turns -32002 on session/delete into success: the answer line says not found
    const unknown = await answerLine(client, DELETE, { sessionId: "ses_never_was" });
    expect(unknown.error).toMatchObject({ code: -32002, message: expect.stringContaining("ses_never_was") });
    client.expectValid();
  });

  it("deletes a session of another connection, found in the agent's directory", async () => {
    const ws = await t.workspace();
    const first = await t.start({ cwd: ws });
    await first.initialize();
    const sessionId = await promptedSession(first, ws);
    await first.close();
    const second = await t.start({ cwd: ws });
    await second.initialize();
    expect(await second.agent.request(DELETE, { sessionId })).toEqual({});
    expect((await listed(second, ws)).map((s) => s.sessionId)).not.toContain(sessionId);
    second.expectValid();
  });

  it("sets a title: ZCode's renameSession, a session_info_update, and the title in session/list", async () => {
    const client = await t.start();
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    expect(await client.agent.request(SET_TITLE, { sessionId, title: "  Release notes\nfor 4.0  " })).toEqual({
      title: "Release notes for 4.0",
    });
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "session_info_update" && u.title === "Release notes for 4.0");
    expect((await listed(client, ws)).find((s) => s.sessionId === sessionId)?.title).toBe("Release notes for 4.0");
    const renames = (await t.commands("renameSession")).filter((c) => (c.params as { sessionId: string }).sessionId === sessionId);
    expect(renames.map((c) => (c.params as { payload: unknown }).payload)).toEqual([{ title: "Release notes for 4.0" }]);
    await expect(client.agent.request(SET_TITLE, { sessionId, title: " \n " })).rejects.toMatchObject({ code: -32602 });
    client.expectValid();
  });
});

describe("e2e: session/fork", () => {
  /** the messageId of the agent's answer to a prompt (its text chunks carry it) */
  async function answerId(client: AcpTestClient, sessionId: string, text: string): Promise<string> {
    const from = client.updates(sessionId).length;
    expect(await client.prompt(sessionId, text)).toMatchObject({ stopReason: "end_turn" });
    const ids = new Set(
      client
        .updates(sessionId)
        .slice(from)
        .filter((u) => u.sessionUpdate === "agent_message_chunk" && typeof u.messageId === "string")
        .map((u) => u.messageId as string),
    );
    expect(ids.size).toBe(1);
    return [...ids][0]!;
  }

  /** the user and agent texts session/load replays, through a fresh client */
  async function replayed(ws: string, sessionId: string): Promise<{ user: string; agent: string }> {
    const reader = await t.start();
    await reader.initialize();
    await reader.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    const texts = (kind: string): string =>
      reader
        .updates(sessionId)
        .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
        .map((u) => u.content.text as string)
        .join("|");
    const out = { user: texts("user_message_chunk"), agent: texts("agent_message_chunk") };
    reader.expectValid();
    await reader.close();
    return out;
  }

  it.runIf(FORKS)(
    "forks at an answer (JetBrains AIR's _meta messageId): a new session with the history up to it, loadable and usable",
    async () => {
      expect(forks()).toBe(true);
      const client = await t.start();
      await client.initialize();
      const ws = await t.workspace();
      const { sessionId } = await client.newSession(ws);
      const first = await answerId(client, sessionId, "alpha question");
      await answerId(client, sessionId, "beta question");

      const fork = await client.agent.request<{ sessionId: string; modes?: unknown; configOptions?: unknown[] }>(FORK, {
        sessionId,
        cwd: ws,
        mcpServers: [],
        _meta: { jetbrains: { air: { fork: { messageId: first } } } },
      });
      expect(fork.sessionId).not.toBe(sessionId);
      expect(fork.configOptions?.length).toBeGreaterThan(0);
      const sent = (await t.commands("forkAssistant")).at(-1)!.params as {
        sessionId: string;
        baseRevision?: unknown;
        baseLogEpoch?: unknown;
        payload: { target: { rowId: unknown; entityId: unknown } };
      };
      expect(sent).toMatchObject({ sessionId, baseRevision: expect.any(Number), baseLogEpoch: expect.any(String) });
      expect(sent.payload.target).toEqual({ rowId: expect.anything(), entityId: expect.any(String) });
      expect((await listed(client, ws)).map((s) => s.sessionId)).toContain(fork.sessionId);

      const history = await replayed(ws, fork.sessionId);
      expect(history.user).toContain("alpha question");
      expect(history.user).not.toContain("beta question");
      expect(history.agent).toContain("alpha question");
      // the fork runs on its own; the source keeps its whole history
      expect(await client.prompt(fork.sessionId, "gamma in the fork")).toMatchObject({ stopReason: "end_turn" });
      expect((await replayed(ws, sessionId)).user).toContain("beta question");
      client.expectValid();
    },
  );

  it.runIf(FORKS)(
    "forks at the newest answer without a messageId, a session of another connection too; refuses an unknown message",
    async () => {
      const ws = await t.workspace();
      const owner = await t.start();
      await owner.initialize();
      const { sessionId } = await owner.newSession(ws);
      await answerId(owner, sessionId, "one");
      await answerId(owner, sessionId, "two");
      await owner.close();

      const client = await t.start();
      await client.initialize();
      await expect(
        client.agent.request(FORK, { sessionId, cwd: ws, _meta: { jetbrains: { air: { fork: { messageId: "msg_nope" } } } } }),
      ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("msg_nope") });
      const fork = await client.agent.request<{ sessionId: string }>(FORK, { sessionId, cwd: ws });
      const history = await replayed(ws, fork.sessionId);
      expect(history.user).toContain("one");
      expect(history.user).toContain("two");
      client.expectValid();
    },
  );

  it.skipIf(FORKS)("is neither advertised nor served where the install has no rows pages", async () => {
    expect(forks()).toBe(false);
    const client = await t.start();
    const init = await client.initialize();
    expect(init.agentCapabilities?.sessionCapabilities).not.toHaveProperty("fork");
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    await expect(client.agent.request(FORK, { sessionId, cwd: ws })).rejects.toMatchObject({
      code: -32601,
      message: expect.stringMatching(/session\/fork is not available/),
    });
    expect(await t.commands("forkAssistant")).toHaveLength(0);
    client.expectValid();
  });
});

/**
 * The agent's answer line to a request sent through the SDK client (which turns -32002 on
 * session/delete into an empty result): found in the transcript by the request's id.
 */
async function answerLine(
  client: AcpTestClient,
  method: string,
  params: { sessionId: string },
): Promise<{ error?: { code: number; message: string } }> {
  await client.agent.request(method, params).catch(() => undefined);
  const request = await client.waitForLine(
    (l) => l.from === "client" && l.message.method === method && l.message.params?.sessionId === params.sessionId,
  );
  const line = await client.waitForLine((l) => l.from === "agent" && l.message.id === request.message.id && l.message.method === undefined);
  return line.message as { error?: { code: number; message: string } };
}

describe("e2e: session management where the host does not offer it (3.10.2)", () => {
  let old: SimInstall;
  beforeAll(async () => {
    old = await createSimulatedInstall({ release: "3.10.2" });
  });
  afterAll(async () => {
    await old?.cleanup();
  });

  it("advertises neither, and answers both with method-not-found", async () => {
    const client = await AcpTestClient.start({ env: old.env });
    try {
      const init = await client.initialize();
      expect(init.agentCapabilities?.sessionCapabilities).toEqual({ list: {}, resume: {}, close: {} });
      const ws = await t.workspace();
      const { sessionId } = await client.newSession(ws);
      const deleted = await answerLine(client, DELETE, { sessionId });
      expect(deleted.error).toMatchObject({ code: -32601, message: expect.stringMatching(/session\/delete is not available/) });
      await expect(client.agent.request(SET_TITLE, { sessionId, title: "x" })).rejects.toMatchObject({
        code: -32601,
        message: expect.stringMatching(/session\/set_title is not available/),
      });
      // nothing reached ZCode, and the session still works
      expect((await old.readCallLog()).some((e) => e.kind === "call" && e.method === "sendConversationCommandV4")).toBe(false);
      expect(await client.prompt(sessionId, "hello")).toMatchObject({ stopReason: "end_turn" });
      client.expectValid();
    } finally {
      await client.close();
    }
  });
});
