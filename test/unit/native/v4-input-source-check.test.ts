/**
 * The V4 input module against what ZCode's source accepts and answers (zcode-v4-source-check.md):
 * the clientHello without `clientKind`, ordinary input without `requestedDelivery`, uploads inside
 * the strict attachment schemas (empty files, bare MIME types, safe names), attachments whose
 * content ZCode would not pass to the model, every answer of the lost-ack question, no question
 * once the connection is gone, the `proto.sessionNotFound` ack, and `setAutoDrain`.
 */
import { describe, expect, it } from "vitest";
import { createNativeApi } from "../../../src/native/index.js";
import { bareMime, safeFileName, V4Input, V4_TEXT_ATTACHMENT_READ_BYTES } from "../../../src/native/shared/v4-input.js";
import { V4_COMMAND_TYPES } from "../../../src/manifest/release-lines.js";
import { BridgeError, isOutcomeUnknown } from "../../../src/util/errors.js";
import { FakeHost } from "../../support/fake-host.js";

const REF = { workspacePath: "/w", sessionId: "s1" };
const TEXT = { content: "hello", attachments: [] };
type Envelope = { commandId: string; type: string; baseRevision?: number; payload: Record<string, unknown> };

function host(answer: (envelope: Envelope) => unknown): FakeHost {
  const fake = new FakeHost({ calls: "null", incarnation: 1 });
  fake.handlers.set("agent.helloConversationV4", () => ({ kind: "hello", protocolVersion: 3 }));
  fake.handlers.set("agent.sendConversationCommandV4", (params) => answer(params.envelope as Envelope));
  fake.handlers.set("agent.attachmentBeginV4", (params) => ({ uploadId: params.uploadId, state: "staging", nextChunkIndex: 0 }));
  fake.handlers.set("agent.attachmentChunkV4", (params) => ({
    uploadId: params.uploadId,
    nextChunkIndex: (params.chunkIndex as number) + 1,
  }));
  fake.handlers.set("agent.attachmentCommitV4", (params) => ({ ref: `zcode-artifact://${String(params.uploadId)}` }));
  return fake;
}

const accepted = (envelope: Envelope) => ({
  commandId: envelope.commandId,
  status: "accepted",
  revisionAtDecision: 7,
  result: { type: "inputAccepted", delivery: "startNow", inputId: envelope.commandId },
});

const envelopes = (fake: FakeHost): Envelope[] => fake.callsOf("sendConversationCommandV4").map((c) => c.params.envelope as Envelope);

/** a host that loses the ack of every command with `lost`, and answers the question with `answer` */
function lostAck(lost: BridgeError, answer: (envelope: Envelope) => unknown): { fake: FakeHost; sent: () => Envelope } {
  let sent: Envelope | undefined;
  const fake = host((envelope) => {
    sent = envelope;
    throw lost;
  });
  fake.handlers.set("agent.queryConversationCommandsV4", () => answer(sent!));
  return { fake, sent: () => sent! };
}

describe("V4 input: the handshake and the prompt", () => {
  it("sends a clientHello without clientKind (the strict schema of 3.11.2 / 3.12.3 may not know it)", async () => {
    const fake = host(accepted);
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined);
    expect(fake.callsOf("initializeConversationV4")[0]!.params).toEqual({
      kind: "clientHello",
      protocolVersion: 3,
      clientId: expect.stringMatching(/^zcode-acp-/),
      appVersion: expect.any(String),
    });
  });

  it("sends an ordinary prompt without requestedDelivery (ZCode routes it; startNow would preempt its running work)", async () => {
    const fake = host(accepted);
    fake.allowed.add("agent.sendConversationCommandV4");
    const sent = await createNativeApi("zcode-task-v1", fake).sendInput({ ...REF, ...TEXT });
    const [envelope] = envelopes(fake);
    expect(envelope!.type).toBe("sendText");
    expect(envelope!.payload).toEqual({ text: "hello" });
    expect(sent).toEqual({ inputId: envelope!.commandId, delivery: "startNow" });
  });
});

describe("V4 input: attachments inside ZCode's upload schemas", () => {
  it("uploads an empty file as 0 bytes in 0 chunks, then commits (no chunk call)", async () => {
    const fake = host(accepted);
    const input = { content: "see", attachments: [{ kind: "file", filename: "empty.txt", mimeType: "text/plain", textContent: "" }] };
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, input, undefined);
    expect(fake.callsOf("attachmentBeginV4")[0]!.params).toMatchObject({ totalBytes: 0, totalChunks: 0 });
    expect(fake.callsOf("attachmentChunkV4")).toEqual([]);
    expect(fake.callsOf("attachmentCommitV4")).toHaveLength(1);
    expect(envelopes(fake)[0]!.payload.attachments).toEqual([
      { ref: expect.stringMatching(/^zcode-artifact:\/\//), fileName: "empty.txt", mime: "text/plain", bytes: 0 },
    ]);
  });

  it("sends a bare lowercase type/subtype: parameters stripped, anything else application/octet-stream", async () => {
    expect(bareMime("Text/Plain; charset=utf-8")).toBe("text/plain");
    expect(bareMime("application/vnd.api+json")).toBe("application/vnd.api+json");
    for (const odd of ["text plain", "text/pl ain", "text/", "/plain", "", "a/b/c", "text/plain\r\nx", 42, undefined]) {
      expect(bareMime(odd)).toBe("application/octet-stream");
    }
    const fake = host(accepted);
    const input = {
      content: "",
      attachments: [{ kind: "file", filename: "a.txt", mimeType: "text/plain; charset=utf-8", textContent: "hi" }],
    };
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, input, undefined);
    expect(fake.callsOf("attachmentBeginV4")[0]!.params.mime).toBe("text/plain");
    expect((envelopes(fake)[0]!.payload.attachments as Array<{ mime: string }>)[0]!.mime).toBe("text/plain");
  });

  it("makes file names safe: no control characters, at most 255 characters keeping the extension, never empty", async () => {
    expect(safeFileName("a\r\nb\u0000c\u007f.txt")).toBe("a__b_c_.txt");
    expect(safeFileName("dir/sub\\x.md")).toBe("dir_sub_x.md");
    expect(safeFileName("")).toBe("attachment");
    expect(safeFileName("   ")).toBe("attachment");
    expect(safeFileName(undefined)).toBe("attachment");
    const long = safeFileName(`${"n".repeat(300)}.txt`);
    expect(long).toHaveLength(255);
    expect(long.endsWith(".txt")).toBe(true);
    // cut by characters: an emoji (two UTF-16 units) is kept whole or dropped whole
    const emoji = safeFileName(`${"😀".repeat(200)}.md`);
    expect(emoji.length).toBeLessThanOrEqual(255);
    expect(emoji.endsWith("😀.md")).toBe(true);
    const noExtension = safeFileName("x".repeat(400));
    expect(noExtension).toBe("x".repeat(255));
    const fake = host(accepted);
    const input = { content: "", attachments: [{ kind: "file", filename: `bad\nname${"y".repeat(300)}.log`, textContent: "x" }] };
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, input, undefined);
    const fileName = fake.callsOf("attachmentBeginV4")[0]!.params.fileName as string;
    expect(fileName).toMatch(/^bad_namey+\.log$/);
    expect(fileName).toHaveLength(255);
  });

  it("puts a 100 KiB text attachment, whole, into the prompt text instead of an upload ZCode would read only 64 KiB of", async () => {
    const big = `${"line of text\n".repeat(Math.ceil((100 * 1024) / 13))}THE END`;
    expect(Buffer.byteLength(big)).toBeGreaterThan(V4_TEXT_ATTACHMENT_READ_BYTES);
    const fake = host(accepted);
    const input = {
      content: "summarise",
      attachments: [{ kind: "file", filename: "log.txt", mimeType: "text/plain", textContent: big }],
    };
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, input, undefined);
    expect(fake.callsOf("attachmentBeginV4")).toEqual([]);
    const payload = envelopes(fake)[0]!.payload;
    expect(payload.attachments).toBeUndefined();
    const text = payload.text as string;
    expect(text.startsWith("summarise\n\n[zcode-acp: the attached file log.txt (text/plain,")).toBe(true);
    expect(text).toContain(big);
    expect(text.endsWith("[zcode-acp: end of log.txt]")).toBe(true);
  });

  it("refuses, before anything is sent, a 100 KiB binary that is not an image, video or PDF (the model would get its name only)", async () => {
    const fake = host(accepted);
    const blob = Buffer.alloc(100 * 1024, 7).toString("base64");
    const input = { content: "look", attachments: [{ kind: "file", filename: "a.zip", mimeType: "application/zip", dataBase64: blob }] };
    const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, input, undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INVALID_PARAMS", message: expect.stringMatching(/a\.zip.*name only/) });
    expect(fake.callsOf("attachmentBeginV4")).toEqual([]);
    expect(fake.callsOf("sendConversationCommandV4")).toEqual([]);
    // an image of the same size stays an artifact and is uploaded
    const image = { content: "look", attachments: [{ kind: "image", filename: "a.png", mimeType: "image/png", dataBase64: blob }] };
    await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, image, undefined);
    expect(fake.callsOf("attachmentBeginV4")[0]!.params).toMatchObject({ mime: "image/png", totalBytes: 100 * 1024, totalChunks: 1 });
  });
});

describe("V4 input: the answers to the lost-ack question", () => {
  const timeout = () => new BridgeError("HOST_TIMEOUT", "the host did not answer agent.sendConversationCommandV4 within 60000 ms");

  it("takes an `accepted` without result (rebuilt from ZCode's transcript) as taken: inputId = commandId, recovered", async () => {
    const { fake, sent } = lostAck(timeout(), (envelope) => ({
      results: [{ key: {}, result: { commandId: envelope.commandId, status: "accepted", revisionAtDecision: 0 } }],
    }));
    const result = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined);
    expect(result).toEqual({ inputId: sent().commandId, delivery: "startNow", recovered: true });
    expect(fake.callsOf("sendConversationCommandV4")).toHaveLength(1);
  });

  it("still refuses an `accepted` without result that is the command's own ack", async () => {
    const fake = host((envelope) => ({ commandId: envelope.commandId, status: "accepted", revisionAtDecision: 3 }));
    await expect(new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined)).rejects.toMatchObject({
      code: "NATIVE_PROTOCOL_ERROR",
    });
  });

  it("keeps the outcome unknown when ZCode answers `failed` / fault.command.queryUnavailable", async () => {
    const { fake } = lostAck(timeout(), (envelope) => ({
      results: [
        {
          key: {},
          result: { commandId: envelope.commandId, status: "failed", reasonCode: "fault.command.queryUnavailable", revisionAtDecision: 0 },
        },
      ],
    }));
    const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "HOST_TIMEOUT", message: expect.stringMatching(/could not say whether it received it/) });
    expect(isOutcomeUnknown(error)).toBe(true);
  });

  it("keeps the outcome unknown when the question itself fails (fault.command.queryForeignWorkspace is an RPC error)", async () => {
    const { fake } = lostAck(timeout(), () => {
      throw new BridgeError("HOST_CALL_FAILED", "fault.command.queryForeignWorkspace");
    });
    const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "HOST_TIMEOUT", message: expect.stringMatching(/could not say/) });
    expect(isOutcomeUnknown(error)).toBe(true);
  });

  it("keeps the outcome unknown on `unknown` and on an answer without the command", async () => {
    for (const answer of [{ results: [{ key: {}, result: "unknown" }] }, { results: [] }, null]) {
      const { fake } = lostAck(timeout(), () => answer);
      const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined).catch((e: unknown) => e);
      expect(isOutcomeUnknown(error)).toBe(true);
    }
  });

  it("reads `failed` / fault.command.inputDiscardedOnRestart as a refusal (the input did not run)", async () => {
    const { fake } = lostAck(timeout(), (envelope) => ({
      results: [
        {
          key: {},
          result: {
            commandId: envelope.commandId,
            status: "failed",
            reasonCode: "fault.command.inputDiscardedOnRestart",
            revisionAtDecision: 0,
            result: { type: "inputDisposition", delivery: "queue" },
          },
        },
      ],
    }));
    const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "HOST_CALL_FAILED", message: expect.stringMatching(/inputDiscardedOnRestart/) });
    expect(isOutcomeUnknown(error)).toBe(false);
  });

  it("does not ask once the channel closed or the host exited: the outcome is unknown at once", async () => {
    for (const lost of [
      new BridgeError("CHANNEL_CLOSED", "the internal channel was closed"),
      new BridgeError("HOST_EXITED", "The ZCode host exited."),
    ]) {
      const { fake } = lostAck(lost, () => ({ results: [] }));
      const error = await new V4Input(fake, "zcode-task-v1", [3]).sendText(REF, TEXT, undefined).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: lost.code, message: expect.stringMatching(/It was not sent again/) });
      expect(fake.callsOf("queryConversationCommandsV4")).toEqual([]);
      expect(fake.callsOf("sendConversationCommandV4")).toHaveLength(1);
    }
  });
});

describe("V4 input: sessions ZCode does not hold, and the queue", () => {
  it("surfaces a `rejected` / proto.sessionNotFound ack as SESSION_NOT_FOUND, as the legacy -32004 is", async () => {
    const v4 = host((envelope) => ({
      commandId: envelope.commandId,
      status: "rejected",
      reasonCode: "proto.sessionNotFound",
      revisionAtDecision: 0,
    }));
    v4.allowed.add("agent.sendConversationCommandV4");
    const viaV4 = await createNativeApi("zcode-task-v1", v4)
      .sendInput({ ...REF, ...TEXT })
      .catch((e: unknown) => e);
    expect(viaV4).toMatchObject({ code: "SESSION_NOT_FOUND", message: expect.stringMatching(/does not hold the session s1/) });

    const legacy = new FakeHost({ calls: "null", incarnation: 1 });
    legacy.handlers.set("agent.sendPrompt", () => {
      throw new BridgeError("HOST_CALL_FAILED", "Session unavailable", { details: { code: -32004 } });
    });
    const viaLegacy = await createNativeApi("zcode-task-v1", legacy)
      .sendInput({ ...REF, ...TEXT })
      .catch((e: unknown) => e);
    expect(viaLegacy).toMatchObject({ code: "SESSION_NOT_FOUND" });
  });

  it("does not take a prompt refusal that only mentions 'not found' for a missing session", async () => {
    const legacy = new FakeHost({ calls: "null", incarnation: 1 });
    legacy.handlers.set("agent.sendPrompt", () => {
      throw new BridgeError("HOST_CALL_FAILED", "model not found");
    });
    await expect(createNativeApi("zcode-task-v1", legacy).sendInput({ ...REF, ...TEXT })).rejects.toMatchObject({
      code: "HOST_CALL_FAILED",
    });
  });

  it("retries a stale setAutoDrain with a new command id at the revision ZCode decided at; `noop` is success", async () => {
    const fake = host((envelope) =>
      envelope.baseRevision === 12
        ? { commandId: envelope.commandId, status: "noop", revisionAtDecision: 12 }
        : { commandId: envelope.commandId, status: "stale", reasonCode: "guard.revisionChanged", revisionAtDecision: 12 },
    );
    await new V4Input(fake, "zcode-task-v1", [3]).releaseHeldQueue(REF);
    const sent = envelopes(fake);
    expect(sent.map((e) => [e.type, e.payload, e.baseRevision])).toEqual([
      ["setAutoDrain", { autoDrain: true }, 0],
      ["setAutoDrain", { autoDrain: true }, 12],
    ]);
    expect(new Set(sent.map((e) => e.commandId)).size).toBe(2);
  });

  it("gives up after a bounded number of stale answers", async () => {
    const fake = host((envelope) => ({ commandId: envelope.commandId, status: "stale", revisionAtDecision: 99 }));
    await expect(new V4Input(fake, "zcode-task-v1", [3]).releaseHeldQueue(REF)).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    expect(fake.callsOf("sendConversationCommandV4")).toHaveLength(4);
  });

  it("takes a deleteQueueItem `noop` (queue.itemMissing) as success that says the item was no longer queued", async () => {
    const fake = host((envelope) => ({
      commandId: envelope.commandId,
      status: "noop",
      reasonCode: "queue.itemMissing",
      revisionAtDecision: 4,
    }));
    await expect(new V4Input(fake, "zcode-task-v1", [3]).deleteQueued(REF, "queue_x")).resolves.toBe(false);
  });

  it("sends only command types the bootstrap lets through (V4_COMMAND_TYPES)", async () => {
    const fake = host((envelope) =>
      envelope.type === "sendText" ? accepted(envelope) : { commandId: envelope.commandId, status: "accepted", revisionAtDecision: 1 },
    );
    const input = new V4Input(fake, "zcode-task-v1", [3]);
    await input.sendText(REF, TEXT, undefined);
    await input.stop(REF);
    await input.deleteQueued(REF, "queue_x");
    await input.releaseHeldQueue(REF);
    const types = envelopes(fake).map((e) => e.type);
    expect(types).toEqual(["sendText", "stop", "deleteQueueItem", "setAutoDrain"]);
    for (const type of types) expect(V4_COMMAND_TYPES).toContain(type);
  });
});
