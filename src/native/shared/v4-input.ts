/**
 * Prompt input through ZCode's V4 conversation commands (docs/zcode-host.md §15, adr/0022), for
 * a line whose manifest allows them: the handshake (hello, then one clientHello per host
 * incarnation with this bridge process's one client id), `sendText` in a command envelope with
 * its ack, image and file uploads through the `attachment*V4` calls, `stop`, and the removal of a
 * queued input. Reading stays on the legacy events: nothing here subscribes.
 *
 * Fail closed: a hello of a wire version the line does not know, an ack that is not `accepted`
 * for a fresh command id, or an ack of another shape is an error. An input whose outcome is
 * unknown (the ack was lost) is never sent again: ZCode is asked (`queryConversationCommandsV4`)
 * and the prompt fails when it cannot say.
 */
import { createHash, randomUUID } from "node:crypto";
import type { HostClient } from "../../host/types.js";
import type { OperationTimeout } from "../../host/timeouts.js";
import { BridgeError, describeError, isBridgeError } from "../../util/errors.js";
import { uuidV7 } from "../../util/uuid-v7.js";
import { PACKAGE_VERSION } from "../../version.js";
import type { InputDelivery, PromptInput, SentInput, SessionRef } from "../native-api.js";

/** ZCode's upload limits (docs/zcode-host.md §15.5): bytes per file, bytes per chunk, chunks per file */
export const V4_ATTACHMENT_MAX_BYTES = 20 * 1024 * 1024;
export const V4_ATTACHMENT_CHUNK_BYTES = 512 * 1024;
export const V4_ATTACHMENT_MAX_CHUNKS = 64;
/** a compare-and-set command is tried this often when ZCode answers `stale` (each time with a new command id) */
const CAS_ATTEMPTS = 4;
/** how many sessions' last known revisions are kept */
const REVISIONS_KEPT = 256;

const ACK_STATUSES = new Set(["accepted", "rejected", "stale", "duplicate", "noop", "failed"]);
const DELIVERIES = new Set<string>(["startNow", "queue"]);
/** errors after which the host may or may not have taken the command */
const OUTCOME_UNKNOWN = new Set(["HOST_TIMEOUT", "CHANNEL_CLOSED", "CHANNEL_OVERFLOW"]);

export interface CommandAck {
  commandId: string;
  status: string;
  reasonCode?: string;
  message?: string;
  revisionAtDecision?: number;
  result?: Record<string, unknown>;
}

type Attachment = { kind?: unknown; filename?: unknown; mimeType?: unknown; dataBase64?: unknown; textContent?: unknown };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** the incarnation of a handshake still under way (the host may be launching: its number is not known yet) */
const HANDSHAKE_RUNNING = -1;
/** the clientId of this bridge process: one for every connection, envelope and incarnation */
const CLIENT_ID = `zcode-acp-${randomUUID()}`;

export class V4Input {
  /** the host incarnation whose connection did the handshake, and the handshake itself */
  private handshake: { incarnation: number; done: Promise<void> } | undefined;
  /** per session: the last revision ZCode decided a command at (the base of a compare-and-set command) */
  private readonly revisions = new Map<string, number>();

  constructor(
    private readonly host: HostClient,
    private readonly lineId: string,
    private readonly wireVersions: readonly number[],
  ) {}

  get clientId(): string {
    return CLIENT_ID;
  }

  /** Send one prompt as `sendText`; resolves with how ZCode admitted it. */
  async sendText(ref: SessionRef, input: PromptInput, delivery: InputDelivery | undefined): Promise<SentInput> {
    await this.ready();
    const attachments = await this.upload(ref, input.attachments);
    const payload: Record<string, unknown> = { text: input.content };
    if (delivery !== undefined) payload.requestedDelivery = delivery;
    if (attachments.length > 0) payload.attachments = attachments;
    const commandId = input.inputId ?? uuidV7();
    const ack = await this.command(ref, commandId, "sendText", payload, "sendPrompt");
    if (ack.status !== "accepted") throw refused(ack, "the prompt");
    const result = ack.result;
    if (!isRecord(result) || result.type !== "inputAccepted" || result.inputId !== commandId) {
      throw new BridgeError(
        "NATIVE_PROTOCOL_ERROR",
        "ZCode accepted the prompt but did not say it took it as input of this command. The prompt was not sent again.",
        { details: { commandId, resultType: isRecord(result) ? result.type : undefined } },
      );
    }
    const admitted = DELIVERIES.has(result.delivery as string) ? (result.delivery as SentInput["delivery"]) : undefined;
    if (!admitted)
      throw new BridgeError(
        "NATIVE_PROTOCOL_ERROR",
        `ZCode admitted the prompt with an unknown delivery ${JSON.stringify(result.delivery)}.`,
        {
          details: { commandId },
        },
      );
    const sent: SentInput = { inputId: commandId, delivery: admitted };
    if (admitted === "queue") sent.queueItemId = typeof result.queueItemId === "string" ? result.queueItemId : `queue_${commandId}`;
    return sent;
  }

  /** Stop the running turn of the session (`stop`; `noop` = nothing left to stop). */
  async stop(ref: SessionRef): Promise<void> {
    await this.ready();
    const ack = await this.command(ref, uuidV7(), "stop", {}, "cancel");
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the stop");
  }

  /** Let a held queue run again (`setAutoDrain {autoDrain: true}`, compare-and-set on the session's revision). */
  async releaseHeldQueue(ref: SessionRef): Promise<void> {
    await this.ready();
    let ack: CommandAck | undefined;
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const base = this.revisions.get(key(ref)) ?? 0;
      ack = await this.command(ref, uuidV7(), "setAutoDrain", { autoDrain: true }, "cancel", base);
      if (ack.status !== "stale") break;
    }
    if (ack && ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "releasing ZCode's held queue");
  }

  /** Remove a queued input before it runs (`deleteQueueItem`, compare-and-set on the session's revision). */
  async deleteQueued(ref: SessionRef, queueItemId: string): Promise<boolean> {
    await this.ready();
    let ack: CommandAck | undefined;
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const base = this.revisions.get(key(ref)) ?? 0;
      ack = await this.command(ref, uuidV7(), "deleteQueueItem", { queueItemId }, "deleteQueuedInput", base);
      if (ack.status !== "stale") break;
    }
    // noop: the item left the queue already (it ran or was removed)
    if (ack && ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the removal of a queued prompt");
    return ack?.status === "accepted";
  }

  // ---- handshake ----

  /**
   * hello + clientHello once per host incarnation (a relaunched host is a new connection). Commands
   * issued while it runs share it: one connection has one handshake.
   */
  private ready(): Promise<void> {
    const current = this.handshake;
    if (
      current &&
      (current.incarnation === HANDSHAKE_RUNNING || (current.incarnation === this.host.incarnation && current.incarnation > 0))
    )
      return current.done;
    const done = this.shake();
    const entry = { incarnation: HANDSHAKE_RUNNING, done };
    this.handshake = entry;
    done.then(
      () => {
        entry.incarnation = this.host.incarnation;
      },
      () => {
        if (this.handshake === entry) this.handshake = undefined;
      },
    );
    return done;
  }

  private async shake(): Promise<void> {
    const hello = await this.host.call<unknown>("agent", "helloConversationV4", {}, { timeout: "v4Handshake" });
    if (!isRecord(hello) || hello.kind !== "hello") {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode answered the V4 conversation hello with something that is not a hello.");
    }
    const version = hello.protocolVersion;
    if (typeof version !== "number" || !this.wireVersions.includes(version)) {
      throw new BridgeError(
        "UNSUPPORTED_ZCODE",
        `ZCode speaks V4 conversation protocol ${JSON.stringify(version)}, which zcode-acp's ${this.lineId} line does not know ` +
          `(it knows ${this.wireVersions.join(", ")}). Nothing was sent. Update zcode-acp, or use a ZCode release it supports.`,
        { details: { protocolVersion: version, known: [...this.wireVersions] } },
      );
    }
    await this.host.call(
      "agent",
      "initializeConversationV4",
      { kind: "clientHello", protocolVersion: version, clientId: CLIENT_ID, clientKind: "desktop", appVersion: PACKAGE_VERSION },
      { timeout: "v4Handshake" },
    );
  }

  // ---- commands ----

  /** Send one envelope and return its ack; a lost ack is asked for, never resent. */
  private async command(
    ref: SessionRef,
    commandId: string,
    type: string,
    payload: Record<string, unknown>,
    timeout: OperationTimeout,
    baseRevision?: number,
  ): Promise<CommandAck> {
    const envelope: Record<string, unknown> = {
      commandId,
      clientId: CLIENT_ID,
      sessionId: ref.sessionId,
      type,
      payload,
      issuedAt: Date.now(),
    };
    if (baseRevision !== undefined) envelope.baseRevision = baseRevision;
    let raw: unknown;
    try {
      raw = await this.host.call("agent", "sendConversationCommandV4", { workspacePath: ref.workspacePath, envelope }, { timeout });
    } catch (error) {
      if (!isBridgeError(error) || !OUTCOME_UNKNOWN.has(error.code)) throw error;
      raw = await this.askOutcome(ref, commandId, type, error);
    }
    const ack = parseAck(raw, commandId, type);
    if (ack.revisionAtDecision !== undefined) this.noteRevision(ref, ack.revisionAtDecision);
    return ack;
  }

  /** The ack of a command whose answer was lost, from ZCode's command table; an error when ZCode cannot say. */
  private async askOutcome(ref: SessionRef, commandId: string, type: string, lost: BridgeError): Promise<unknown> {
    // the outcome stays unknown: the lost call's code says so, so the session stops a turn ZCode may run
    const unknown = (cause: unknown): BridgeError =>
      new BridgeError(
        lost.code,
        `ZCode did not confirm ${type === "sendText" ? "the prompt" : `the ${type} command`} (${lost.message}), and could not say ` +
          "whether it received it. It was not sent again, so it is not run twice; check the session in ZCode, then retry if needed.",
        { cause, details: { commandId, type } },
      );
    let answer: unknown;
    try {
      answer = await this.host.call(
        "agent",
        "queryConversationCommandsV4",
        { workspacePath: ref.workspacePath, commands: [{ sessionId: ref.sessionId, commandId }] },
        { timeout: "queryCommands" },
      );
    } catch (error) {
      throw unknown(error);
    }
    const results = isRecord(answer) && Array.isArray(answer.results) ? answer.results : [];
    const entry = results.find((item): item is Record<string, unknown> => isRecord(item) && isRecord(item.result));
    if (!entry) throw unknown(lost);
    return entry.result;
  }

  private noteRevision(ref: SessionRef, revision: number): void {
    const k = key(ref);
    this.revisions.delete(k);
    this.revisions.set(k, revision);
    if (this.revisions.size > REVISIONS_KEPT) {
      const oldest = this.revisions.keys().next().value;
      if (oldest !== undefined) this.revisions.delete(oldest);
    }
  }

  // ---- attachments ----

  /** Upload the attachments that carry bytes; a local file stays a path mention in the prompt text. */
  private async upload(ref: SessionRef, attachments: readonly object[]): Promise<Array<Record<string, unknown>>> {
    const refs: Array<Record<string, unknown>> = [];
    for (const item of attachments as readonly Attachment[]) {
      const bytes =
        typeof item.dataBase64 === "string"
          ? Buffer.from(item.dataBase64, "base64")
          : typeof item.textContent === "string"
            ? Buffer.from(item.textContent, "utf8")
            : undefined;
      if (!bytes) continue;
      const fileName = typeof item.filename === "string" && item.filename !== "" ? item.filename : "attachment";
      const mime = typeof item.mimeType === "string" && item.mimeType !== "" ? item.mimeType : "application/octet-stream";
      refs.push(await this.uploadOne(ref, fileName, mime, bytes));
    }
    return refs;
  }

  private async uploadOne(ref: SessionRef, fileName: string, mime: string, bytes: Buffer): Promise<Record<string, unknown>> {
    const chunks = Math.max(1, Math.ceil(bytes.length / V4_ATTACHMENT_CHUNK_BYTES));
    if (bytes.length > V4_ATTACHMENT_MAX_BYTES || chunks > V4_ATTACHMENT_MAX_CHUNKS) {
      throw new BridgeError(
        "INVALID_PARAMS",
        `The attachment ${fileName} has ${bytes.length} bytes; ZCode takes at most ${V4_ATTACHMENT_MAX_BYTES} bytes per file. Send a smaller file.`,
        { details: { bytes: bytes.length, limitBytes: V4_ATTACHMENT_MAX_BYTES } },
      );
    }
    const target = { workspacePath: ref.workspacePath, sessionId: ref.sessionId };
    const uploadId = `zacp-${randomUUID()}`;
    const begun = await this.host.call<unknown>(
      "agent",
      "attachmentBeginV4",
      {
        ...target,
        uploadId,
        fileName,
        mime,
        totalBytes: bytes.length,
        totalChunks: chunks,
        checksum: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
      },
      { timeout: "uploadAttachment" },
    );
    const done = (committed: unknown): Record<string, unknown> => {
      const attachmentRef = isRecord(committed) ? committed.ref : undefined;
      if (attachmentRef === undefined || attachmentRef === null)
        throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode stored the attachment ${fileName} but returned no reference to it.`);
      return { ref: attachmentRef, fileName, mime, bytes: bytes.length };
    };
    if (isRecord(begun) && begun.state === "committed") return done(begun);
    try {
      let next = isRecord(begun) && Number.isSafeInteger(begun.nextChunkIndex) ? (begun.nextChunkIndex as number) : 0;
      // each answer names the next chunk it wants; at most `chunks` steps, whatever it says
      for (let step = 0; step < chunks && next < chunks; step++) {
        const slice = bytes.subarray(next * V4_ATTACHMENT_CHUNK_BYTES, (next + 1) * V4_ATTACHMENT_CHUNK_BYTES);
        const answer = await this.host.call<unknown>(
          "agent",
          "attachmentChunkV4",
          { ...target, uploadId, chunkIndex: next, dataBase64: slice.toString("base64") },
          { timeout: "uploadAttachment" },
        );
        const wanted = isRecord(answer) && Number.isSafeInteger(answer.nextChunkIndex) ? (answer.nextChunkIndex as number) : next + 1;
        if (wanted <= next)
          throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode did not take chunk ${next} of the attachment ${fileName}.`);
        next = wanted;
      }
      return done(await this.host.call<unknown>("agent", "attachmentCommitV4", { ...target, uploadId }, { timeout: "uploadAttachment" }));
    } catch (error) {
      await this.host
        .call("agent", "attachmentAbortV4", { ...target, uploadId }, { timeout: "uploadAttachment" })
        .catch((abortError: unknown) => describeError(abortError));
      throw error;
    }
  }
}

function key(ref: SessionRef): string {
  return `${ref.workspacePath}\u0000${ref.sessionId}`;
}

/** The ack of `commandId`, checked for shape (anything else is a protocol error). */
function parseAck(raw: unknown, commandId: string, type: string): CommandAck {
  if (!isRecord(raw) || typeof raw.status !== "string" || !ACK_STATUSES.has(raw.status)) {
    throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode answered the ${type} command with something that is not a command ack.`, {
      details: { commandId, status: isRecord(raw) ? raw.status : undefined },
    });
  }
  if (raw.commandId !== undefined && raw.commandId !== commandId) {
    throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode answered the ${type} command with the ack of another command.`, {
      details: { commandId },
    });
  }
  const ack: CommandAck = { commandId, status: raw.status };
  if (typeof raw.reasonCode === "string") ack.reasonCode = raw.reasonCode;
  if (typeof raw.message === "string") ack.message = raw.message.slice(0, 500);
  if (typeof raw.revisionAtDecision === "number" && Number.isSafeInteger(raw.revisionAtDecision))
    ack.revisionAtDecision = raw.revisionAtDecision;
  if (isRecord(raw.result)) ack.result = raw.result;
  return ack;
}

/** A readable error for an ack that is not the success this command needs. */
function refused(ack: CommandAck, what: string): BridgeError {
  const reason = ack.reasonCode ? ` (${ack.reasonCode}${ack.message ? `: ${ack.message}` : ""})` : ack.message ? ` (${ack.message})` : "";
  const details = { commandId: ack.commandId, status: ack.status, reasonCode: ack.reasonCode };
  switch (ack.status) {
    case "duplicate":
      return new BridgeError(
        "HOST_CALL_FAILED",
        `ZCode answered ${what} as a duplicate of a command it already had${reason}. zcode-acp never sends a command twice, ` +
          "so it cannot tell what ZCode ran; it was not sent again. Check the session in ZCode, then retry if needed.",
        { details },
      );
    case "stale":
      return new BridgeError(
        "HOST_CALL_FAILED",
        `ZCode refused ${what} because the session changed meanwhile${reason}. Nothing was run; send it again.`,
        { details },
      );
    default:
      return new BridgeError("HOST_CALL_FAILED", `ZCode did not accept ${what}: ${ack.status}${reason}.`, { details });
  }
}
