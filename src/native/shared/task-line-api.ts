/**
 * What the zcode-task lines (v1 = 3.10.2/3.11.2, v2 = 3.12.3+) share: the legacy session calls of
 * `zcode-agent` (sendPrompt, sessions, onDynamicSessionEvent) and the three `zcode-task` answers
 * (docs/zcode-host.md §4, §6). A line subclass supplies what differs: the sign-in check, how its
 * snapshots become the bridge's session model, model/mode setting and event normalisation.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../../host/types.js";
import type { ModelRef, SessionListEntry, SessionSnapshot, SnapshotMessage, TaskTokenUsage } from "../../protocol/native-types.js";
import type { Disposable } from "../../util/disposable.js";
import { BridgeError, describeError, isBridgeError } from "../../util/errors.js";
import { DELETE_TASK_CALL, DELETED_TASK_IDS_CALL, offersDelete, offersFork, offersSessionCommands } from "../session-calls.js";
import { findForkTarget } from "../v4-read/fork-target.js";
import { findLine } from "../../manifest/release-lines.js";
import { promptRefusal } from "./sign-in.js";
import { historyPieces, parseHistoryHandle } from "./history-read.js";
import { V4Input } from "./v4-input.js";
import { openConversation } from "../v4-read/conversation-reader.js";
import { UNROUTED_HEADERS_MESSAGE } from "../zcode-task-v3/provider-headers.js";
import { joinHeaderRequests } from "./header-joined.js";
import { rowsHistory } from "../v4-read/history.js";
import { readSubagentDirectory } from "../v4-read/subagent-directory.js";
import { readContextComposition } from "./context-composition.js";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
import { silentLogger, type Logger } from "../../log/logger.js";
import type {
  ContextComposition,
  ExitListener,
  InputDelivery,
  NativeApi,
  NativeSessionEntry,
  NewSession,
  PromptInput,
  QuestionAnswer,
  ResumeSession,
  SentInput,
  SessionRef,
} from "../native-api.js";

/** The host's "no such session" error (-32004 on the wire, or its message). */
export function isSessionMissing(error: unknown): boolean {
  return (
    isSessionMissingCode(error) ||
    (isBridgeError(error, "HOST_CALL_FAILED") && /not found|unknown session|no such session/i.test(error.message))
  );
}

/**
 * The host's "no such session" error by its code only (-32004, `session_unavailable`): for a
 * prompt, whose refusals ("model not found", …) the message alone could misname.
 */
function isSessionMissingCode(error: unknown): boolean {
  if (!isBridgeError(error, "HOST_CALL_FAILED")) return false;
  const details = error.details ?? {};
  return details.code === -32004 || details.data === "session_unavailable";
}

export function sessionNotFound(error: unknown, sessionId: string): BridgeError {
  return new BridgeError(
    "SESSION_NOT_FOUND",
    `ZCode has no session ${sessionId} in this workspace. Use session/list to see the sessions of this directory.`,
    {
      cause: error,
      details: { sessionId },
    },
  );
}

/** the deleted session ids one list reads at most (a workspace's deletions over years of use) */
export const MAX_DELETED_IDS = 50_000;

/** A session ZCode's delete hid: not found, like one that never was. */
function deletedSession(sessionId: string): BridgeError {
  return new BridgeError(
    "SESSION_NOT_FOUND",
    `The session ${sessionId} was deleted in ZCode. Use session/list to see the sessions of this directory.`,
    { details: { sessionId } },
  );
}

/** `/compact` alone (no arguments, no attachments): ZCode's slash command for its `compact` command */
export function isCompactCommand(input: PromptInput): boolean {
  return input.attachments.length === 0 && input.content.trim() === "/compact";
}

/** A second prompt while a turn runs, on a release without V4 input. */
function noLiveInput(): BridgeError {
  return new BridgeError(
    "SESSION_BUSY",
    "This ZCode release takes no input while a turn runs (it lacks the V4 conversation commands). Wait for the turn to end or cancel it first.",
  );
}

/** How a line reads its sessions: the legacy event stream, or the V4 conversation (src/native/v4-read/). */
export type ReadPath = "legacy" | "v4";

export interface LineOptions {
  /**
   * `v4`: read through the V4 conversation even where the legacy stream exists (the equivalence
   * tests, ZCODE_ACP_READ_PATH=v4); an install that does not allow it is then refused. A line
   * without the legacy stream (zcode-task-v3) always reads V4.
   */
  readPath?: ReadPath;
  logger?: Logger;
}

/** the legacy session event and prompt call (zcode-task-v1/v2; zcode-task-v3 has neither) */
const LEGACY_SESSION_EVENT = "onDynamicSessionEvent";
const LEGACY_INPUT_CALL = "sendPrompt";

/** The running host serves no legacy session stream and the manifest does not allow the V4 read calls. */
function legacyNotServed(lineId: string): BridgeError {
  return new BridgeError(
    "UNSUPPORTED_ZCODE",
    `The running ZCode host (${lineId}) does not serve zcode-agent.${LEGACY_SESSION_EVENT} (a subscription gave no first snapshot), ` +
      "and this install's manifest does not allow the V4 read calls (subscribeConversationV4, conversationRowsRangeV4) to read sessions otherwise. " +
      "Onboard this build again (`zcode-acp onboard --probe`), or use a verified ZCode release.",
    { details: { lineId, missing: [`zcode-agent.${LEGACY_SESSION_EVENT}`] } },
  );
}

/** The V4 read path was chosen but this install's manifest does not allow what it needs. */
function noV4Read(lineId: string, method: string): BridgeError {
  return new BridgeError(
    "UNSUPPORTED_ZCODE",
    `zcode-acp was asked to read sessions through ZCode's V4 conversation API, but this ZCode install (${lineId}) does not allow ` +
      `zcode-agent.${method}. Unset ZCODE_ACP_READ_PATH, or use a ZCode release whose manifest lists the V4 read calls.`,
    { details: { lineId, method } },
  );
}

export abstract class TaskLineApi implements NativeApi {
  abstract readonly lineId: string;
  private v4: V4Input | undefined;
  /** per session (workspace + id): the last seq the V4 read path gave an event (its snapshots report it) */
  private readonly v4Seqs = new Map<string, number>();
  /**
   * V4 read path: the context usage (and its cost) a session read last said. ZCode's V4 `usage` has
   * no cost (zcode-v4.md §3.6): a V4 snapshot of the same usage carries the read's cost, so the
   * session layer sees one usage, not two that differ only by what the V4 zone leaves out.
   */
  private readonly v4Costs = new Map<string, { used: number; size: number; cost: unknown }>();
  /** the read path asked for (ZCODE_ACP_READ_PATH, or the line's only one) */
  private readonly configuredRead: ReadPath;
  /** the read path chosen for one host incarnation from what that host serves (adr/0033) */
  private chosenRead: { incarnation: number; path: ReadPath; legacyServed: boolean } | undefined;
  /** the host incarnation whose legacy session event was found not served (its subscription never confirmed) */
  private legacyEventLost: number | undefined;
  protected readonly logger: Logger;

  constructor(
    protected readonly host: HostClient,
    options: LineOptions = {},
  ) {
    this.configuredRead = options.readPath ?? "legacy";
    this.logger = options.logger ?? silentLogger;
  }

  /** The read path of the running host as chosen (`chooseReadPath`); the configured one before any choice. */
  protected get readPath(): ReadPath {
    const chosen = this.chosenRead;
    return chosen !== undefined && chosen.incarnation === this.host.incarnation ? chosen.path : this.configuredRead;
  }

  /**
   * The read path for the running host, chosen once per incarnation (adr/0033): the manifest's
   * allowlist is the upper bound, the host's answers decide. The legacy stream is read where the
   * host serves it; where it does not (its `sendPrompt` answered a probe "Method not found", the
   * two go together in ZCode, or a legacy subscription never confirmed) V4 is read where the
   * manifest allows it; else a typed error names what is missing.
   */
  protected async chooseReadPath(): Promise<ReadPath> {
    if (this.configuredRead === "v4") return "v4";
    const v4Allowed =
      (await this.host.allows("agent", "subscribeConversationV4")) && (await this.host.allows("agent", "conversationRowsRangeV4"));
    const incarnation = this.host.incarnation;
    const chosen = this.chosenRead;
    if (chosen !== undefined && chosen.incarnation === incarnation) return chosen.path;
    const eventLost = this.legacyEventLost === incarnation;
    const sendPrompt = eventLost ? "unserved" : ((await this.host.probe?.("agent", LEGACY_INPUT_CALL)) ?? "unknown");
    let path: ReadPath = "legacy";
    if (eventLost || sendPrompt === "unserved") {
      if (v4Allowed) path = "v4";
      else if (eventLost) throw legacyNotServed(this.lineId);
    }
    this.logger.info("read path chosen for the running host", { incarnation, path, sendPrompt, legacyEventLost: eventLost, v4Allowed });
    if (this.host.incarnation === incarnation)
      this.chosenRead = { incarnation, path, legacyServed: !eventLost && sendPrompt !== "unserved" };
    return path;
  }

  /**
   * A session's subscription gave no first event within `waitedMs`: on the legacy path, a served
   * legacy stream confirms with its snapshot at once, so this host does not serve it. True when
   * the line now reads through V4 (the caller subscribes once more); false on another path; throws
   * UNSUPPORTED_ZCODE when there is no path left.
   */
  async subscriptionUnconfirmed(waitedMs: number): Promise<boolean> {
    if (this.readPath !== "legacy") return false;
    // a host that serves the legacy input serves its stream too (the two go together in ZCode; a
    // pinned release's are served by its review): one silent subscription is a hang of that session,
    // not a missing method — the open fails with its timeout, and the next open subscribes anew
    if ((await this.host.probe?.("agent", LEGACY_INPUT_CALL)) === "served") return false;
    const incarnation = this.host.incarnation;
    this.legacyEventLost = incarnation;
    this.host.learnUnserved?.("agent", LEGACY_SESSION_EVENT, `its subscription gave no first snapshot within ${waitedMs} ms`);
    if (this.chosenRead?.incarnation === incarnation) this.chosenRead = undefined;
    // no V4 read allowed either: the typed error names what the running host lacks
    return (await this.chooseReadPath()) === "v4";
  }

  get incarnation(): number {
    return this.host.incarnation;
  }

  onExit(listener: ExitListener): Disposable {
    return this.host.onExit(listener);
  }

  abstract checkSignIn(workspacePath: string): Promise<void>;
  abstract setModel(params: SessionRef & { model: ModelRef; thoughtLevel?: string | undefined }): Promise<SessionSnapshot>;

  /** this line's snapshot (a result of createSession, readSession, …) in the bridge's session model */
  protected abstract parseSession(raw: unknown, what: string): SessionSnapshot;

  /**
   * A snapshot in the bridge's session model. On the V4 read path its `runtime.eventSeq` is the
   * seq of the last event the V4 reader gave the session (0 before any): the session layer counts
   * from it, and the reader's events follow it.
   */
  protected toSession(raw: unknown, what: string): SessionSnapshot {
    const snapshot = this.parseSession(raw, what);
    if (this.readPath !== "v4") return snapshot;
    const key = seqKey(snapshot.session.workspace.workspacePath, snapshot.session.sessionId);
    const seq = this.v4Seqs.get(key) ?? 0;
    const usage = snapshot.runtime?.contextUsage;
    if (usage?.cost) {
      this.v4Costs.delete(key);
      this.v4Costs.set(key, { used: usage.used, size: usage.size, cost: usage.cost });
      if (this.v4Costs.size > SEQS_KEPT) this.v4Costs.delete(this.v4Costs.keys().next().value!);
    }
    return { ...snapshot, runtime: { ...snapshot.runtime, eventSeq: seq } };
  }

  /** a V4 snapshot event whose context usage is the last read's, with that read's cost */
  private withReadCost(event: unknown, key: string): unknown {
    if (!isRecord(event) || event.type !== "snapshot" || !isRecord(event.snapshot) || !isRecord(event.snapshot.runtime)) return event;
    const runtime = event.snapshot.runtime;
    const usage = isRecord(runtime.contextUsage) ? runtime.contextUsage : undefined;
    const read = this.v4Costs.get(key);
    if (!usage || !read || usage.cost !== undefined || usage.used !== read.used || usage.size !== read.size) return event;
    return { ...event, snapshot: { ...event.snapshot, runtime: { ...runtime, contextUsage: { ...usage, cost: read.cost } } } };
  }

  /** this line's event in the bridge's session model (default: unchanged) */
  protected normaliseEvent(event: unknown, _ref: SessionRef): unknown {
    return event;
  }

  async createSession(params: NewSession): Promise<SessionSnapshot> {
    await this.chooseReadPath();
    const raw = await this.host.call(
      "agent",
      "createSession",
      {
        workspacePath: params.workspacePath,
        mcpServers: params.mcpServers,
        persistence: params.persistence,
        ...(params.sessionId !== undefined ? { sessionId: params.sessionId } : {}),
      },
      { timeout: "createSession" },
    );
    return this.toSession(raw, "createSession");
  }

  async resumeSession(params: ResumeSession): Promise<SessionSnapshot> {
    await this.chooseReadPath();
    // ZCode keeps a deleted session's conversation (its delete hides the task): it is not resumed here
    if ((await this.deletedIds(params.workspacePath))?.has(params.sessionId) === true) throw deletedSession(params.sessionId);
    const native: Record<string, unknown> = { workspacePath: params.workspacePath, sessionId: params.sessionId };
    if (params.mcpServers) native.mcpServers = params.mcpServers;
    const raw = await this.host.call("agent", "resumeSession", native, { timeout: "resumeSession" }).catch((error: unknown) => {
      throw isSessionMissing(error) ? sessionNotFound(error, params.sessionId) : error;
    });
    return this.toSession(raw, "resumeSession");
  }

  async readSession(params: SessionRef): Promise<SessionSnapshot> {
    // the state only: the newest message is the least the host accepts (0 is refused), and the
    // bootstrap drops it too (projection session-state)
    const raw = await this.host
      .call("agent", "readSession", { ...ref(params), deliveryKind: "desktop-continuous", messageLimit: 1 }, { timeout: "readSession" })
      .catch((error: unknown) => {
        throw isSessionMissing(error) ? sessionNotFound(error, params.sessionId) : error;
      });
    return this.toSession(raw, "readSession");
  }

  async *readHistory(params: SessionRef): AsyncGenerator<SnapshotMessage[]> {
    if ((await this.chooseReadPath()) === "v4") {
      await this.requireV4Read("conversationRowsRangeV4");
      // a subagent's tools are in its own conversation: read after its `subagent` row (v4-read/history.ts)
      const directory = await readSubagentDirectory(this.host, ref(params), this.logger);
      yield* rowsHistory(this.host, ref(params), {
        directory,
        onChildSkipped: (childSessionId, error) =>
          this.logger.warn("a subagent's history could not be read; its tools are left out", {
            childSessionId,
            error: describeError(error),
          }),
      });
      return;
    }
    const raw = await this.host.call("agent", "readSessionMessages", ref(params), { timeout: "readHistory" }).catch((error: unknown) => {
      throw isSessionMissing(error) ? sessionNotFound(error, params.sessionId) : error;
    });
    yield* historyPieces(this.host, parseHistoryHandle(raw));
  }

  async listSessions(workspacePath: string): Promise<NativeSessionEntry[]> {
    // CLI 0.17.0 dropped includeArchived (-32602): sent only where the reviewed build accepts it
    const params: Record<string, unknown> = { workspacePath };
    if ((await this.host.acceptsParam?.("agent", "listSessions", "includeArchived")) === true) params.includeArchived = false;
    const [raw, deleted] = await Promise.all([
      this.host.call<unknown>("agent", "listSessions", params, { timeout: "listSessions" }),
      this.deletedIds(workspacePath),
    ]);
    if (!Array.isArray(raw)) throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode returned a session list that is not an array.");
    const entries = (raw as SessionListEntry[]).map((item) => {
      if (typeof item?.sessionId !== "string" || item.sessionId === "")
        throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode returned a session without an id.");
      const path = item.workspace?.workspacePath;
      return {
        sessionId: item.sessionId,
        workspacePath: typeof path === "string" ? path : undefined,
        title: typeof item.title === "string" && item.title !== "" ? item.title : undefined,
        updatedAt: typeof item.updatedAt === "number" && Number.isFinite(item.updatedAt) ? item.updatedAt : undefined,
      };
    });
    // the desktop's list makes the same join: a deleted task keeps its CLI session, ZCode lists it
    return deleted === undefined ? entries : entries.filter((entry) => !deleted.has(entry.sessionId));
  }

  /**
   * The ids of the sessions ZCode's delete hid in a workspace (`zcode-task.listDeletedTaskIds`),
   * undefined where the install has no real delete. Fails closed: an answer that is not a list of
   * ids, or one above MAX_DELETED_IDS, is an error, never a list that shows deleted sessions.
   */
  private async deletedIds(workspacePath: string): Promise<ReadonlySet<string> | undefined> {
    if (!(await this.deletes())) return undefined;
    const raw = await this.host
      .call<unknown>("task", DELETED_TASK_IDS_CALL, { workspacePath }, { timeout: "listDeletedSessions" })
      .catch((error: unknown) => {
        throw new BridgeError(
          "HOST_CALL_FAILED",
          `ZCode did not say which sessions of ${workspacePath} were deleted (zcode-task.${DELETED_TASK_IDS_CALL}: ${describeError(error)}), ` +
            "so zcode-acp cannot tell which sessions to leave out. Retry; if it persists, restart ZCode.",
          { cause: error },
        );
      });
    if (!Array.isArray(raw) || !raw.every((id) => typeof id === "string")) {
      throw new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode's ${DELETED_TASK_IDS_CALL} answer is not a list of session ids.`);
    }
    if (raw.length > MAX_DELETED_IDS) {
      throw new BridgeError(
        "NATIVE_PROTOCOL_ERROR",
        `ZCode names ${raw.length} deleted sessions in ${workspacePath}, more than the ${MAX_DELETED_IDS} zcode-acp reads; ` +
          "it cannot list this directory's sessions without showing deleted ones.",
      );
    }
    return new Set(raw);
  }

  /** does this install have ZCode's real delete (../session-calls.ts)? */
  private deletes(): Promise<boolean> {
    return offersDelete((service, method) => this.host.allows(service, method));
  }

  async closeSession(params: SessionRef & { persistence?: "immediate" | "deferred" }): Promise<void> {
    const native: Record<string, unknown> = ref(params);
    if (params.persistence) native.expectedPersistence = params.persistence;
    await this.host.call("agent", "closeSession", native, { timeout: "closeSession" });
  }

  /**
   * Throws SESSION_NOT_FOUND, the same on both paths, when ZCode does not hold the session (legacy
   * -32004; V4 ack `proto.sessionNotFound`): the caller may resume it and send again, nothing ran.
   */
  async sendInput(params: SessionRef & PromptInput & { delivery?: InputDelivery; inputId?: string }): Promise<SentInput> {
    const delivery = params.delivery;
    const refusal = (error: unknown): unknown =>
      isSessionMissingCode(error) ? sessionNotFound(error, params.sessionId) : promptRefusal(error);
    if (await this.takesLiveInput()) {
      // the `/compact` slash command is ZCode's `compact` command on V4 (a release without V4 input
      // gets the text, as ZCode's own prompt box sends it; GUESS: that ZCode reads it as the command)
      const sent =
        isCompactCommand(params) && delivery === undefined
          ? this.v4Input().compact(ref(params), params.inputId)
          : this.v4Input().sendText(ref(params), params, delivery);
      return sent.catch((error: unknown) => {
        throw refusal(error);
      });
    }
    if (delivery !== undefined && delivery !== "startNow") throw noLiveInput();
    const native: Record<string, unknown> = { ...ref(params), content: params.content };
    if (params.attachments.length > 0) native.attachments = params.attachments;
    await this.host.call("agent", "sendPrompt", native, { timeout: "sendPrompt" }).catch((error: unknown) => {
      throw refusal(error);
    });
    return { inputId: undefined, delivery: "startNow" };
  }

  /** V4 input where the install's manifest allows it (adr/0022); `sendPrompt` only for a release without it */
  takesLiveInput(): Promise<boolean> {
    return this.host.allows("agent", "sendConversationCommandV4");
  }

  async removeQueuedInput(params: SessionRef & { queueItemId: string }): Promise<boolean> {
    if (!(await this.takesLiveInput())) throw noLiveInput();
    return this.v4Input().deleteQueued(ref(params), params.queueItemId);
  }

  async releaseHeldQueue(params: SessionRef): Promise<void> {
    if (!(await this.takesLiveInput())) return;
    await this.v4Input().releaseHeldQueue(ref(params));
  }

  /**
   * session/delete: ZCode's real delete, the desktop's own (`zcode-task.deleteTask`): the session
   * leaves ZCode's lists, its conversation is kept. The caller has closed it first (ZCode's V4
   * `deleteSession` is only that close).
   */
  async deleteSession(params: SessionRef): Promise<void> {
    if (!(await this.deletes())) {
      throw new BridgeError(
        "UNSUPPORTED_ZCODE",
        `This ZCode release (${this.lineId}) cannot delete sessions: its manifest does not allow zcode-task.${DELETE_TASK_CALL} and ` +
          `${DELETED_TASK_IDS_CALL}. Use a newer ZCode release.`,
        { details: { lineId: this.lineId } },
      );
    }
    await this.host.call(
      "task",
      DELETE_TASK_CALL,
      { taskId: params.sessionId, workspacePath: params.workspacePath },
      { timeout: "deleteSession" },
    );
  }

  /** session/set_title (V4 `renameSession`); a session ZCode's agent does not hold is resumed for it and closed again. */
  async renameSession(params: SessionRef & { title: string; held: boolean }): Promise<void> {
    await this.requireSessionCommands("set session titles");
    if (params.held) return this.v4Input().renameSession(ref(params), params.title);
    await this.resumeSession(ref(params));
    try {
      await this.v4Input().renameSession(ref(params), params.title);
    } finally {
      await this.closeSession(ref(params)).catch((error: unknown) =>
        this.logger.warn("closing a session resumed for its new title failed", { error: describeError(error) }),
      );
    }
  }

  /**
   * session/fork: the row to fork at is read from the conversation's rows pages (with the
   * revision and log epoch they were read at), then `forkAssistant`; a `stale` answer (the
   * conversation moved) reads the rows again, at most 4 times. A session ZCode's agent does not
   * hold is resumed for it and closed again.
   */
  async forkSession(params: SessionRef & { messageId: string | undefined; held: boolean }): Promise<string> {
    if (!(await offersFork((service, method) => this.host.allows(service, method)))) {
      throw new BridgeError(
        "UNSUPPORTED_ZCODE",
        `This ZCode install (${this.lineId}) cannot fork sessions: its manifest does not allow ZCode's V4 commands and rows pages. Use a newer ZCode release.`,
        { details: { lineId: this.lineId } },
      );
    }
    if (!params.held) await this.resumeSession(ref(params));
    try {
      // the rows pages are a V4 call: the connection's handshake comes first
      await this.v4Input().ready();
      for (let attempt = 1; attempt <= FORK_ATTEMPTS; attempt++) {
        const { target, base } = await findForkTarget(this.host, ref(params), params.messageId);
        const forked = await this.v4Input().forkAssistant(ref(params), target, base);
        if (forked !== undefined) return forked;
      }
      throw new BridgeError(
        "HOST_CALL_FAILED",
        `The session ${params.sessionId} kept changing while it was forked (${FORK_ATTEMPTS} attempts). Fork it once it is idle.`,
      );
    } finally {
      if (!params.held) {
        await this.closeSession(ref(params)).catch((error: unknown) =>
          this.logger.warn("closing a session resumed for its fork failed", { error: describeError(error) }),
        );
      }
    }
  }

  /** the V4 commands session management goes through (./../session-calls.ts) */
  private async requireSessionCommands(what: string): Promise<void> {
    if (await offersSessionCommands((service, method) => this.host.allows(service, method))) return;
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      `This ZCode release (${this.lineId}) cannot ${what}: it lacks ZCode's V4 conversation commands. Use a newer ZCode release.`,
      { details: { lineId: this.lineId } },
    );
  }

  private async requireV4Read(method: string): Promise<void> {
    if (!(await this.host.allows("agent", method))) throw noV4Read(this.lineId, method);
  }

  private v4Input(): V4Input {
    this.v4 ??= new V4Input(this.host, this.lineId, findLine(this.lineId)?.v4WireVersions ?? []);
    return this.v4;
  }

  async setMode(params: SessionRef & { mode: string }): Promise<SessionSnapshot> {
    return this.toSession(
      await this.host.call("agent", "setMode", { ...ref(params), mode: params.mode }, { timeout: "setMode" }),
      "setMode",
    );
  }

  async setThoughtLevel(params: SessionRef & { thoughtLevel: string }): Promise<SessionSnapshot> {
    const raw = await this.host.call(
      "agent",
      "setThoughtLevel",
      { ...ref(params), thoughtLevel: params.thoughtLevel },
      { timeout: "setThoughtLevel" },
    );
    return this.toSession(raw, "setThoughtLevel");
  }

  async tokenUsage(params: SessionRef): Promise<TaskTokenUsage | undefined> {
    const raw = await this.host.call<unknown>("agent", "getTaskTokenUsage", ref(params), { timeout: "tokenUsage" });
    return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as TaskTokenUsage) : undefined;
  }

  contextComposition(params: SessionRef): Promise<ContextComposition | undefined> {
    return readContextComposition(this.host, params);
  }

  async stopTurn(params: SessionRef): Promise<void> {
    if (await this.takesLiveInput()) return this.v4Input().stop(ref(params));
    await this.host.operate("cancelGeneration", params.sessionId, { workspacePath: params.workspacePath }, { timeout: "cancel" });
  }

  /** `stopSubagent` where the manifest allows it (3.18+; the lines list it as optional) */
  stopsSubagents(): Promise<boolean> {
    return this.host.allows("agent", "stopSubagent");
  }

  /**
   * Stop one subagent: `stopSubagent {workspacePath, sessionId, toolCallId, childSessionId}`.
   * GUESS: the method is public (zpocket v1.5.0 adapts 3.18's), its parameters are not; the
   * simulator takes the parent tool call's id (docs/zcode-host.md, fixtures/README.md).
   */
  async stopSubagent(params: SessionRef & { toolCallId: string; childSessionId: string }): Promise<void> {
    if (!(await this.stopsSubagents())) {
      throw new BridgeError("METHOD_NOT_ALLOWED", "This ZCode release cannot stop a single subagent; cancel the parent session instead.");
    }
    await this.host.call(
      "agent",
      "stopSubagent",
      { ...ref(params), toolCallId: params.toolCallId, childSessionId: params.childSessionId },
      { timeout: "stopSubagent" },
    );
  }

  /** `cancelBackgroundWork {workId}` (V4; a backgrounded subagent ZCode lists `cancellable`) */
  async cancelBackgroundWork(params: SessionRef & { workId: string }): Promise<void> {
    if (!(await this.takesLiveInput())) {
      throw new BridgeError(
        "UNSUPPORTED_ZCODE",
        "This ZCode install takes no V4 commands; a background subagent cannot be cancelled alone.",
      );
    }
    await this.v4Input().cancelBackgroundWork(ref(params), params.workId);
  }

  answerPermission(params: SessionRef & { requestId: string; optionId: string }): Promise<unknown> {
    // the path chosen when the session subscribed (an interaction comes only through a subscription)
    if (this.readPath === "v4") {
      return this.v4Input().resolveInteraction(ref(params), params.requestId, { optionId: params.optionId }, "answerPermission");
    }
    return this.host.operate(
      "respondPermission",
      params.sessionId,
      { requestId: params.requestId, optionId: params.optionId, workspacePath: params.workspacePath },
      { timeout: "answerPermission" },
    );
  }

  answerQuestion(params: SessionRef & { requestId: string; answer: QuestionAnswer }): Promise<unknown> {
    if (this.readPath === "v4") {
      // the V4 answer of a question or a plan approval: {action, content?} (zcode-v4.md §5.3)
      const answer: Record<string, unknown> = { action: params.answer.action };
      if (params.answer.action === "accept" && params.answer.content !== undefined) answer.content = params.answer.content;
      return this.v4Input().resolveInteraction(ref(params), params.requestId, answer, "answerQuestion");
    }
    const native: Record<string, unknown> = {
      requestId: params.requestId,
      action: params.answer.action,
      workspacePath: params.workspacePath,
    };
    if (params.answer.action === "accept" && params.answer.content !== undefined) native.content = params.answer.content;
    return this.host.operate("respondStructuredInput", params.sessionId, native, { timeout: "answerQuestion" });
  }

  declineProviderHeaders(params: SessionRef & { requestId: string; message: string }): Promise<unknown> {
    return this.host.call(
      "agent",
      "respondProviderRuntimeHeaders",
      { ...ref(params), requestId: params.requestId, response: { headersApplied: false, errorMessage: params.message } },
      { timeout: "answerProviderHeaders" },
    );
  }

  async subscribe(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    if ((await this.chooseReadPath()) === "v4") return this.subscribeV4(params, sink);
    return this.host.subscribe(
      { ...ref(params), deliveryKind: "desktop-continuous", includeSnapshot: true },
      { onEvent: (event) => sink.onEvent(this.normaliseEvent(event, params)), onEnd: (error) => sink.onEnd(error) },
    );
  }

  /**
   * A line that has the legacy stream, read through V4 (ZCODE_ACP_READ_PATH=v4): its provider header
   * requests are not V4 (docs/zcode-host.md §6.4, §16.7) and such a host hands them to the session's
   * legacy stream (`providerRuntimeHeaders.request`; a 3.14 host has no workspace header event). So
   * the session's legacy stream is listened to as well, without its snapshot, and only its header
   * requests are passed on: the rest is read from the conversation. Each request reaches the
   * session once (a re-announced one is dropped), after the conversation showed its turn
   * (HeaderTurnOrder); what is still held when the subscription ends is declined here, so each
   * request gets one answer. Either stream's end ends both.
   */
  protected async subscribeV4(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    await this.requireV4Read("subscribeConversationV4");
    // a host that does not serve the legacy stream (adr/0033) has no header requests on it to listen to
    const chosen = this.chosenRead;
    if (chosen !== undefined && chosen.incarnation === this.host.incarnation && !chosen.legacyServed) return this.openV4(params, sink);
    const seen = new Set<string>();
    return joinHeaderRequests(
      this.host,
      this.logger,
      {
        attach: async (deliver, end) => {
          const legacy = await this.host.subscribe(
            { ...ref(params), deliveryKind: "desktop-continuous", includeSnapshot: false },
            {
              onEvent: (event) => {
                if (!isRecord(event) || event.type !== "providerRuntimeHeaders.request") return;
                const requestId =
                  isRecord(event.request) && typeof event.request.requestId === "string" ? event.request.requestId : undefined;
                if (requestId !== undefined) {
                  if (seen.has(requestId)) return;
                  seen.add(requestId);
                  if (seen.size > HEADER_REQUESTS_KEPT) seen.delete(seen.values().next().value!);
                }
                return deliver(this.normaliseEvent(event, params));
              },
              onEnd: (error) =>
                end(
                  error ??
                    new BridgeError(
                      "HOST_CALL_FAILED",
                      "ZCode ended the session's event stream (its provider header requests); the session is read again at its next use.",
                    ),
                ),
            },
          );
          return () => legacy.dispose();
        },
        declineHeld: (event) => {
          const request = isRecord(event) && isRecord(event.request) ? event.request : {};
          if (typeof request.requestId !== "string" || request.requestId === "") return;
          void this.declineProviderHeaders({ ...ref(params), requestId: request.requestId, message: UNROUTED_HEADERS_MESSAGE }).catch(
            (error: unknown) => this.logger.warn("provider headers: answering host failed", { error: describeError(error) }),
          );
        },
      },
      (joined) => this.openV4(params, joined),
      sink,
    );
  }

  /** the V4 conversation subscription of a session (src/native/v4-read/) */
  protected async openV4(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    await this.requireV4Read("subscribeConversationV4");
    await this.v4Input().ready();
    const key = seqKey(params.workspacePath, params.sessionId);
    return openConversation(ref(params), sink, {
      host: this.host,
      logger: this.logger,
      startSeq: this.v4Seqs.get(key) ?? 0,
      onSeq: (seq) => {
        this.v4Seqs.delete(key);
        this.v4Seqs.set(key, seq);
        if (this.v4Seqs.size > SEQS_KEPT) this.v4Seqs.delete(this.v4Seqs.keys().next().value!);
      },
      normalise: (event) => this.normaliseEvent(this.withReadCost(event, key), params),
      followSubagents: true,
    });
  }
}

/** how often a fork is tried when ZCode answers that the conversation moved (`stale`) */
const FORK_ATTEMPTS = 4;

/** provider header request ids remembered per subscription (a re-announced one is dropped) */
const HEADER_REQUESTS_KEPT = 256;

/** sessions whose V4 event seq is remembered */
const SEQS_KEPT = 1024;

function seqKey(workspacePath: string, sessionId: string): string {
  return `${workspacePath}\u0000${sessionId}`;
}

function ref(params: SessionRef): { workspacePath: string; sessionId: string } {
  return { workspacePath: params.workspacePath, sessionId: params.sessionId };
}
