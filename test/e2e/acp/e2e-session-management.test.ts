/**
 * session/delete, session/set_title and session/fork through the built CLI (docs/acp.md "Session
 * management", adr/0026, adr/0032). session/delete is ZCode's real delete, the desktop's own
 * (`zcode-task.deleteTask`, the list filtered by `listDeletedTaskIds`): advertised and served where
 * the simulated release has it (3.16.2 on, GUESS after 3.15.1), neither elsewhere (method-not-found).
 * Deleting closes the session the bridge has first (its prompt answered `cancelled`, its permission
 * request answered, its subscription ended), then `deleteTask`; the session then leaves
 * session/list and session/load finds nothing. session/set_title where the release has ZCode's V4
 * commands; session/fork where it also has the rows pages (3.14.x on), only at rows ZCode allows a
 * fork at (`actions.canFork`), its refusals readable. On the simulated 3.10.2: nothing.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, flavourProtocol, type SimInstall } from "../../../fixtures/sim-install.js";
import { simFlavour } from "../../../fixtures/sim-releases.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e } from "../../support/e2e-harness.js";
import { MAX_ATTACHED_SESSIONS } from "../../../src/session/session-service.js";

const t = e2e();

const DELETE = "session/delete";
const SET_TITLE = "session/set_title";
const FORK = "session/fork";

const flavour = simFlavour();
/** the descriptor the project's simulated install carries (known before the install exists) */
const protocol = flavourProtocol(
  flavour,
  JSON.parse(readFileSync(new URL(`../../../manifests/${flavour.protocolFrom}`, import.meta.url), "utf8")).protocol,
);
/** ZCode's real delete: zcode-task's deleteTask and listDeletedTaskIds */
const DELETES = ["deleteTask", "listDeletedTaskIds"].every((m) => protocol.allowlist.task?.includes(m) === true);
/** session/fork needs ZCode's rows pages beside its V4 commands */
const FORKS = ["sendConversationCommandV4", "conversationRowsRangeV4"].every((m) => protocol.allowlist.agent?.includes(m) === true);

/** the simulated host keeps V4 rows of running turns from their start (a release read through V4) */
const FULL_ROWS = flavour.line === "zcode-task-v3";
/** the install's manifest allows the rows pages (the project's install, checked against FORKS) */
const forks = (): boolean => t.sim().manifest.protocol.allowlist.agent.includes("conversationRowsRangeV4");

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

/** the zcode-task deleteTask calls for one session */
async function deleteTasks(sessionId: string): Promise<number> {
  return (await t.calls("deleteTask")).filter((c) => (c.params as { taskId?: string }).taskId === sessionId).length;
}

describe("e2e: which releases offer what", () => {
  it("offers the real delete from 3.16 on and the fork from 3.14 on, as the simulated releases have them", () => {
    const [major, minor] = flavour.release.split(".").map(Number) as [number, number];
    const atLeast = (a: number, b: number): boolean => major > a || (major === a && minor >= b);
    expect(DELETES).toBe(atLeast(3, 16));
    expect(FORKS).toBe(atLeast(3, 14));
  });
});

describe("e2e: session management where the host offers it", () => {
  it("advertises what the release offers (early and SDK initialize alike)", async () => {
    const client = await t.start();
    const init = await client.initialize();
    expect(init.agentCapabilities?.sessionCapabilities).toEqual({
      list: {},
      resume: {},
      close: {},
      title: {},
      ...(DELETES ? { delete: {} } : {}),
      ...(FORKS ? { fork: {} } : {}),
    });
    // the SDK path: a first line that is not initialize leaves initialize to the SDK
    const late = await t.start();
    await expect(late.agent.request("session/list", {})).rejects.toMatchObject({ code: -32600 });
    const sdkInit = await late.initialize();
    expect(sdkInit.agentCapabilities?.sessionCapabilities).toEqual(init.agentCapabilities?.sessionCapabilities);
    client.expectValid();
    late.expectValid();
  });

  it.runIf(DELETES)(
    "deletes a session: zcode-task deleteTask once (no V4 deleteSession), gone from session/list, session/load not found",
    async () => {
      const client = await t.start();
      await client.initialize();
      const ws = await t.workspace();
      const sessionId = await promptedSession(client, ws);
      const kept = await promptedSession(client, ws);
      expect((await listed(client, ws)).map((s) => s.sessionId).sort()).toEqual([sessionId, kept].sort());

      expect(await client.agent.request(DELETE, { sessionId })).toEqual({});
      expect(await deleteTasks(sessionId)).toBe(1);
      expect((await t.calls("deleteTask")).at(-1)?.params).toEqual({ taskId: sessionId, workspacePath: ws });
      // ZCode's V4 deleteSession only closes (it stays listed): never sent
      expect(await t.commands("deleteSession")).toHaveLength(0);
      expect((await listed(client, ws)).map((s) => s.sessionId)).toEqual([kept]);
      // ZCode's own list: the agent's still names it (the conversation is kept), the deleted ids hide it
      const log = await t.sim().readCallLog();
      expect(log.some((e) => e.kind === "task-deleted" && e.sessionId === sessionId && e.known === true)).toBe(true);
      await expect(client.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] })).rejects.toMatchObject({
        code: -32002,
        message: expect.stringContaining(sessionId),
      });
      await expect(client.prompt(sessionId, "still there?")).rejects.toMatchObject({ code: -32002 });
      // the other session is untouched
      expect(await client.prompt(kept, "hello again")).toMatchObject({ stopReason: "end_turn" });
      client.expectValid();
    },
  );

  it.runIf(DELETES)(
    "closes a running session first: its prompt ends cancelled, its permission request is answered, then ZCode deletes it",
    async () => {
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
      // the bridge closed it (unsubscribed, closeSession) before ZCode's deleteTask
      const log = await t.sim().readCallLog();
      const at = (predicate: (e: (typeof log)[number]) => boolean): number => log.findIndex(predicate);
      const ofSession = (e: (typeof log)[number]): boolean => (e.params as { sessionId?: string } | undefined)?.sessionId === sessionId;
      const closed = at((e) => e.kind === "call" && e.method === "closeSession" && ofSession(e));
      const deletedAt = at((e) => e.kind === "call" && e.method === "deleteTask" && (e.params as { taskId?: string }).taskId === sessionId);
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
    },
  );

  it.runIf(DELETES)(
    "answers two deletes of one session with one deletion, a load beside a delete with not-found, an unknown or deleted id with {}",
    async () => {
      const client = await t.start();
      await client.initialize();
      const ws = await t.workspace();
      const sessionId = await promptedSession(client, ws);
      const [a, b] = await Promise.all([client.agent.request(DELETE, { sessionId }), client.agent.request(DELETE, { sessionId })]);
      expect([a, b]).toEqual([{}, {}]);
      expect(await deleteTasks(sessionId)).toBe(1);
      // a load sent together with a delete waits for it, then finds no session
      const other = await promptedSession(client, ws);
      const [deleted, loaded] = await Promise.allSettled([
        client.agent.request(DELETE, { sessionId: other }),
        client.agent.request("session/load", { sessionId: other, cwd: ws, mcpServers: [] }),
      ]);
      expect(deleted).toEqual({ status: "fulfilled", value: {} });
      expect(loaded).toMatchObject({ status: "rejected", reason: { code: -32002 } });
      // ACP: deleting an unknown or already deleted session succeeds silently (the answer line itself
      // says so: the SDK client would turn a -32002 into success too), and nothing is resumed or sent
      const resumes = (await t.calls("resumeSession")).length;
      expect(await answerLine(client, DELETE, { sessionId: "ses_never_was" })).toMatchObject({ result: {} });
      expect(await answerLine(client, DELETE, { sessionId })).toMatchObject({ result: {} });
      expect(await deleteTasks(sessionId)).toBe(1);
      expect(await deleteTasks("ses_never_was")).toBe(0);
      expect(await t.calls("resumeSession")).toHaveLength(resumes);
      client.expectValid();
    },
  );

  it.runIf(DELETES)("deletes a session of another connection, found in the agent's directory", async () => {
    const ws = await t.workspace();
    const first = await t.start({ cwd: ws });
    await first.initialize();
    const sessionId = await promptedSession(first, ws);
    await first.close();
    const second = await t.start({ cwd: ws });
    await second.initialize();
    expect(await second.agent.request(DELETE, { sessionId })).toEqual({});
    expect(await deleteTasks(sessionId)).toBe(1);
    expect((await listed(second, ws)).map((s) => s.sessionId)).not.toContain(sessionId);
    second.expectValid();
  });

  it.runIf(DELETES)("deletes a released session after its release's native close", async () => {
    const client = await t.start({ env: { ZCODE_ACP_DIAGNOSTICS: "1" } });
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    const closes = async (): Promise<number> =>
      (await t.calls("closeSession")).filter((c) => (c.params as { sessionId?: string }).sessionId === sessionId).length;
    for (let i = 0; i < MAX_ATTACHED_SESSIONS; i++) await client.newSession(ws);
    const counts = (await client.agent.request("_zcode/diagnostics" as never, {} as never)) as { sessions: { releasedSessions: number } };
    expect(counts.sessions.releasedSessions).toBe(1);

    expect(await client.agent.request(DELETE, { sessionId })).toEqual({});
    expect(await closes()).toBe(1);
    const log = await t.sim().readCallLog();
    const closed = log.findIndex(
      (e) => e.kind === "call" && e.method === "closeSession" && (e.params as { sessionId?: string }).sessionId === sessionId,
    );
    const deletedAt = log.findIndex(
      (e) => e.kind === "call" && e.method === "deleteTask" && (e.params as { taskId?: string }).taskId === sessionId,
    );
    expect(deletedAt).toBeGreaterThan(closed);
    expect(closed).toBeGreaterThanOrEqual(0);
    expect((await listed(client, ws)).map((s) => s.sessionId)).not.toContain(sessionId);
    const after = (await client.agent.request("_zcode/diagnostics" as never, {} as never)) as { sessions: { releasedSessions: number } };
    expect(after.sessions.releasedSessions).toBe(0);
    client.expectValid();
  });

  it.runIf(DELETES)("fails session/list clearly when ZCode cannot say which sessions were deleted (never shows them)", async () => {
    const client = await t.start({ env: { ZCODE_SIM_PROFILE: JSON.stringify({ deletedTaskIdsFault: true }) } });
    await client.initialize();
    const ws = await t.workspace();
    await client.newSession(ws);
    await expect(client.agent.request("session/list", { cwd: ws })).rejects.toMatchObject({
      message: expect.stringMatching(/did not say which sessions .* were deleted/),
    });
    client.expectValid();
  });

  it.skipIf(DELETES)(
    "does not advertise or serve session/delete where the release has no real delete (V4 deleteSession only closes)",
    async () => {
      const client = await t.start();
      const init = await client.initialize();
      expect(init.agentCapabilities?.sessionCapabilities).not.toHaveProperty("delete");
      const ws = await t.workspace();
      const sessionId = await promptedSession(client, ws);
      const deleted = await answerLine(client, DELETE, { sessionId });
      expect(deleted.error).toMatchObject({ code: -32601, message: expect.stringMatching(/session\/delete is not available/) });
      // nothing reached ZCode, and the session still works and is listed
      expect(await t.commands("deleteSession")).toHaveLength(0);
      expect(await t.calls("deleteTask")).toHaveLength(0);
      expect(await client.prompt(sessionId, "still here")).toMatchObject({ stopReason: "end_turn" });
      expect((await listed(client, ws)).map((s) => s.sessionId)).toContain(sessionId);
      client.expectValid();
    },
  );

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

  it.runIf(FORKS)(
    "forks at the newest answer ZCode allows a fork at while a turn runs; refuses the running turn's answer readably, sending nothing",
    async () => {
      const client = await t.start();
      await client.initialize();
      const ws = await t.workspace();
      const { sessionId } = await client.newSession(ws);
      const settled = await answerId(client, sessionId, "settled question");
      const running = client.prompt(sessionId, "sim:steerable wait=120000");
      const chunk = await client.waitForUpdate(
        sessionId,
        (u) => u.sessionUpdate === "agent_message_chunk" && typeof u.messageId === "string" && u.messageId !== settled,
      );
      const forksBefore = (await t.commands("forkAssistant")).length;
      // the running turn's answer is no place to fork at (ZCode's rows say canFork only once a turn is done)
      await expect(
        client.agent.request(FORK, { sessionId, cwd: ws, _meta: { jetbrains: { air: { fork: { messageId: chunk.messageId } } } } }),
      ).rejects.toMatchObject({
        code: -32602,
        // on the V4 read path ZCode's rows have the running answer, not forkable; the simulated 3.14.4's
        // rows, made from the stored history when first read, do not have it yet
        message: FULL_ROWS
          ? expect.stringContaining("forks only at the last answer of a finished turn")
          : expect.stringContaining(chunk.messageId),
      });
      expect(await t.commands("forkAssistant")).toHaveLength(forksBefore);
      // without a messageId: the newest answer ZCode allows a fork at, the settled one
      const fork = await client.agent.request<{ sessionId: string }>(FORK, { sessionId, cwd: ws });
      expect(await t.commands("forkAssistant")).toHaveLength(forksBefore + 1);
      await client.cancel(sessionId);
      expect(await running).toMatchObject({ stopReason: "cancelled" });
      const history = await replayed(ws, fork.sessionId);
      expect(history.user).toContain("settled question");
      expect(history.user).not.toContain("sim:steerable");
      client.expectValid();
    },
  );

  it.runIf(FORKS)("answers ZCode's refusal of a fork (a guard) with a readable invalid-params error", async () => {
    const client = await t.start({ env: { ZCODE_SIM_PROFILE: JSON.stringify({ v4ForkRefusal: "guard.compactOperationLock" }) } });
    await client.initialize();
    const ws = await t.workspace();
    const sessionId = await promptedSession(client, ws);
    await expect(client.agent.request(FORK, { sessionId, cwd: ws })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/refused to fork .*a compaction of the conversation is running \(guard\.compactOperationLock\)/),
    });
    expect(await t.commands("forkAssistant")).not.toHaveLength(0);
    // the session is untouched and still works
    expect(await client.prompt(sessionId, "after the refusal")).toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

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
): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  await client.agent.request(method, params).catch(() => undefined);
  const request = await client.waitForLine(
    (l) => l.from === "client" && l.message.method === method && l.message.params?.sessionId === params.sessionId,
  );
  const line = await client.waitForLine((l) => l.from === "agent" && l.message.id === request.message.id && l.message.method === undefined);
  return line.message as { result?: unknown; error?: { code: number; message: string } };
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
