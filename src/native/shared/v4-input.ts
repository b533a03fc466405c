/**
 * Prompt input through ZCode's V4 conversation commands (docs/zcode-host.md §15, adr/0022), for
 * a line whose manifest allows them: the handshake (hello, then one clientHello per host
 * incarnation with this bridge process's one client id), `sendText` in a command envelope with
 * its ack, image and file uploads through the `attachment*V4` calls, `stop`, and the removal of a
 * queued input, and the answer to a pending interaction (`resolveInteraction`) where the V4
 * read path is used (src/native/v4-read/). Nothing here subscribes.
 *
 * Fail closed: a hello of a wire version the line does not know, an ack that is not `accepted`
 * for a fresh command id, or an ack of another shape is an error. An input whose outcome is
 * unknown (the ack was lost: `isOutcomeUnknown`) is never sent again: ZCode is asked
 * (`queryConversationCommandsV4`) while the connection that carried it lives, and the prompt fails
 * with the lost call's code when it cannot say. What ZCode's source accepts and answers: the
 * source check of the V4 messages (zcode-v4-source-check.md: §2.3 clientHello, §2.4 sendText,
 * §2.6 the query, §2.7 attachments).
 */
import { createHash, randomUUID } from "node:crypto";
import type { HostClient } from "../../host/types.js";
import type { OperationTimeout } from "../../host/timeouts.js";
import { BridgeError, describeError, isOutcomeUnknown } from "../../util/errors.js";
import { uuidV7 } from "../../util/uuid-v7.js";
import { PACKAGE_VERSION } from "../../version.js";
import { NATIVE_FRAME_LIMIT_BYTES, type InputDelivery, type PromptInput, type SentInput, type SessionRef } from "../native-api.js";

/** ZCode's upload limits (docs/zcode-host.md §15.5): bytes per file, bytes per chunk, chunks per file */
export const V4_ATTACHMENT_MAX_BYTES = 20 * 1024 * 1024;
export const V4_ATTACHMENT_CHUNK_BYTES = 512 * 1024;
export const V4_ATTACHMENT_MAX_CHUNKS = 64;
/** a compare-and-set command is tried this often when ZCode answers `stale` (each time with a new command id) */
const CAS_ATTEMPTS = 4;
/** how many answered interaction ids are remembered */
const ANSWERS_KEPT = 4096;
/** how many sessions' last known revisions are kept */
const REVISIONS_KEPT = 256;

const ACK_STATUSES = new Set(["accepted", "rejected", "stale", "duplicate", "noop", "failed"]);
const DELIVERIES = new Set<string>(["startNow", "queue"]);
/**
 * a lost answer after which ZCode is not asked: the connection that carried the command is gone,
 * and the next host incarnation is a new connection whose command table cannot know it
 */
const CONNECTION_GONE = new Set(["CHANNEL_CLOSED", "HOST_EXITED"]);
/** the query's own failure: ZCode could not look the command up, so its outcome stays unknown */
const QUERY_UNAVAILABLE = "fault.command.queryUnavailable";
/** ZCode's refusal of a `compact` while one runs or is queued ("Compact is already running or queued") */
const COMPACT_LOCK = "compactOperationLock";
/** ZCode's refusal of a `compact` in a session it could not fully restore */
const RESTORE_WARNING = "restoreWarning";
/** the ack of a command for a session ZCode's agent does not hold (not loaded, or gone) */
const SESSION_NOT_HELD = "proto.sessionNotFound";
/**
 * ZCode reads an attachment whose MIME type is not image/*, video/* or application/pdf back as
 * text, and only up to this many bytes: above it the turn gets the name, type and size only
 * (zcode-v4-source-check.md §2.7, `cli/commands/attachment-refs.ts`)
 */
export const V4_TEXT_ATTACHMENT_READ_BYTES = 64 * 1024;
/** the longest attachment file name ZCode takes (UTF-16 units) */
const FILE_NAME_MAX = 255;
/** what the prompt text may take of one channel frame, beside the envelope (ids, paths) */
const PROMPT_TEXT_BUDGET_BYTES = NATIVE_FRAME_LIMIT_BYTES - 64 * 1024;

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
  /** the interactions this bridge answered (`resolveInteraction` goes out once per interaction) */
  private readonly answered = new Set<string>();
  /** per session: the last revision ZCode decided a command at (the base of a compare-and-set command) */
  private readonly revisions = new Map<string, number>();

  constructor(
    private readonly host: HostClient,
    private readonly lineId: string,
    private readonly wireVersions: readonly number[],
  ) {}

  /**
   * Send one prompt as `sendText`; resolves with how ZCode admitted it. Without `delivery` ZCode
   * routes it (no `requestedDelivery` is sent). A text attachment ZCode would not read in full goes
   * into the prompt text instead (`prepareAttachments`).
   */
  async sendText(ref: SessionRef, input: PromptInput, delivery: InputDelivery | undefined): Promise<SentInput> {
    const prepared = prepareAttachments(input);
    await this.ready();
    const attachments = await this.upload(ref, prepared.uploads);
    const payload: Record<string, unknown> = { text: prepared.text };
    if (delivery !== undefined) payload.requestedDelivery = delivery;
    if (attachments.length > 0) payload.attachments = attachments;
    const commandId = input.inputId ?? uuidV7();
    const { ack, asked } = await this.command(ref, commandId, "sendText", payload, "sendPrompt");
    return admittedInput(ack, asked, commandId, "the prompt", ref);
  }

  /**
   * ZCode's `compact` command behind the `/compact` slash command (ZCode 3.15.1
   * `commands/handlers/goal-compact.ts`; docs/zcode-host.md §5.11): payload `{}`; idle, ZCode runs
   * the compaction at once with the command id as its input id; busy (a turn runs, or its input
   * routing queues), it becomes a queue item of kind `compact` (`queue_<commandId>`). Either way
   * the ack is `accepted` WITHOUT a result, so where it went is not said: it is taken as queued
   * under that item, which the stop routine removes, or stops when it already runs. It is paired
   * with its run by the command id (the turn's input id, or the compaction marker's
   * `sourceCommandId`: src/native/v4-read/projection.ts). ZCode refuses a second compaction while
   * one runs or is queued (`failed`, reasonCode `compactOperationLock`) and one of a session with
   * a restore warning (`restoreWarning`): both are readable errors, not protocol errors.
   */
  async compact(ref: SessionRef, inputId: string | undefined): Promise<SentInput> {
    await this.ready();
    const commandId = inputId ?? uuidV7();
    const { ack, asked } = await this.command(ref, commandId, "compact", {}, "sendPrompt");
    if (ack.status === "accepted" && ack.result === undefined) {
      return { inputId: commandId, delivery: "queue", queueItemId: `queue_${commandId}` };
    }
    if (ack.status === "failed" && ack.reasonCode === COMPACT_LOCK) {
      throw new BridgeError(
        "SESSION_BUSY",
        "ZCode is already compacting this session (or has a compaction queued), so this /compact was not run. " +
          "Wait for that compaction to finish; send /compact again afterwards if it is still needed.",
        { details: { commandId, reasonCode: COMPACT_LOCK } },
      );
    }
    if (ack.status === "failed" && ack.reasonCode === RESTORE_WARNING) {
      throw new BridgeError(
        "HOST_CALL_FAILED",
        `ZCode did not compact the session: it could not fully restore it${ack.message ? ` (${ack.message})` : ""}. ` +
          "Open the session in ZCode to resolve the warning, then send /compact again.",
        { details: { commandId, reasonCode: RESTORE_WARNING } },
      );
    }
    return admittedInput(ack, asked, commandId, "the compaction", ref);
  }

  /** Stop the running turn of the session (`stop`; `noop` = nothing left to stop). */
  async stop(ref: SessionRef): Promise<void> {
    await this.ready();
    const { ack } = await this.command(ref, uuidV7(), "stop", {}, "cancel");
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the stop", ref);
  }

  /**
   * Cancel one background work (`cancelBackgroundWork {workId}`, not compare-and-set:
   * zcode-3.15.1-source.md §2.4); `noop`: it had ended already.
   */
  async cancelBackgroundWork(ref: SessionRef, workId: string): Promise<void> {
    await this.ready();
    const { ack } = await this.command(ref, uuidV7(), "cancelBackgroundWork", { workId }, "cancelBackgroundWork");
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the cancel of the background subagent", ref);
  }

  /**
   * Answer a pending interaction (permission, question, plan approval) with `resolveInteraction`
   * (not a compare-and-set command: zcode-v4.md §4.1). Exactly once per interaction from this
   * bridge: a second answer is refused here, before anything is sent. ZCode races the answer
   * against the legacy reverse request, first answer wins: `noop` (already resolved) is success.
   */
  async resolveInteraction(
    ref: SessionRef,
    interactionId: string,
    answer: Record<string, unknown>,
    timeout: OperationTimeout,
  ): Promise<CommandAck> {
    const k = `${key(ref)}\u0000${interactionId}`;
    if (this.answered.has(k)) {
      throw new BridgeError("INVALID_PARAMS", `The interaction ${interactionId} was answered already; it is answered once.`, {
        details: { interactionId },
      });
    }
    this.answered.add(k);
    if (this.answered.size > ANSWERS_KEPT) this.answered.delete(this.answered.values().next().value!);
    await this.ready();
    const { ack } = await this.command(ref, uuidV7(), "resolveInteraction", { interactionId, answer }, timeout);
    if (ack.status !== "accepted" && ack.status !== "noop" && ack.status !== "duplicate") throw refused(ack, "the answer", ref);
    return ack;
  }

  /**
   * Let a held queue run again (`setAutoDrain {autoDrain: true}`, compare-and-set on the session's
   * revision); `noop` = it was not held.
   */
  async releaseHeldQueue(ref: SessionRef): Promise<void> {
    await this.ready();
    const ack = await this.compareAndSet(ref, "setAutoDrain", { autoDrain: true }, "releaseHeldQueue");
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "releasing ZCode's held queue", ref);
  }

  /** Remove a queued input before it runs (`deleteQueueItem`, compare-and-set on the session's revision). */
  async deleteQueued(ref: SessionRef, queueItemId: string): Promise<boolean> {
    await this.ready();
    const ack = await this.compareAndSet(ref, "deleteQueueItem", { queueItemId }, "deleteQueuedInput");
    // noop (`queue.itemMissing`): the item left the queue already (it ran or was removed)
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the removal of a queued prompt", ref);
    return ack.status === "accepted";
  }

  /**
   * Give the session a title (`renameSession {title}`, not compare-and-set); ZCode refuses it for
   * a session it has not persisted yet (a draft before its first prompt).
   */
  async renameSession(ref: SessionRef, title: string): Promise<void> {
    await this.ready();
    const { ack } = await this.command(ref, uuidV7(), "renameSession", { title }, "renameSession");
    if (ack.status !== "accepted" && ack.status !== "noop") throw refused(ack, "the new title", ref);
  }

  /**
   * Fork the session at an assistant row (`forkAssistant {target:{rowId, entityId}}`, row-targeting:
   * compare-and-set on `baseRevision` and `baseLogEpoch`, zcode-v4.md §4.1). The ack as ZCode gave
   * it: `stale` is the caller's to handle (it reads the rows again); any other refusal throws.
   * Resolves with the new session's id, or undefined on `stale`.
   */
  async forkAssistant(
    ref: SessionRef,
    target: { rowId: number | string; entityId: string },
    base: { revision: number; logEpoch: string },
  ): Promise<string | undefined> {
    await this.ready();
    const { ack } = await this.command(ref, uuidV7(), "forkAssistant", { target }, "forkSession", base.revision, base.logEpoch);
    if (ack.status === "stale") return undefined;
    if (ack.status !== "accepted") throw forkRefused(ack, ref) ?? refused(ack, "the fork", ref);
    const result = ack.result;
    if (!isRecord(result) || result.type !== "forkAssistant" || typeof result.sessionId !== "string" || result.sessionId === "") {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode accepted the fork but did not name the new session.", {
        details: { commandId: ack.commandId },
      });
    }
    return result.sessionId;
  }

  /**
   * A compare-and-set command at the session's last known revision; on `stale` it is sent again,
   * with a new command id, at the revision ZCode decided at (at most CAS_ATTEMPTS times).
   */
  private async compareAndSet(
    ref: SessionRef,
    type: string,
    payload: Record<string, unknown>,
    timeout: OperationTimeout,
  ): Promise<CommandAck> {
    for (let attempt = 1; ; attempt++) {
      const base = this.revisions.get(key(ref)) ?? 0;
      const { ack } = await this.command(ref, uuidV7(), type, payload, timeout, base);
      if (ack.status !== "stale" || attempt >= CAS_ATTEMPTS) return ack;
    }
  }

  // ---- handshake ----

  /**
   * hello + clientHello once per host incarnation (a relaunched host is a new connection). Commands
   * issued while it runs share it: one connection has one handshake.
   */
  ready(): Promise<void> {
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
      // no `clientKind`: optional where it is known (3.14+), while the strict schema of 3.11.2 / 3.12.3
      // is not public and the handshakes verified there went without it (source check §2.3)
      { kind: "clientHello", protocolVersion: version, clientId: CLIENT_ID, appVersion: PACKAGE_VERSION },
      { timeout: "v4Handshake" },
    );
  }

  // ---- commands ----

  /**
   * Send one envelope and return its ack (`asked`: the ack came from the question after the answer
   * was lost); a lost ack is asked for, never resent.
   */
  private async command(
    ref: SessionRef,
    commandId: string,
    type: string,
    payload: Record<string, unknown>,
    timeout: OperationTimeout,
    baseRevision?: number,
    baseLogEpoch?: string,
  ): Promise<{ ack: CommandAck; asked: boolean }> {
    const envelope: Record<string, unknown> = {
      commandId,
      clientId: CLIENT_ID,
      sessionId: ref.sessionId,
      type,
      payload,
      issuedAt: Date.now(),
    };
    if (baseRevision !== undefined) envelope.baseRevision = baseRevision;
    if (baseLogEpoch !== undefined) envelope.baseLogEpoch = baseLogEpoch;
    let raw: unknown;
    let asked = false;
    try {
      raw = await this.host.call("agent", "sendConversationCommandV4", { workspacePath: ref.workspacePath, envelope }, { timeout });
    } catch (error) {
      if (!isOutcomeUnknown(error)) throw error;
      raw = await this.askOutcome(ref, commandId, type, error);
      asked = true;
    }
    const ack = parseAck(raw, commandId, type);
    if (ack.revisionAtDecision !== undefined) this.noteRevision(ref, ack.revisionAtDecision);
    return { ack, asked };
  }

  /**
   * The ack of a command whose answer was lost, from ZCode's command table; an error with the lost
   * call's code (outcome unknown) when ZCode cannot say. Not asked once the channel closed or the
   * host exited: a new host incarnation is a new connection, and its table cannot know the command.
   */
  private async askOutcome(ref: SessionRef, commandId: string, type: string, lost: BridgeError): Promise<unknown> {
    // the outcome stays unknown: the lost call's code says so, so the session stops a turn ZCode may run
    const unknown = (cause: unknown): BridgeError =>
      new BridgeError(
        lost.code,
        `ZCode did not confirm ${type === "sendText" ? "the prompt" : `the ${type} command`} (${lost.message}), and could not say ` +
          "whether it received it. It was not sent again, so it is not run twice; check the session in ZCode, then retry if needed.",
        { cause, details: { commandId, type } },
      );
    if (CONNECTION_GONE.has(lost.code)) throw unknown(lost);
    let answer: unknown;
    try {
      answer = await this.host.call(
        "agent",
        "queryConversationCommandsV4",
        { workspacePath: ref.workspacePath, commands: [{ sessionId: ref.sessionId, commandId }] },
        { timeout: "queryCommands" },
      );
    } catch (error) {
      // any failure of the question (fault.command.queryForeignWorkspace is an RPC error) leaves it unknown
      throw unknown(error);
    }
    const results = isRecord(answer) && Array.isArray(answer.results) ? answer.results : [];
    // `"unknown"` (ZCode never had it, or forgot it) and a missing entry leave it unknown
    const entry = results.find((item): item is { result: Record<string, unknown> } => isRecord(item) && isRecord(item.result));
    if (!entry) throw unknown(lost);
    // ZCode could not look it up: not a refusal of the command
    if (entry.result.status === "failed" && entry.result.reasonCode === QUERY_UNAVAILABLE) throw unknown(lost);
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

  /** Upload the attachments (see `prepareAttachments`); their references, in order. */
  private async upload(ref: SessionRef, uploads: readonly Upload[]): Promise<Array<Record<string, unknown>>> {
    const refs: Array<Record<string, unknown>> = [];
    for (const item of uploads) refs.push(await this.uploadOne(ref, item.fileName, item.mime, item.bytes));
    return refs;
  }

  private async uploadOne(ref: SessionRef, fileName: string, mime: string, bytes: Buffer): Promise<Record<string, unknown>> {
    // an empty file has no chunk: ZCode takes totalBytes 0 exactly with totalChunks 0 (then commit)
    const chunks = Math.ceil(bytes.length / V4_ATTACHMENT_CHUNK_BYTES);
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

/**
 * What ZCode's fork handler refuses a target with, in words (shared/reference/zcode-3.15.1-source.md
 * §2.5: failed acks from its stable target resolver, and `fault.command.executionFailed` for a row
 * that is not its turn's tail segment).
 */
const FORK_GUARDS: Readonly<Record<string, string>> = {
  "guard.forkAssistantOnly": "ZCode forks only at an answer of the agent",
  "guard.forkTargetNotStable": "ZCode could not pin down that message (its turn may still be running, or the history changed)",
  "guard.forkTargetAmbiguous": "ZCode found more than one place that message could stand for",
  "guard.compactOperationLock": "a compaction of the conversation is running",
};

/** A refused fork the client can act on (INVALID_PARAMS, readable), or undefined for any other refusal. */
function forkRefused(ack: CommandAck, ref: SessionRef): BridgeError | undefined {
  const code = ack.reasonCode;
  if (code === undefined || (ack.status !== "failed" && ack.status !== "rejected")) return undefined;
  const details = { commandId: ack.commandId, status: ack.status, reasonCode: code, sessionId: ref.sessionId };
  if (code === "fault.command.executionFailed") {
    return new BridgeError(
      "INVALID_PARAMS",
      `ZCode did not fork the session ${ref.sessionId}: a fork attaches only to the last answer of a turn (${code}` +
        `${ack.message ? `: ${ack.message}` : ""}). Fork at a turn's final answer, or leave out the messageId.`,
      { details },
    );
  }
  if (!code.startsWith("guard.")) return undefined;
  const why = FORK_GUARDS[code] ?? "ZCode does not allow a fork there now";
  return new BridgeError(
    "INVALID_PARAMS",
    `ZCode refused to fork the session ${ref.sessionId}: ${why} (${code}). Nothing was forked; ` +
      (code === "guard.compactOperationLock" ? "retry once the compaction is done." : "fork at another answer, or retry later."),
    { details },
  );
}

/** A readable error for an ack that is not the success this command needs. */
function refused(ack: CommandAck, what: string, ref: SessionRef): BridgeError {
  const reason = ack.reasonCode ? ` (${ack.reasonCode}${ack.message ? `: ${ack.message}` : ""})` : ack.message ? ` (${ack.message})` : "";
  const details = { commandId: ack.commandId, status: ack.status, reasonCode: ack.reasonCode };
  if (ack.reasonCode === SESSION_NOT_HELD) {
    // the same code as the legacy "no such session" (-32004): the session layer resumes it and retries once
    return new BridgeError(
      "SESSION_NOT_FOUND",
      `ZCode's agent does not hold the session ${ref.sessionId} (it is not loaded, or no longer exists), so it did not run ${what}. ` +
        "Load the session again (session/load), then retry.",
      { details: { ...details, sessionId: ref.sessionId } },
    );
  }
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

// ---- attachments: what ZCode's upload schemas take, and what reaches the model ----

interface Upload {
  fileName: string;
  mime: string;
  bytes: Buffer;
}

/** do ZCode's turns get this MIME type's content as an artifact (not read back as text)? */
function keptAsArtifact(mime: string): boolean {
  return mime.startsWith("image/") || mime.startsWith("video/") || mime === "application/pdf";
}

/**
 * The prompt text and the uploads of `input`, before anything is sent (a refusal uploads nothing).
 * An attachment without bytes (a local file) stays a path mention in the prompt text.
 *
 * ZCode reads an attachment that is not an image, video or PDF back as text, at most 64 KiB of
 * it, and silently passes only the name, type and size of a larger one (§2.7). So:
 * - a TEXT attachment over 64 KiB goes into the prompt text, whole, under a header naming it.
 *   Not cut: the whole prompt was already bounded to one channel frame when it was converted
 *   (src/session/prompt-content.ts), and the text is the user's; it is refused below only if the
 *   prompt text would not fit one frame after all. Inlining keeps the content the user sent,
 *   where a refusal would make them split it by hand.
 * - a BINARY attachment over 64 KiB of another type (audio, archives, …) would reach the model as
 *   a name only, and it cannot be made text: refused (INVALID_PARAMS) with what to do instead.
 */
export function prepareAttachments(input: PromptInput): { text: string; uploads: Upload[] } {
  let text = input.content;
  const uploads: Upload[] = [];
  for (const item of input.attachments as readonly Attachment[]) {
    const isText = typeof item.textContent === "string";
    const bytes =
      typeof item.dataBase64 === "string"
        ? Buffer.from(item.dataBase64, "base64")
        : isText
          ? Buffer.from(item.textContent as string, "utf8")
          : undefined;
    if (!bytes) continue;
    const fileName = safeFileName(item.filename);
    const mime = bareMime(item.mimeType);
    if (bytes.length > V4_ATTACHMENT_MAX_BYTES) {
      throw new BridgeError(
        "INVALID_PARAMS",
        `The attachment ${fileName} has ${bytes.length} bytes; ZCode takes at most ${V4_ATTACHMENT_MAX_BYTES} bytes per file. Send a smaller file.`,
        { details: { bytes: bytes.length, limitBytes: V4_ATTACHMENT_MAX_BYTES } },
      );
    }
    if (!keptAsArtifact(mime) && bytes.length > V4_TEXT_ATTACHMENT_READ_BYTES) {
      if (isText && typeof item.dataBase64 !== "string") {
        const header = `[zcode-acp: the attached file ${fileName} (${mime}, ${bytes.length} bytes) follows in full]`;
        text = `${text}${text === "" ? "" : "\n\n"}${header}\n${item.textContent as string}\n[zcode-acp: end of ${fileName}]`;
        continue;
      }
      throw new BridgeError(
        "INVALID_PARAMS",
        `The attachment ${fileName} (${mime}, ${bytes.length} bytes) is larger than the ${V4_TEXT_ATTACHMENT_READ_BYTES} bytes ZCode reads ` +
          "of a file that is not an image, video or PDF: the model would get its name only. Send its content as text (an embedded " +
          "text resource), a file of at most 64 KiB, or a link to the file in the session's directory.",
        { details: { bytes: bytes.length, mime, limitBytes: V4_TEXT_ATTACHMENT_READ_BYTES } },
      );
    }
    uploads.push({ fileName, mime, bytes });
  }
  if (text !== input.content && Buffer.byteLength(JSON.stringify(text), "utf8") > PROMPT_TEXT_BUDGET_BYTES) {
    throw new BridgeError(
      "INVALID_PARAMS",
      `The prompt with its attached text is more than the ${PROMPT_TEXT_BUDGET_BYTES} bytes one prompt may carry to ZCode; ` +
        "send less text or fewer attachments.",
      { details: { limitBytes: PROMPT_TEXT_BUDGET_BYTES } },
    );
  }
  return { text, uploads };
}

/** characters of a MIME token (RFC 9110), the ones ZCode's `type/subtype` pattern is sure to take */
const MIME = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

/**
 * A bare lowercase `type/subtype` (ZCode refuses parameters and spaces: `text/plain;
 * charset=utf-8` fails its pattern); anything else becomes `application/octet-stream`.
 */
export function bareMime(value: unknown): string {
  if (typeof value !== "string") return "application/octet-stream";
  const bare = value.split(";", 1)[0]!.trim().toLowerCase();
  return bare.length >= 3 && bare.length <= 255 && MIME.test(bare) ? bare : "application/octet-stream";
}

/**
 * A file name ZCode takes (1–255 characters, no NUL, CR or LF): control characters and path
 * separators become `_`, a longer name is cut by characters keeping its extension, and an empty
 * one is `attachment`.
 */
export function safeFileName(value: unknown): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = typeof value === "string" ? value.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029/\\]/g, "_").trim() : "";
  if (cleaned === "") return "attachment";
  if (cleaned.length <= FILE_NAME_MAX) return cleaned;
  const dot = cleaned.lastIndexOf(".");
  const ext = dot > 0 && cleaned.length - dot <= 17 ? cleaned.slice(dot) : "";
  const stem = Array.from(ext === "" ? cleaned : cleaned.slice(0, dot));
  // cut whole code points (never half a surrogate pair) until the name fits in UTF-16 units
  let kept = stem.length;
  let length = stem.join("").length;
  while (kept > 0 && length + ext.length > FILE_NAME_MAX) {
    kept -= 1;
    length -= stem[kept]!.length;
  }
  // the extension is at most 17 characters, so some of the stem always stays
  return stem.slice(0, kept).join("") + ext;
}

/** What ZCode did with an input command it acknowledged (`sendText`, `compact`); any other ack fails closed. */
function admittedInput(ack: CommandAck, asked: boolean, commandId: string, what: string, ref: SessionRef): SentInput {
  if (ack.status !== "accepted") throw refused(ack, what, ref);
  const result = ack.result;
  // ZCode's answer to the question, rebuilt from its transcript after its command table lost the
  // command (a CLI restart, or more than 512 commands since): `accepted` without a result. The
  // input was taken; whether it still waits or ran (or runs) is not said. Its turn, if it starts
  // or started one, carries the command id as its inputId (§2.8), hence `startNow` with
  // `recovered` so the caller knows the turn may have begun, or ended, unseen.
  if (asked && result === undefined) return { inputId: commandId, delivery: "startNow", recovered: true };
  if (!isRecord(result) || result.type !== "inputAccepted" || result.inputId !== commandId) {
    throw new BridgeError(
      "NATIVE_PROTOCOL_ERROR",
      `ZCode accepted ${what} but did not say it took it as input of this command. It was not sent again.`,
      { details: { commandId, resultType: isRecord(result) ? result.type : undefined } },
    );
  }
  const admitted = DELIVERIES.has(result.delivery as string) ? (result.delivery as SentInput["delivery"]) : undefined;
  if (!admitted)
    throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode admitted ${what} with an unknown delivery ${JSON.stringify(result.delivery)}.`, {
      details: { commandId },
    });
  const sent: SentInput = { inputId: commandId, delivery: admitted };
  if (admitted === "queue") sent.queueItemId = typeof result.queueItemId === "string" ? result.queueItemId : `queue_${commandId}`;
  return sent;
}
