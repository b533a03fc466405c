/**
 * What the zcode-task lines (v1 = 3.10.2/3.11.2, v2 = 3.12.3+) share: the legacy session calls of
 * `zcode-agent` (sendPrompt, sessions, onDynamicSessionEvent) and the three `zcode-task` answers
 * (docs/zcode-host.md §4, §6). A line subclass supplies what differs: the sign-in check, how its
 * snapshots become the bridge's session model, model/mode setting and event normalisation.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../../host/types.js";
import type { ModelRef, SessionListEntry, SessionSnapshot, SnapshotMessage, TaskTokenUsage } from "../../protocol/native-types.js";
import type { Disposable } from "../../util/disposable.js";
import { BridgeError, isBridgeError } from "../../util/errors.js";
import { findLine } from "../../manifest/release-lines.js";
import { promptRefusal } from "./sign-in.js";
import { historyPieces, parseHistoryHandle } from "./history-read.js";
import { V4Input } from "./v4-input.js";
import type {
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

/** A second prompt while a turn runs, on a release without V4 input. */
function noLiveInput(): BridgeError {
  return new BridgeError(
    "SESSION_BUSY",
    "This ZCode release takes no input while a turn runs (it lacks the V4 conversation commands). Wait for the turn to end or cancel it first.",
  );
}

export abstract class TaskLineApi implements NativeApi {
  abstract readonly lineId: string;
  private v4: V4Input | undefined;

  constructor(protected readonly host: HostClient) {}

  get incarnation(): number {
    return this.host.incarnation;
  }

  onExit(listener: ExitListener): Disposable {
    return this.host.onExit(listener);
  }

  abstract checkSignIn(workspacePath: string): Promise<void>;
  abstract setModel(params: SessionRef & { model: ModelRef; thoughtLevel?: string | undefined }): Promise<SessionSnapshot>;

  /** this line's snapshot (a result of createSession, readSession, …) in the bridge's session model */
  protected abstract toSession(raw: unknown, what: string): SessionSnapshot;

  /** this line's event in the bridge's session model (default: unchanged) */
  protected normaliseEvent(event: unknown, _ref: SessionRef): unknown {
    return event;
  }

  async createSession(params: NewSession): Promise<SessionSnapshot> {
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
    const raw = await this.host.call("agent", "readSessionMessages", ref(params), { timeout: "readHistory" }).catch((error: unknown) => {
      throw isSessionMissing(error) ? sessionNotFound(error, params.sessionId) : error;
    });
    yield* historyPieces(this.host, parseHistoryHandle(raw));
  }

  async listSessions(workspacePath: string): Promise<NativeSessionEntry[]> {
    // CLI 0.17.0 dropped includeArchived (-32602): sent only where the reviewed build accepts it
    const params: Record<string, unknown> = { workspacePath };
    if ((await this.host.acceptsParam?.("agent", "listSessions", "includeArchived")) === true) params.includeArchived = false;
    const raw = await this.host.call<unknown>("agent", "listSessions", params, { timeout: "listSessions" });
    if (!Array.isArray(raw)) throw new BridgeError("NATIVE_PROTOCOL_ERROR", "ZCode returned a session list that is not an array.");
    return (raw as SessionListEntry[]).map((item) => {
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
      return this.v4Input()
        .sendText(ref(params), params, delivery)
        .catch((error: unknown) => {
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

  async stopTurn(params: SessionRef): Promise<void> {
    if (await this.takesLiveInput()) return this.v4Input().stop(ref(params));
    await this.host.operate("cancelGeneration", params.sessionId, { workspacePath: params.workspacePath }, { timeout: "cancel" });
  }

  answerPermission(params: SessionRef & { requestId: string; optionId: string }): Promise<unknown> {
    return this.host.operate(
      "respondPermission",
      params.sessionId,
      { requestId: params.requestId, optionId: params.optionId, workspacePath: params.workspacePath },
      { timeout: "answerPermission" },
    );
  }

  answerQuestion(params: SessionRef & { requestId: string; answer: QuestionAnswer }): Promise<unknown> {
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

  subscribe(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    return this.host.subscribe(
      { ...ref(params), deliveryKind: "desktop-continuous", includeSnapshot: true },
      { onEvent: (event) => sink.onEvent(this.normaliseEvent(event, params)), onEnd: (error) => sink.onEnd(error) },
    );
  }
}

function ref(params: SessionRef): { workspacePath: string; sessionId: string } {
  return { workspacePath: params.workspacePath, sessionId: params.sessionId };
}
