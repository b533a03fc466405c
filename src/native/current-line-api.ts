/**
 * The NativeApi the session layer holds: it picks the line's implementation from the verified
 * install's `protocol.id` on first use (the host starts lazily), and again after a relaunch in
 * case the install changed line meanwhile.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../host/types.js";
import type { ModelRef, SessionSnapshot, SnapshotMessage, TaskTokenUsage } from "../protocol/native-types.js";
import type { Disposable } from "../util/disposable.js";
import { createNativeApi, type LineOptions } from "./index.js";
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
} from "./native-api.js";

export class CurrentLineApi implements NativeApi {
  private current: NativeApi | undefined;
  /** the host incarnation `current` was chosen for: within it the line cannot change */
  private chosenFor = -1;

  constructor(
    private readonly host: HostClient,
    private readonly options: LineOptions = {},
  ) {
    // the incarnation number changes only at the relaunch: after an exit the next call asks again
    host.onExit(() => {
      this.chosenFor = -1;
    });
  }

  get lineId(): string {
    return this.current?.lineId ?? "(not started)";
  }

  get incarnation(): number {
    return this.host.incarnation;
  }

  onExit(listener: ExitListener): Disposable {
    return this.host.onExit(listener);
  }

  /**
   * Calls `use` with the line's API: synchronously while the host incarnation it was chosen for
   * runs (so calls keep the order in which they were issued), else once the install is known.
   */
  private with<T>(use: (api: NativeApi) => Promise<T>): Promise<T> {
    const current = this.current;
    if (current && this.chosenFor === this.host.incarnation && this.chosenFor > 0) return use(current);
    return this.host.protocolId().then((lineId) => {
      if (this.current?.lineId !== lineId) this.current = createNativeApi(lineId, this.host, this.options);
      this.chosenFor = this.host.incarnation;
      return use(this.current);
    });
  }

  checkSignIn(workspacePath: string): Promise<void> {
    return this.with((api) => api.checkSignIn(workspacePath));
  }
  createSession(params: NewSession): Promise<SessionSnapshot> {
    return this.with((api) => api.createSession(params));
  }
  resumeSession(params: ResumeSession): Promise<SessionSnapshot> {
    return this.with((api) => api.resumeSession(params));
  }
  readSession(params: SessionRef): Promise<SessionSnapshot> {
    return this.with((api) => api.readSession(params));
  }
  async *readHistory(params: SessionRef): AsyncGenerator<SnapshotMessage[]> {
    yield* await this.with((api) => Promise.resolve(api.readHistory(params)));
  }
  listSessions(workspacePath: string): Promise<NativeSessionEntry[]> {
    return this.with((api) => api.listSessions(workspacePath));
  }
  closeSession(params: SessionRef & { persistence?: "immediate" | "deferred" }): Promise<void> {
    return this.with((api) => api.closeSession(params));
  }
  sendInput(params: SessionRef & PromptInput & { delivery?: InputDelivery; inputId?: string }): Promise<SentInput> {
    return this.with((api) => api.sendInput(params));
  }
  takesLiveInput(): Promise<boolean> {
    return this.with((api) => api.takesLiveInput());
  }
  removeQueuedInput(params: SessionRef & { queueItemId: string }): Promise<boolean> {
    return this.with((api) => api.removeQueuedInput(params));
  }
  releaseHeldQueue(params: SessionRef): Promise<void> {
    return this.with((api) => api.releaseHeldQueue(params));
  }
  deleteSession(params: SessionRef): Promise<void> {
    return this.with((api) => api.deleteSession(params));
  }
  renameSession(params: SessionRef & { title: string; held: boolean }): Promise<void> {
    return this.with((api) => api.renameSession(params));
  }
  forkSession(params: SessionRef & { messageId: string | undefined; held: boolean }): Promise<string> {
    return this.with((api) => api.forkSession(params));
  }
  setMode(params: SessionRef & { mode: string }): Promise<SessionSnapshot> {
    return this.with((api) => api.setMode(params));
  }
  setModel(params: SessionRef & { model: ModelRef; thoughtLevel?: string | undefined }): Promise<SessionSnapshot> {
    return this.with((api) => api.setModel(params));
  }
  setThoughtLevel(params: SessionRef & { thoughtLevel: string }): Promise<SessionSnapshot> {
    return this.with((api) => api.setThoughtLevel(params));
  }
  tokenUsage(params: SessionRef): Promise<TaskTokenUsage | undefined> {
    return this.with((api) => api.tokenUsage(params));
  }
  contextComposition(params: SessionRef): Promise<ContextComposition | undefined> {
    return this.with((api) => api.contextComposition(params));
  }
  stopTurn(params: SessionRef): Promise<void> {
    return this.with((api) => api.stopTurn(params));
  }
  stopsSubagents(): Promise<boolean> {
    return this.with((api) => api.stopsSubagents());
  }
  stopSubagent(params: SessionRef & { toolCallId: string; childSessionId: string }): Promise<void> {
    return this.with((api) => api.stopSubagent(params));
  }
  cancelBackgroundWork(params: SessionRef & { workId: string }): Promise<void> {
    return this.with((api) => api.cancelBackgroundWork(params));
  }
  answerPermission(params: SessionRef & { requestId: string; optionId: string }): Promise<unknown> {
    return this.with((api) => api.answerPermission(params));
  }
  answerQuestion(params: SessionRef & { requestId: string; answer: QuestionAnswer }): Promise<unknown> {
    return this.with((api) => api.answerQuestion(params));
  }
  declineProviderHeaders(params: SessionRef & { requestId: string; message: string }): Promise<unknown> {
    return this.with((api) => api.declineProviderHeaders(params));
  }
  subscriptionUnconfirmed(waitedMs: number): Promise<boolean> {
    return this.with(async (api) => (await api.subscriptionUnconfirmed?.(waitedMs)) ?? false);
  }
  subscribe(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    return this.with((api) => api.subscribe(params, sink));
  }
}
