/**
 * The V4 input module (src/native/shared/v4-input.ts) against the in-memory host: one handshake
 * per host incarnation, a lost ack asked for and never resent (the prompt fails when ZCode cannot
 * say), acks of the wrong shape refused, a stale compare-and-set retried with a new command id.
 */
import { describe, expect, it } from "vitest";
import { V4Input } from "../../../src/native/shared/v4-input.js";
import { BridgeError } from "../../../src/util/errors.js";
import { FakeHost } from "../../support/fake-host.js";

const REF = { workspacePath: "/w", sessionId: "s1" };
const TEXT = { content: "hello", attachments: [] };
type Envelope = { commandId: string; type: string; baseRevision?: number };

function host(answer: (envelope: Envelope) => unknown): FakeHost {
  const fake = new FakeHost({ calls: "null", incarnation: 1 });
  fake.handlers.set("agent.helloConversationV4", () => ({ kind: "hello", protocolVersion: 3 }));
  fake.handlers.set("agent.sendConversationCommandV4", (params) => answer(params.envelope as Envelope));
  return fake;
}

const accepted = (envelope: Envelope) => ({
  commandId: envelope.commandId,
  status: "accepted",
  revisionAtDecision: 7,
  result: { type: "inputAccepted", delivery: "startNow", inputId: envelope.commandId },
});

describe("V4 input", () => {
  it("shakes hands once per host incarnation, with the same client id each time", async () => {
    const fake = host(accepted);
    const input = new V4Input(fake, "zcode-task-v1", [3]);
    await input.sendText(REF, TEXT, "startNow");
    await input.sendText(REF, TEXT, "startNow");
    expect(fake.callsOf("initializeConversationV4")).toHaveLength(1);
    fake.incarnation = 2;
    const sent = await input.sendText(REF, TEXT, "startNow");
    const hellos = fake.callsOf("initializeConversationV4").map((c) => c.params.clientId);
    expect(hellos).toHaveLength(2);
    expect(hellos[0]).toBe(hellos[1]);
    expect(sent).toEqual({
      inputId: (fake.callsOf("sendConversationCommandV4").at(-1)!.params.envelope as Envelope).commandId,
      delivery: "startNow",
    });
  });

  it("asks about an input whose ack was lost, takes the host's ack, and never sends it twice", async () => {
    let lost: Envelope | undefined;
    const fake = host((envelope) => {
      lost = envelope;
      throw new BridgeError("HOST_TIMEOUT", "the host did not answer agent.sendConversationCommandV4 within 60000 ms");
    });
    fake.handlers.set("agent.queryConversationCommandsV4", () => ({ results: [{ key: {}, result: accepted(lost!) }] }));
    const sent = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, "startNow");
    expect(sent.inputId).toBe(lost!.commandId);
    expect(fake.callsOf("sendConversationCommandV4")).toHaveLength(1);
    expect(fake.callsOf("queryConversationCommandsV4")[0]!.params).toEqual({
      workspacePath: "/w",
      commands: [{ sessionId: "s1", commandId: lost!.commandId }],
    });
  });

  it("fails the prompt when ZCode cannot say whether it got the input (and does not resend it)", async () => {
    const fake = host(() => {
      throw new BridgeError("CHANNEL_CLOSED", "the internal channel was closed");
    });
    fake.handlers.set("agent.queryConversationCommandsV4", () => ({ results: [{ key: {}, result: "unknown" }] }));
    const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, "startNow").catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "CHANNEL_CLOSED",
      message: expect.stringMatching(/could not say whether it received it\. It was not sent again/),
    });
    expect(fake.callsOf("sendConversationCommandV4")).toHaveLength(1);
  });

  it("does not ask when the host refused the call outright", async () => {
    const fake = host(() => {
      throw new BridgeError("HOST_CALL_FAILED", "Invalid params");
    });
    await expect(new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, "startNow")).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
    });
    expect(fake.callsOf("queryConversationCommandsV4")).toEqual([]);
  });

  it("refuses an accepted ack that is not this command's input, and an ack of another shape", async () => {
    const other = host((envelope) => ({
      ...accepted(envelope),
      result: { type: "inputAccepted", delivery: "startNow", inputId: "someone-else" },
    }));
    await expect(new V4Input(other, "zcode-task-v1", [3]).sendText(REF, TEXT, "startNow")).rejects.toMatchObject({
      code: "NATIVE_PROTOCOL_ERROR",
    });
    const odd = host(() => ({ status: "maybe" }));
    await expect(new V4Input(odd, "zcode-task-v1", [3]).sendText(REF, TEXT, "startNow")).rejects.toMatchObject({
      code: "NATIVE_PROTOCOL_ERROR",
    });
  });

  it("retries a stale deleteQueueItem with a new command id at the revision ZCode decided at", async () => {
    const fake = host((envelope) =>
      envelope.baseRevision === 12
        ? { commandId: envelope.commandId, status: "accepted", revisionAtDecision: 13 }
        : { commandId: envelope.commandId, status: "stale", reasonCode: "guard.revisionChanged", revisionAtDecision: 12 },
    );
    await new V4Input(fake, "zcode-task-v1", [3]).deleteQueued(REF, "queue_x");
    const sent = fake.callsOf("sendConversationCommandV4").map((c) => c.params.envelope as Envelope);
    expect(sent.map((e) => e.baseRevision)).toEqual([0, 12]);
    expect(new Set(sent.map((e) => e.commandId)).size).toBe(2);
  });
});

describe("V4 input: the compact command (ZCode 3.15.1 goal-compact.ts)", () => {
  const compactAck = (fields: Record<string, unknown>) => (envelope: Envelope) => ({
    commandId: envelope.commandId,
    revisionAtDecision: 3,
    ...fields,
  });

  it("an accepted ack without a result is taken, as queued under queue_<commandId> (not a protocol error)", async () => {
    const fake = host(compactAck({ status: "accepted" }));
    const sent = await new V4Input(fake, "zcode-task-v3", [3]).compact(REF, "cmd-1");
    expect(sent).toEqual({ inputId: "cmd-1", delivery: "queue", queueItemId: "queue_cmd-1" });
    const envelope = fake.callsOf("sendConversationCommandV4")[0]!.params.envelope as Envelope & { payload: unknown };
    expect(envelope).toMatchObject({ commandId: "cmd-1", type: "compact", payload: {} });
  });

  it("compactOperationLock is a readable SESSION_BUSY; restoreWarning a readable refusal naming the warning", async () => {
    const locked = host(
      compactAck({ status: "failed", reasonCode: "compactOperationLock", message: "Compact is already running or queued" }),
    );
    await expect(new V4Input(locked, "zcode-task-v3", [3]).compact(REF, undefined)).rejects.toMatchObject({
      code: "SESSION_BUSY",
      message: expect.stringContaining("already compacting"),
    });
    const warned = host(compactAck({ status: "failed", reasonCode: "restoreWarning", message: "history could not be restored" }));
    await expect(new V4Input(warned, "zcode-task-v3", [3]).compact(REF, undefined)).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
      message: expect.stringContaining("history could not be restored"),
    });
  });
});
