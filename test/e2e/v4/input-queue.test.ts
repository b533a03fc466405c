/**
 * ZCode's input queue as the bridge owns it (adr/0023), end to end through the built CLI against
 * the simulated install, whose V4 input follows ZCode's source (zcode-v4-source-check.md): a busy
 * session queues, `startNow` preempts, guides are acked `queue`, a stop that leaves items holds
 * the queue, attachments are checked by ZCode's patterns. Each case is a way a prompt went
 * unanswered, or ZCode's own work was cut off, before the input queue had one owner.
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { until } from "../../support/until.js";

const t = e2e();
const STEERING = "_session/steering";
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");

async function session(options: Parameters<typeof t.start>[0] = {}) {
  const client = await t.start(options);
  await client.initialize();
  const ws = await t.workspace();
  const { sessionId } = await client.newSession(ws);
  return { client, sessionId, ws };
}

type Envelope = { commandId: string; type: string; payload: Record<string, any> };
const envelopes = async (type: string, sessionId: string): Promise<Envelope[]> =>
  forSession(await t.commands(type), sessionId).map((e) => e.params as Envelope);

/** the call-log lines of one kind written for this session (the simulator's `preempted`, `turn-attachments`, …) */
async function logged(kind: string, sessionId: string): Promise<Array<Record<string, any>>> {
  return (await t.sim().readCallLog()).filter((e) => e.kind === kind && (e as { sessionId?: string }).sessionId === sessionId) as Array<
    Record<string, any>
  >;
}

/** settles with what the prompt answered: its result, or its error */
const settled = <T>(answer: Promise<T>): Promise<{ ok: T } | { error: unknown }> =>
  answer.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error }),
  );

describe("e2e: ZCode's input queue owned by the bridge", () => {
  it("cancels a running turn with six prompts waiting: seven cancelled answers, one removal each, one stop, and the session goes on", async () => {
    const { client, sessionId } = await session();
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=5000");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const waiting = Array.from({ length: 6 }, (_, i) => client.prompt(sessionId, `queued number ${i}`));
    await until(async () => (await envelopes("sendText", sessionId)).length === 7, { what: "seven sendText commands" });
    await client.cancel(sessionId);
    for (const answer of [first, ...waiting]) await expect(answer).resolves.toMatchObject({ stopReason: "cancelled" });
    // the next prompt is answered: nothing of the session is held
    await expect(client.prompt(sessionId, "after the cancel")).resolves.toMatchObject({ stopReason: "end_turn" });
    const text = client.text(sessionId);
    expect(text).toContain("You said: after the cancel");
    for (let i = 0; i < 6; i++) expect(text).not.toContain(`queued number ${i}`);
    // one compare-and-set removal after the other: each at the revision the previous one returned, none stale
    const removals = await envelopes("deleteQueueItem", sessionId);
    expect(removals).toHaveLength(6);
    expect(new Set(removals.map((e) => e.payload.queueItemId)).size).toBe(6);
    const stops = forSession(await t.commands("stop"), sessionId);
    expect(stops).toHaveLength(1);
    const lastRemoval = forSession(await t.commands("deleteQueueItem"), sessionId).at(-1)!;
    expect(stops[0]!.seq).toBeGreaterThan(lastRemoval.seq);
    client.expectValid();
  });

  it("answers the prompts waiting behind a turn the bridge fails itself, once each, and takes the next prompt", async () => {
    let answerPermission!: () => void;
    const permissionAsked = new Promise<void>((resolve) => {
      answerPermission = resolve;
    });
    let asked = false;
    const { client, sessionId } = await session({
      // a permission with no deny option that the client does not allow: the bridge stops the turn itself
      onPermission: async () => {
        asked = true;
        await permissionAsked;
        return { outcome: { outcome: "cancelled" } };
      },
    });
    const first = settled(client.prompt(sessionId, "sim:permission-no-deny"));
    await until(() => asked, { what: "the permission request" });
    const waiting = [settled(client.prompt(sessionId, "waiting one")), settled(client.prompt(sessionId, "waiting two"))];
    await until(async () => (await envelopes("sendText", sessionId)).length === 3, { what: "the waiting prompts at ZCode" });
    answerPermission();
    const answers = await Promise.all([first, ...waiting]);
    expect(answers).toHaveLength(3);
    // each answered exactly once, and the queued ones never ran
    for (const prompt of ["sim:permission-no-deny", "waiting one", "waiting two"]) {
      const request = client.transcript.lines.find(
        (l) => l.from === "client" && l.message?.method === "session/prompt" && l.message.params.prompt[0]?.text === prompt,
      );
      expect(client.transcript.lines.filter((l) => l.from === "agent" && l.message?.id === request?.message.id)).toHaveLength(1);
    }
    await expect(client.prompt(sessionId, "the session still works")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: the session still works");
    expect(client.text(sessionId)).not.toContain("You said: waiting");
    client.expectValid();
  });

  it("writes each queued turn's updates after the previous prompt's answer: three prompts behind a running one (adr/0036)", async () => {
    const { client, sessionId } = await session();
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=10");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const queued = [1, 2, 3].map((n) => client.prompt(sessionId, `queued ${n}`));
    for (const answer of [first, ...queued]) await expect(answer).resolves.toMatchObject({ stopReason: "end_turn" });
    // in wire order: each prompt's answer comes before the first chunk of the next prompt's turn
    const lines = client.transcript.lines.filter((l) => l.from === "agent" && l.message !== undefined).map((l) => l.message);
    const promptIds = client.transcript.lines
      .filter((l) => l.from === "client" && l.message?.method === "session/prompt")
      .map((l) => l.message.id as number);
    expect(promptIds).toHaveLength(4);
    // the chunks' text in wire order, with the line each piece came on (deltas may split a sentence)
    let text = "";
    const pieces: Array<{ from: number; line: number }> = [];
    lines.forEach((m, line) => {
      const chunk = m.method === "session/update" ? m.params.update : undefined;
      if (chunk?.sessionUpdate !== "agent_message_chunk" || chunk.content?.type !== "text") return;
      pieces.push({ from: text.length, line });
      text += chunk.content.text;
    });
    const lineAt = (offset: number): number => [...pieces].reverse().find((piece) => piece.from <= offset)?.line ?? -1;
    for (let n = 1; n <= 3; n++) {
      const at = text.indexOf(`You said: queued ${n}`);
      expect(at).toBeGreaterThan(-1);
      const firstWords = lineAt(at);
      const previousAnswer = lines.findIndex((m) => m.id === promptIds[n - 1] && !("method" in m));
      expect(previousAnswer, `prompt ${n - 1} answered before queued ${n}'s first words`).toBeLessThan(firstWords);
    }
    client.expectValid();
  });

  it("$/cancel_request of a queued prompt removes that prompt only: the running turn and the prompt behind it go on (adr/0036)", async () => {
    const { client, sessionId } = await session();
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=40");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const controller = new AbortController();
    const cancelled = client.agent.request(
      "session/prompt",
      { sessionId, prompt: [{ type: "text", text: "cancel me alone" }] },
      { cancellationSignal: controller.signal },
    );
    const after = client.prompt(sessionId, "behind the cancelled one");
    await until(async () => (await envelopes("sendText", sessionId)).length === 3, { what: "three sends" });
    controller.abort();
    await expect(cancelled).resolves.toMatchObject({ stopReason: "cancelled" });
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(after).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(forSession(await t.commands("stop"), sessionId)).toHaveLength(0);
    expect(client.text(sessionId)).toContain("You said: behind the cancelled one");
    expect(client.text(sessionId)).not.toContain("You said: cancel me alone");
    client.expectValid();
  });

  it("keeps send order: a prompt with an image queued before a text prompt reaches ZCode first and each gets its own answer", async () => {
    const { client, sessionId } = await session();
    const order: string[] = [];
    const first = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=20");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const withImage = client
      .prompt(sessionId, [
        { type: "text", text: "look at this image" },
        { type: "image", data: PNG, mimeType: "image/png" },
      ])
      .then((r) => (order.push("image"), r));
    const textOnly = client.prompt(sessionId, "plain text after it").then((r) => (order.push("text"), r));
    for (const answer of [first, withImage, textOnly]) await expect(answer).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(order).toEqual(["image", "text"]);
    expect((await envelopes("sendText", sessionId)).map((e) => e.payload.text)).toEqual([
      "sim:stream-until-cancel interval=20 max=20",
      "look at this image",
      "plain text after it",
    ]);
    expect(client.text(sessionId)).toMatch(/You said: look at this image[\s\S]*You said: plain text after it$/);
    client.expectValid();
  });

  it("sends steering after the prompt whose upload is under way, and it joins that prompt's turn", async () => {
    const { client, sessionId } = await session({ simProfile: { v4HelloDelayMs: 500 } });
    const turn = client.prompt(sessionId, [
      { type: "text", text: "sim:steerable wait=15000" },
      { type: "image", data: PNG, mimeType: "image/png" },
    ]);
    // the prompt's input is on its way (the handshake, then its upload): the steering text must not overtake it
    await until(async () => (await t.calls("helloConversationV4")).length > 0, { what: "the handshake under way", intervalMs: 20 });
    const steered = client.agent.request(STEERING, { sessionId, prompt: [{ type: "text", text: "use tabs please" }] });
    await expect(steered).resolves.toEqual({ outcome: "injected" });
    await expect(turn).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("Steered by: use tabs please");
    const sent = await envelopes("sendText", sessionId);
    expect(sent.map((e) => [e.payload.text, e.payload.requestedDelivery])).toEqual([
      ["sim:steerable wait=15000", undefined],
      ["use tabs please", "guide"],
    ]);
    client.expectValid();
  });

  it("never aborts a turn ZCode runs on its own: a prompt sent meanwhile waits in ZCode's queue and is answered after it", async () => {
    const { client, sessionId } = await session();
    await expect(client.prompt(sessionId, "sim:background wait=1500")).resolves.toMatchObject({ stopReason: "end_turn" });
    // ZCode now runs the background command's result as a turn of its own
    await expect(client.prompt(sessionId, "while zcode works")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: while zcode works");
    expect(await logged("preempted", sessionId)).toEqual([]);
    const [, sent] = await envelopes("sendText", sessionId);
    expect(sent!.payload).not.toHaveProperty("requestedDelivery");
    client.expectValid();
  });

  it("takes the next prompt after a stop that left ZCode's queue held (a steering text it never drained)", async () => {
    const { client, sessionId } = await session();
    const running = client.prompt(sessionId, "sim:stream-until-cancel interval=20 max=5000");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    // this scenario never takes guides: ZCode holds the text as a guide of the running turn
    const steered = settled(client.agent.request(STEERING, { sessionId, prompt: [{ type: "text", text: "left behind" }] }));
    await until(async () => (await envelopes("sendText", sessionId)).length === 2, { what: "the steering text at ZCode" });
    await client.cancel(sessionId);
    await expect(running).resolves.toMatchObject({ stopReason: "cancelled" });
    expect(await steered).toMatchObject({ error: expect.anything() });
    await expect(client.prompt(sessionId, "after the held stop")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(client.text(sessionId)).toContain("You said: after the held stop");
    // the text the client was told was removed never ran
    expect(client.text(sessionId)).not.toContain("left behind");
    expect((await envelopes("setAutoDrain", sessionId)).map((e) => e.payload)).toEqual([{ autoDrain: true }]);
    client.expectValid();
  });

  it("sends attachments ZCode accepts: 0 bytes as 0 chunks, a bare MIME type, a safe file name, and large text in the prompt", async () => {
    const { client, sessionId, ws } = await session();
    const big = "x".repeat(100 * 1024);
    const longName = `${"n".repeat(300)}.md`;
    await expect(
      client.prompt(sessionId, [
        { type: "text", text: "read these" },
        { type: "resource", resource: { uri: `file://${ws}/empty.txt`, text: "", mimeType: "text/plain" } },
        { type: "resource", resource: { uri: `file://${ws}/notes.txt`, text: "short note", mimeType: "text/plain; charset=utf-8" } },
        { type: "resource", resource: { uri: `file://${ws}/${longName}`, text: "# long", mimeType: "text/markdown" } },
        { type: "resource", resource: { uri: `file://${ws}/big.log`, text: big, mimeType: "text/plain" } },
      ]),
    ).resolves.toMatchObject({ stopReason: "end_turn" });
    const begins = forSession(await t.calls("attachmentBeginV4"), sessionId).map((c) => c.params as Record<string, any>);
    const empty = begins.find((b) => b.fileName === "empty.txt");
    expect(empty).toMatchObject({ totalBytes: 0, totalChunks: 0 });
    expect(begins.find((b) => b.fileName === "notes.txt")).toMatchObject({ mime: "text/plain" });
    const long = begins.find((b) => typeof b.fileName === "string" && b.fileName.startsWith("nnn"));
    expect(long!.fileName.length).toBeLessThanOrEqual(255);
    expect(long!.fileName.endsWith(".md")).toBe(true);
    // the 100 KiB text would reach the model without its content as an attachment: it is in the prompt instead
    expect(begins.find((b) => b.fileName === "big.log")).toBeUndefined();
    const [sent] = await envelopes("sendText", sessionId);
    expect(sent!.payload.text).toContain(big);
    // nothing that reached ZCode lost its content
    const reached = (await logged("turn-attachments", sessionId)).flatMap((e) => e.attachments as Array<{ contentReached: boolean }>);
    expect(reached.length).toBeGreaterThan(0);
    expect(reached.every((a) => a.contentReached)).toBe(true);
    client.expectValid();
  });
});
