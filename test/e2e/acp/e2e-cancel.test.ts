import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { answersFor } from "../answers.js";

const t = e2e();

async function session(options: Parameters<typeof t.start>[0] = {}) {
  const client = await t.start(options);
  await client.initialize();
  const { sessionId } = await client.newSession(await t.workspace());
  return { client, sessionId };
}

const firstChunk = (u: any) => u.sessionUpdate === "agent_message_chunk";

describe("e2e: cancel, host failures and interactions routing", () => {
  it("cancels mid-stream with exactly one stop and accepts the next prompt", async () => {
    const { client, sessionId } = await session();
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, firstChunk);
    await client.cancel(sessionId);
    await client.cancel(sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    // the install takes V4 input: the stop is a V4 command on zcode-agent (adr/0022)
    const stop = (await t.stops(sessionId))[0]!;
    expect([stop.service, (stop.params as { type?: string }).type]).toEqual(["zcode-agent", "stop"]);
    await expect(client.prompt(sessionId, "after cancel")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: after cancel");
    client.expectValid();
  });

  it("resolves cancelled when the host answers the stop with turn.failed", async () => {
    const { client, sessionId } = await session({ simProfile: { cancelTerminal: "failed" } });
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, firstChunk);
    await client.cancel(sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    await expect(client.prompt(sessionId, "next")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("resolves cancelled after the grace period without a terminal event and resynchronises", async () => {
    const { client, sessionId } = await session({ simProfile: { cancelTerminal: "none" }, cancelGraceMs: 400 });
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, firstChunk);
    const cancelledAt = Date.now();
    await client.cancel(sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(350);
    expect(await t.stops(sessionId)).toHaveLength(1);
    const reads = forSession(await t.calls("readSession"), sessionId).length;
    await expect(client.prompt(sessionId, "after the silent stop")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(forSession(await t.calls("readSession"), sessionId).length).toBeGreaterThan(reads);
    expect(client.text(sessionId)).toContain("You said: after the silent stop");
    client.expectValid();
  });

  it("keeps a late terminal event of a cancelled turn out of the next prompt", async () => {
    const { client, sessionId } = await session({ simProfile: { cancelTerminal: "late", cancelLateMs: 800 }, cancelGraceMs: 500 });
    const turn = client.prompt(sessionId, "sim:stream-until-cancel interval=30");
    await client.waitForUpdate(sessionId, firstChunk);
    await client.cancel(sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    // the next prompt waits for the native turn to end, then runs normally
    await expect(client.prompt(sessionId, "after the late stop")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("treats $/cancel_request on a prompt like session/cancel", async () => {
    const { client, sessionId } = await session();
    const controller = new AbortController();
    const turn = client.agent.request(
      "session/prompt",
      { sessionId, prompt: [{ type: "text", text: "sim:stream-until-cancel interval=30" }] },
      { cancellationSignal: controller.signal },
    );
    await client.waitForUpdate(sessionId, firstChunk);
    controller.abort();
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    client.expectValid();
  });

  it("fails the prompt when the host crashes, then restarts the host for the next prompt", async () => {
    for (const how of ["throw", "exit"]) {
      const { client, sessionId } = await session();
      const error = await client.prompt(sessionId, `sim:crash how=${how}`).catch((e: { code?: number; data?: { code?: string } }) => e);
      expect(error).toMatchObject({ code: -32603 });
      expect(["HOST_EXITED", "CHANNEL_CLOSED"]).toContain((error as { data: { code: string } }).data.code);
      await expect(client.prompt(sessionId, `back after ${how}`)).resolves.toMatchObject({ stopReason: "end_turn" });
      expect(client.text(sessionId)).toContain(`You said: back after ${how}`);
      client.expectValid();
    }
  });

  it("routes permissions to the broker: allow runs the tool; cancel while pending denies once and stops once", async () => {
    const { client, sessionId } = await session({
      onPermission: (params) => ({
        outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
      }),
    });
    await expect(client.prompt(sessionId, "sim:permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const request = client.transcript.agentMessages().find((m) => m.method === "session/request_permission");
    expect(request.params.toolCall).toMatchObject({ kind: "execute" });
    expect(client.updates(sessionId)).toContainEqual(expect.objectContaining({ status: "completed" }));

    let release!: () => void;
    const pending = new Promise<void>((resolve) => (release = resolve));
    const second = await session({
      onPermission: async () => {
        release();
        return new Promise(() => undefined); // never answers by itself: the cancel must end it
      },
    });
    const turn = second.client.prompt(second.sessionId, "sim:permission");
    await pending;
    await second.client.cancel(second.sessionId);
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    const answers = answersFor(await t.sim().readCallLog(), "respondPermission", second.sessionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.optionId).not.toMatch(/allow/);
    expect(await t.stops(second.sessionId)).toHaveLength(1);
    await expect(second.client.prompt(second.sessionId, "next")).resolves.toMatchObject({ stopReason: "end_turn" });
    second.client.expectValid({ allowUnanswered: true });
  });

  it("stops the turn with a clear error on a provider-headers request", async () => {
    const { client, sessionId } = await session();
    const error = await client.prompt(sessionId, "sim:provider-headers").catch((e: { message?: string; data?: { code?: string } }) => e);
    expect(error).toMatchObject({ code: -32603, data: { code: "PROVIDER_HEADERS_UNSUPPORTED" } });
    // the stop is sent without waiting for its answer; the next prompt travels the same ordered
    // channel, so once it has ended every earlier call is in the host's log
    await expect(client.prompt(sessionId, "next")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    expect(forSession(await t.calls("respondProviderRuntimeHeaders"), sessionId)).toHaveLength(1);
    client.expectValid();
  });
});
