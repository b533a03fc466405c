/**
 * Prompts through ZCode's V4 conversation commands (adr/0022), against the simulated install of
 * the current line (both lines take V4 input): `sendText` for every prompt, uploads for images,
 * `_session/steering` (guided input), queued prompts, cancel of a running turn and its queue with
 * one stop, and the failures that must be clear (duplicate / stale acks, an unknown wire version,
 * a lost ack that is asked for and never resent).
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { until } from "../../support/until.js";
import { V3 } from "../answers.js";

const t = e2e();
const STEERING = "_session/steering";
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function session(options: Parameters<typeof t.start>[0] = {}) {
  const client = await t.start(options);
  const init = await client.initialize();
  const ws = await t.workspace();
  const { sessionId } = await client.newSession(ws);
  return { client, sessionId, ws, init };
}

type Envelope = { commandId: string; clientId: string; sessionId: string; type: string; payload: Record<string, any> };
const envelopes = async (type: string, sessionId: string): Promise<Envelope[]> =>
  forSession(await t.commands(type), sessionId).map((e) => e.params as Envelope);

/** calls of `method` by the host run of the running test (the newest run in the log) */
async function thisRun(method: string) {
  const log = await t.sim().readCallLog();
  const run = log.at(-1)?.run;
  return log.filter((e) => e.run === run && e.kind === "call" && e.method === method);
}

/** the index in the transcript of the answer to the prompt whose request carried `text` */
function answerIndex(client: Awaited<ReturnType<typeof session>>["client"], text: string): number {
  const request = client.transcript.lines.find(
    (l) => l.from === "client" && l.message?.method === "session/prompt" && l.message.params.prompt[0]?.text === text,
  );
  return client.indexOf((l) => l.message?.id === request?.message.id && l.message?.result !== undefined);
}

describe("e2e: prompt input through V4 conversation commands", () => {
  it("sends a prompt as sendText after one handshake, never sendPrompt, and ends with the turn that carries its input id", async () => {
    const { client, sessionId, init } = await session();
    expect(init._meta).toEqual({ steering: { supported: true } });
    await expect(client.prompt(sessionId, "hello there")).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(client.prompt(sessionId, "and again")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toBe("You said: hello thereYou said: and again");
    const sent = await envelopes("sendText", sessionId);
    // ordinary prompts ask for no delivery: ZCode routes them (startNow would preempt its work)
    expect(sent.map((e) => [e.payload.text, "requestedDelivery" in e.payload])).toEqual([
      ["hello there", false],
      ["and again", false],
    ]);
    expect(sent.every((e) => UUID_V7.test(e.commandId))).toBe(true);
    expect(forSession(await t.calls("sendPrompt"), sessionId)).toEqual([]);
    // one handshake per host run, with the one client id every envelope carries
    const hellos = await thisRun("initializeConversationV4");
    expect(hellos).toHaveLength(1);
    expect(hellos[0]!.params).toMatchObject({ kind: "clientHello", protocolVersion: 3 });
    // not known to exist on 3.11.2 / 3.12.3, whose clientHello schema is strict
    expect(hellos[0]!.params).not.toHaveProperty("clientKind");
    expect(new Set(sent.map((e) => e.clientId))).toEqual(new Set([(hellos[0]!.params as { clientId: string }).clientId]));
    client.expectValid();
  });

  it("uploads an image with the attachment calls and names its ref in sendText", async () => {
    const { client, sessionId } = await session();
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
    await expect(
      client.prompt(sessionId, [
        { type: "text", text: "what is this" },
        { type: "image", data: png, mimeType: "image/png" },
      ]),
    ).resolves.toMatchObject({ stopReason: "end_turn" });
    const begin = forSession(await t.calls("attachmentBeginV4"), sessionId);
    expect(begin).toHaveLength(1);
    expect(begin[0]!.params).toMatchObject({ fileName: "image-1.png", mime: "image/png", totalBytes: 16, totalChunks: 1 });
    expect(forSession(await t.calls("attachmentChunkV4"), sessionId)).toHaveLength(1);
    expect(forSession(await t.calls("attachmentCommitV4"), sessionId)).toHaveLength(1);
    const [sent] = await envelopes("sendText", sessionId);
    expect(sent!.payload).toMatchObject({ text: "what is this" });
    expect(sent!.payload).not.toHaveProperty("requestedDelivery");
    expect(sent!.payload.attachments).toEqual([
      { ref: expect.stringMatching(/^att_/), fileName: "image-1.png", mime: "image/png", bytes: 16 },
    ]);
    expect(forSession(await t.calls("sendPrompt"), sessionId)).toEqual([]);
    client.expectValid();
  });

  it("steers a running turn: the text is injected, the model answers it, and the first prompt ends once", async () => {
    const { client, sessionId } = await session();
    const first = client.prompt(sessionId, "sim:steerable wait=15000");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await expect(client.agent.request(STEERING, { sessionId, prompt: [{ type: "text", text: "use tabs please" }] })).resolves.toEqual({
      outcome: "injected",
    });
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("Steered by: use tabs please");
    // the model's answer to the steering is part of the turn: it comes before the prompt's answer
    const steered = client.indexOf((l) => l.message?.params?.update?.content?.text?.includes("Steered") === true);
    expect(steered).toBeGreaterThan(-1);
    expect(answerIndex(client, "sim:steerable wait=15000")).toBeGreaterThan(steered);
    const sent = await envelopes("sendText", sessionId);
    expect(sent.map((e) => e.payload.requestedDelivery)).toEqual([undefined, "guide"]);
    expect(client.transcript.agentMessages().filter((m) => m.result?.stopReason !== undefined)).toHaveLength(1);
    client.expectValid();
  });

  it("answers promptRequired to steering while idle when the client asks for it (nothing sent), else starts a turn", async () => {
    const { client, sessionId } = await session();
    await client.prompt(sessionId, "hi");
    await expect(
      client.agent.request(STEERING, {
        sessionId,
        prompt: [{ type: "text", text: "too late" }],
        _meta: { steering: { idleBehavior: "promptRequired" } },
      }),
    ).resolves.toEqual({ outcome: "promptRequired", reason: "noRunningTurn" });
    expect((await envelopes("sendText", sessionId)).map((e) => e.payload.text)).toEqual(["hi"]);
    await expect(client.agent.request(STEERING, { sessionId, prompt: [] })).rejects.toMatchObject({ code: -32602 });
    // without the opt-in, idle steering starts a turn of its own, as both adapters do
    await expect(
      client.agent.request(STEERING, { sessionId, prompt: [{ type: "text", text: "sim:plain chunks=1 go on" }] }),
    ).resolves.toEqual({
      outcome: "startedNewTurn",
    });
    await client.waitForUpdate(sessionId, (u) => u.content?.text === "You said: go on");
    expect((await envelopes("sendText", sessionId)).map((e) => e.payload.requestedDelivery)).toEqual([undefined, undefined]);
    await expect(client.prompt(sessionId, "still fine")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  });

  it("queues a second prompt in ZCode while a turn runs and answers it end_turn after the first", async () => {
    const { client, sessionId } = await session();
    const order: string[] = [];
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=15").then((r) => (order.push("first"), r));
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const second = client.prompt(sessionId, "second one").then((r) => (order.push("second"), r));
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(second).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(order).toEqual(["first", "second"]);
    expect(client.text(sessionId)).toMatch(/tick 14 You said: second one$/);
    const sent = await envelopes("sendText", sessionId);
    // the second one was queued by ZCode's own routing (the session was busy), not by asking for it
    expect(sent.map((e) => e.payload.requestedDelivery)).toEqual([undefined, undefined]);
    client.expectValid();
  });

  it("cancels a running turn and two queued prompts: three cancelled answers, one stop, the queue emptied", async () => {
    const { client, sessionId } = await session();
    const prompts = ["sim:stream-until-cancel interval=20 max=500", "queued two", "queued three"];
    const first = client.prompt(sessionId, prompts[0]!);
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const queued = [client.prompt(sessionId, prompts[1]!), client.prompt(sessionId, prompts[2]!)];
    await until(async () => (await envelopes("sendText", sessionId)).length === 3, { what: "three sendText commands" });
    await client.cancel(sessionId);
    for (const answer of [first, ...queued]) await expect(answer).resolves.toMatchObject({ stopReason: "cancelled" });
    // each prompt answered once
    for (const text of prompts) expect(answerIndex(client, text)).toBeGreaterThan(-1);
    expect(client.transcript.agentMessages().filter((m) => m.result?.stopReason === "cancelled")).toHaveLength(3);
    expect(await envelopes("stop", sessionId)).toHaveLength(1);
    expect(forSession(await t.calls("stopGeneration"), sessionId)).toEqual([]);
    const removed = await envelopes("deleteQueueItem", sessionId);
    expect(new Set(removed.map((e) => e.payload.queueItemId)).size).toBe(2);
    // the session works on, and what was queued never ran
    await expect(client.prompt(sessionId, "after the cancel")).resolves.toMatchObject({ stopReason: "end_turn" });
    const text = client.text(sessionId);
    expect(text).toContain("You said: after the cancel");
    expect(text).not.toContain("queued two");
    expect(text).not.toContain("queued three");
    client.expectValid();
  });

  it("a cancel read while the prompt's input is on its way (handshake, then an upload): the stop follows the input and stops its turn", async () => {
    // the prompt's sendText waits for the slow handshake, then for its slow image upload; a stop
    // sent on its own would overtake it, find nothing running (noop), and the turn would stream on
    // with no client watching (on zcode-task-v3 the handshake was done when the session opened)
    const { client, sessionId } = await session({
      simProfile: { v4HelloDelayMs: 2000, v4AttachmentDelayMs: 2000 },
      cancelGraceMs: 120_000,
    });
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
    const turn = client.prompt(sessionId, [
      { type: "text", text: "sim:stream-until-cancel interval=20 max=5000" },
      { type: "image", data: png, mimeType: "image/png" },
    ]);
    await until(async () => forSession(await t.calls("attachmentBeginV4"), sessionId).length === 1, {
      what: "the upload under way",
      intervalMs: 20,
    });
    expect(await envelopes("sendText", sessionId)).toEqual([]); // the input is not at ZCode yet
    await client.cancel(sessionId);
    // answered at once; the stop follows the input once it reached ZCode
    await expect(turn).resolves.toMatchObject({ stopReason: "cancelled" });
    await until(async () => forSession(await t.commands("stop"), sessionId).length > 0, { what: "the stop", intervalMs: 20 });
    const [sent] = forSession(await t.commands("sendText"), sessionId);
    const stops = forSession(await t.commands("stop"), sessionId);
    expect(stops).toHaveLength(1);
    expect(stops[0]!.seq).toBeGreaterThan(sent!.seq);
    // the stop waited for the prompt's handshake: one per connection
    expect(await thisRun("helloConversationV4")).toHaveLength(1);
    expect(await thisRun("initializeConversationV4")).toHaveLength(1);
    // the turn the stop was for ended: the session takes the next prompt at once
    await expect(client.prompt(sessionId, "after the cancel")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(await t.stops(sessionId)).toHaveLength(1);
    client.expectValid();
  });

  it.each([
    ["duplicate", /duplicate of a command it already had \(proto\.duplicateCommand/],
    ["stale", /session changed meanwhile \(guard\.revisionChanged/],
  ])("fails a prompt clearly when ZCode acknowledges it %s", async (status, message) => {
    const { client, sessionId } = await session({ simProfile: { v4AckStatus: status } });
    await expect(client.prompt(sessionId, "hello")).rejects.toMatchObject({
      message: expect.stringMatching(message),
      data: { code: "HOST_CALL_FAILED", details: { status } },
    });
    expect(await envelopes("sendText", sessionId)).toHaveLength(1);
    client.expectValid();
  });

  it("refuses a V4 hello of an unknown wire version before sending anything", async () => {
    const refusal = {
      message: expect.stringMatching(/V4 conversation protocol 4, which zcode-acp's zcode-task-v\d line does not know/),
      data: { code: "UNSUPPORTED_ZCODE" },
    };
    if (V3) {
      // zcode-task-v3 reads a session only through V4: the session's subscription needs the
      // handshake, so the refusal comes with session/new, before any conversation call
      const client = await t.start({ simProfile: { v4ProtocolVersion: 4 } });
      await client.initialize();
      await expect(client.newSession(await t.workspace())).rejects.toMatchObject(refusal);
      expect(await thisRun("helloConversationV4")).toHaveLength(1);
      expect(await thisRun("initializeConversationV4")).toEqual([]);
      expect(await thisRun("subscribeConversationV4")).toEqual([]);
      expect(await thisRun("sendConversationCommandV4")).toEqual([]);
      client.expectValid();
      return;
    }
    const { client, sessionId } = await session({ simProfile: { v4ProtocolVersion: 4 } });
    await expect(client.prompt(sessionId, "hello")).rejects.toMatchObject(refusal);
    expect(await thisRun("helloConversationV4")).toHaveLength(1);
    expect(await thisRun("initializeConversationV4")).toEqual([]);
    expect(await envelopes("sendText", sessionId)).toEqual([]);
    client.expectValid();
  });

  it("asks ZCode about a prompt whose ack was lost and never sends it again", async () => {
    const { client, sessionId } = await session({
      simProfile: { v4AckLost: true },
      env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ sendPrompt: 400 }) },
    });
    await expect(client.prompt(sessionId, "did you get this")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toBe("You said: did you get this");
    const sent = await envelopes("sendText", sessionId);
    expect(sent).toHaveLength(1);
    // the prompt answers when its turn ends, which may be before the lost ack's wait runs out
    const queries = await until(
      async () => {
        const calls = await t.calls("queryConversationCommandsV4");
        return calls.length > 0 ? calls : undefined;
      },
      { what: "ZCode asked about the lost ack", intervalMs: 20 },
    );
    expect(queries.map((q) => q.params)).toEqual([expect.objectContaining({ commands: [{ sessionId, commandId: sent[0]!.commandId }] })]);
    client.expectValid();
  });

  it("a queued prompt whose outcome ZCode cannot say fails alone: it leaves ZCode's queue, the running turn and the prompt behind it go on", async () => {
    const { client, sessionId } = await session({
      // the second sendText's answer is lost and ZCode's command table cannot say what happened to it
      simProfile: { v4AckLost: 2, v4QueryUnavailable: true },
      env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ sendPrompt: 400 }) },
    });
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=50 max=60");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const lost = client.prompt(sessionId, "lost on the way");
    const behind = client.prompt(sessionId, "behind it");
    await expect(lost).rejects.toMatchObject({ message: expect.stringContaining("could not say whether it received it") });
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(behind).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: behind it");
    expect(client.text(sessionId)).not.toContain("lost on the way");
    const sent = await envelopes("sendText", sessionId);
    expect(sent.map((e) => e.payload.text)).toEqual(["sim:stream-until-cancel interval=50 max=60", "lost on the way", "behind it"]);
    // only the lost one left ZCode's queue; nothing was stopped
    const removals = await envelopes("deleteQueueItem", sessionId);
    // (a compare-and-set delete: tried again at ZCode's newer revision when the first try was stale)
    expect(new Set(removals.map((e) => e.payload.queueItemId))).toEqual(new Set([`queue_${sent[1]!.commandId}`]));
    expect(await envelopes("stop", sessionId)).toEqual([]);
    client.expectValid();
  });

  it("a prompt whose ack is lost while ZCode already runs it: only its turn is stopped, the queue is released, the prompt behind it runs", async () => {
    const { client, sessionId } = await session({
      simProfile: { v4AckLost: 1, v4QueryUnavailable: true },
      env: { ZCODE_ACP_TIMEOUTS_MS: JSON.stringify({ sendPrompt: 400 }) },
    });
    const lost = client.prompt(sessionId, "sim:stream-until-cancel interval=30 max=600");
    const behind = client.prompt(sessionId, "behind the lost one");
    await expect(lost).rejects.toMatchObject({ message: expect.stringContaining("could not say whether it received it") });
    await expect(behind).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: behind the lost one");
    const sent = await envelopes("sendText", sessionId);
    expect(sent.map((e) => e.payload.text)).toEqual(["sim:stream-until-cancel interval=30 max=600", "behind the lost one"]);
    // the lost prompt ran: one stop for it, and the queue its stop held is released at once
    expect(await envelopes("stop", sessionId)).toHaveLength(1);
    expect((await envelopes("setAutoDrain", sessionId)).map((e) => e.payload)).toContainEqual({ autoDrain: true });
    expect(await envelopes("deleteQueueItem", sessionId)).toEqual([]);
    client.expectValid();
  });
});
