/**
 * The subagents of one V4 parent conversation, followed through their own conversations
 * (zcode-3.15.1-source.md §2.4): ZCode keeps a child's rows out of the parent (the parent holds one
 * `subagent` row per child, said as `subagent.updated` by ./projection.ts); a client reads them by
 * subscribing to `conversation/<childSessionId>` in the same workspace. So, per running child named
 * by the parent's events, one conversation subscription opened through the same reader a session
 * uses (`open`, ./conversation-reader.ts), closed at the row's terminal status (`success`, `failed`,
 * `cancelled`), at the parent's end, or when it ends itself.
 *
 * Of a child's events only its tools are passed on, into the parent's stream (`deliver`, numbered
 * there), in the shape of ZCode's legacy mirror (docs/zcode-host.md §6.1): `toolCallId`
 * `tool_subagent_<childSessionId>_<id>` (the bridge's own; legacy ZCode uses the agent id), and
 * `source: "subagent"`, `childSessionId`, `childToolCallId`, `parentToolCallId`, `agentType`,
 * `background`. The session layer shows them under the child session for a client with
 * `clientCapabilities.subagents`, flattened into the parent turn for any other. The child's turns,
 * text, snapshot and interactions are not passed on: its permissions and questions are the
 * parent's pending interactions (`payload.origin`), answered there once.
 *
 * Bounded: at most MAX_FOLLOWED children are followed at a time (beyond: logged, their tools are
 * not shown; their permissions still are, through the parent); ENDED_KEPT ended ids are
 * remembered so that a late `running` does not open one again.
 */
import type { HostEventSink, HostSubscription } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import { describeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";

/** children followed per parent conversation at a time */
export const MAX_FOLLOWED = 16;
const ENDED_KEPT = 256;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const TERMINAL = new Set(["success", "failed", "cancelled"]);

interface Followed {
  /** the parent turn whose subagent it is: its tools belong to that turn */
  readonly turnId: string | undefined;
  readonly parentToolCallId: string | undefined;
  readonly agentType: string | undefined;
  backgrounded: boolean;
  subscription: Promise<HostSubscription | undefined>;
  closed: boolean;
}

export interface SubagentConversationsDeps {
  readonly logger: Logger;
  /** open a child's conversation (the same reader a session uses; its first snapshot's rows are news) */
  open(ref: SessionRef, sink: HostEventSink): Promise<HostSubscription>;
  /** hand parent-stream events (not yet numbered) to the parent's sink, in order */
  deliver(events: unknown[]): void | Promise<void>;
}

export class SubagentConversations {
  private readonly followed = new Map<string, Followed>();
  private readonly ended = new Set<string>();
  private disposed = false;
  private overflowLogged = false;

  constructor(
    private readonly parent: SessionRef,
    private readonly deps: SubagentConversationsDeps,
  ) {}

  /** children followed now (diagnostics, tests) */
  get size(): number {
    return this.followed.size;
  }

  /** The parent's events of one frame, after they went out: `subagent.updated` opens or closes a child. */
  observe(events: readonly unknown[]): void {
    for (const item of events) {
      const event = isRecord(item) && item.type === "session.event" && isRecord(item.event) ? item.event : undefined;
      if (event?.type !== "subagent.updated" || !isRecord(event.payload)) continue;
      const payload = event.payload;
      const childSessionId = str(payload.childSessionId);
      const status = str(payload.status);
      if (!childSessionId || !status) continue;
      if (TERMINAL.has(status)) void this.close(childSessionId);
      else if (status === "running") this.follow(childSessionId, payload, str(event.turnId));
    }
  }

  /** The parent's subscription ends: every child subscription is closed. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const open = [...this.followed.keys()];
    await Promise.all(open.map((id) => this.close(id)));
  }

  private follow(childSessionId: string, payload: Record<string, unknown>, turnId: string | undefined): void {
    const known = this.followed.get(childSessionId);
    if (known) {
      if (payload.backgrounded === true) known.backgrounded = true;
      return;
    }
    if (this.disposed || this.ended.has(childSessionId) || childSessionId === this.parent.sessionId) return;
    if (this.followed.size >= MAX_FOLLOWED) {
      if (!this.overflowLogged) {
        this.overflowLogged = true;
        this.deps.logger.warn("more running subagents than followed; the others' tools are not shown", { max: MAX_FOLLOWED });
      }
      return;
    }
    const child: Followed = {
      turnId,
      parentToolCallId: str(payload.parentToolCallId),
      agentType: str(payload.subagentType),
      backgrounded: payload.backgrounded === true,
      subscription: Promise.resolve(undefined),
      closed: false,
    };
    this.followed.set(childSessionId, child);
    const ref = { workspacePath: this.parent.workspacePath, sessionId: childSessionId };
    child.subscription = this.deps
      .open(ref, {
        onEvent: (event) => (child.closed ? undefined : this.childEvent(childSessionId, child, event)),
        onEnd: (error) => {
          if (error && !child.closed) {
            this.deps.logger.warn("a subagent's conversation ended", { childSessionId, code: error.code, message: error.message });
          }
          this.forget(childSessionId, child);
        },
      })
      .then(
        (subscription) => {
          // closed while it was being opened
          if (child.closed) void subscription.dispose();
          return subscription;
        },
        (error: unknown) => {
          this.deps.logger.warn("a subagent's conversation could not be followed", { childSessionId, error: describeError(error) });
          this.forget(childSessionId, child);
          return undefined;
        },
      );
  }

  private async close(childSessionId: string): Promise<void> {
    const child = this.followed.get(childSessionId);
    this.remember(childSessionId);
    if (!child) return;
    this.forget(childSessionId, child);
    const subscription = await child.subscription;
    await subscription?.dispose().catch((error: unknown) => {
      this.deps.logger.debug("a subagent's conversation did not close cleanly", { childSessionId, error: describeError(error) });
    });
  }

  private forget(childSessionId: string, child: Followed): void {
    child.closed = true;
    if (this.followed.get(childSessionId) === child) this.followed.delete(childSessionId);
  }

  private remember(childSessionId: string): void {
    this.ended.add(childSessionId);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.values().next().value!);
  }

  /** a child's event: its tools go on into the parent's stream as ZCode's mirror shapes them */
  private childEvent(childSessionId: string, child: Followed, item: unknown): void | Promise<void> {
    const event = isRecord(item) && item.type === "session.event" && isRecord(item.event) ? item.event : undefined;
    if (event?.type !== "tool.updated" || !isRecord(event.payload)) return;
    const payload: Record<string, unknown> = { ...event.payload, source: "subagent", childSessionId };
    const own = str(event.payload.toolCallId);
    if (own) {
      payload.toolCallId = `tool_subagent_${childSessionId}_${own}`;
      payload.childToolCallId = own;
    }
    if (child.parentToolCallId) payload.parentToolCallId = child.parentToolCallId;
    if (child.agentType) payload.agentType = child.agentType;
    if (child.backgrounded) payload.background = true;
    const mirrored: Record<string, unknown> = {
      eventId: "",
      sessionId: this.parent.sessionId,
      seq: 0,
      timestamp: typeof event.timestamp === "number" ? event.timestamp : Date.now(),
      deliveryKind: "desktop-continuous",
      type: "tool.updated",
      payload,
    };
    if (child.turnId) mirrored.turnId = child.turnId;
    return this.deps.deliver([{ type: "session.event", event: mirrored }]);
  }
}
