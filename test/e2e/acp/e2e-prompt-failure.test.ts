/**
 * A failed prompt reads well in any client (adr/0010): before the JSON-RPC error, the reason is
 * streamed into the session as one agent_message_chunk of its own message; the error itself is
 * unchanged. Through the built CLI, raw transcript checked.
 */
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e } from "../../support/e2e-harness.js";
import { V3 } from "../answers.js";

const t = e2e();
/** what Paseo advertises: no elicitation */
const PASEO = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };

async function session(capabilities: acp.ClientCapabilities = PASEO, options: Parameters<typeof t.start>[0] = {}) {
  const client = await t.start(options);
  await client.initialize(capabilities, { name: "Paseo", version: "0.11.0" });
  const { sessionId } = await client.newSession(await t.workspace());
  return { client, sessionId };
}

async function failingPrompt(client: AcpTestClient, sessionId: string, text: string): Promise<acp.RequestError> {
  const error = await client.prompt(sessionId, text).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(acp.RequestError);
  return error as acp.RequestError;
}

/** the raw line index of the prompt's error response and the explanation chunks of the session */
function wire(client: AcpTestClient, sessionId: string) {
  const errorAt = client.indexOf((l) => l.message.error !== undefined && l.message.method === undefined);
  const chunks = client.transcript.lines
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.from === "agent" && l.message?.method === "session/update" && l.message.params.sessionId === sessionId)
    .filter(({ l }) => l.message.params.update._meta?.["zcode-acp/promptError"] !== undefined);
  return { errorAt, chunks };
}

describe("e2e: a failed prompt is explained in the session before the error", () => {
  it("question in a client without forms: the reason as a message chunk, then the unchanged JSON-RPC error", async () => {
    const { client, sessionId } = await session();
    const error = await failingPrompt(client, sessionId, "sim:questions");
    expect(error.data).toMatchObject({ code: "INTERACTION_UNSUPPORTED" });
    const { errorAt, chunks } = wire(client, sessionId);
    expect(chunks).toHaveLength(1);
    const { l: line, i: at } = chunks[0]!;
    expect(at).toBeLessThan(errorAt);
    // nothing of the session between the explanation and the error
    const between = client.transcript.lines
      .slice(at + 1, errorAt)
      .filter((l) => l.from === "agent" && l.message?.params?.sessionId === sessionId);
    expect(between).toEqual([]);
    const update = line.message.params.update;
    expect(update).toMatchObject({ sessionUpdate: "agent_message_chunk", content: { type: "text" } });
    expect(update.messageId).toMatch(/^zcode-acp-error-/);
    expect(update._meta["zcode-acp/promptError"]).toEqual({ code: "INTERACTION_UNSUPPORTED", jsonRpcCode: error.code });
    const text: string = update.content.text;
    expect(text.trim()).toBe(`zcode-acp: ${error.message} [INTERACTION_UNSUPPORTED]`);
    expect(text.trim()).not.toContain("\n");
    expect(text).not.toContain("[object Object]");
    // the error itself: code and message as before
    const raw = client.transcript.lines[errorAt]!.message.error;
    expect(raw).toEqual({ code: error.code, message: error.message, data: error.data });
    client.expectValid();
  });

  it("a turn that ZCode fails: explained, and the next prompt works without a second explanation", async () => {
    const { client, sessionId } = await session();
    const error = await failingPrompt(client, sessionId, "sim:turn-failed");
    expect(client.text(sessionId)).toContain(`zcode-acp: ${error.message}`);
    await expect(client.prompt(sessionId, "hello again")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(wire(client, sessionId).chunks).toHaveLength(1);
    client.expectValid();
  });

  // sim:unknown-event is a legacy event type: the V4 read path has none (its fail-closed cases:
  // test/unit/native/v4-read/reader.test.ts)
  it.skipIf(V3)("a form-capable client gets the same explanation for a protocol failure (legacy stream only)", async () => {
    const { client, sessionId } = await session({ ...PASEO, elicitation: { form: {} } });
    const error = await failingPrompt(client, sessionId, "sim:unknown-event");
    expect(wire(client, sessionId).chunks.map(({ l }) => l.message.params.update.content.text.trim())).toEqual([
      `zcode-acp: ${error.message.replace(/\s+/g, " ").trim()} [${(error.data as { code: string }).code}]`,
    ]);
    client.expectValid();
  });

  it("an unknown session or a busy session: the error only, nothing written into a session", async () => {
    // busy: a prompt beyond the 8 that may wait behind the running one (adr/0023); a prompt sent
    // while a turn runs, or stops, is queued instead (test/e2e/v4)
    const { client, sessionId } = await session(PASEO);
    const unknown = await failingPrompt(client, "ses_does_not_exist", "hello");
    expect(unknown.code).toBe(-32002);
    const running = client.prompt(sessionId, "sim:stream-until-cancel interval=20");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const waiting = Array.from({ length: 8 }, (_, i) => client.prompt(sessionId, `waiting ${i}`));
    const busy = await failingPrompt(client, sessionId, "one too many");
    expect(busy.data).toMatchObject({ code: "SESSION_BUSY" });
    expect(busy.message).toMatch(/already has 8 inputs waiting/);
    await client.cancel(sessionId);
    for (const answer of [running, ...waiting]) await expect(answer).resolves.toMatchObject({ stopReason: "cancelled" });
    const explained = client.transcript.lines.filter(
      (l) => l.from === "agent" && l.message?.params?.update?._meta?.["zcode-acp/promptError"],
    );
    expect(explained).toEqual([]);
    client.expectValid();
  });
});
