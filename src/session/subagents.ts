/**
 * ZCode's subagents as ACP child sessions (adr/0027, adr/0031, docs/acp.md §2.12), for a client
 * that advertised `clientCapabilities.subagents`. The parent's `Agent` / `Task` tool call starts a
 * subagent; its own tool events arrive on the parent's stream marked `source: "subagent"` with its
 * `childSessionId`, `parentToolCallId` and its own tool id `childToolCallId` (ZCode's legacy
 * mirror; on V4 the native reader follows the child's conversation and gives its tools the same
 * shape), its permission requests carry `origin: {kind: "subagent", childSessionId, …}`, and the
 * parent tool call's result is its summary (docs/zcode-host.md §5.6, §6.1). On V4 the parent's
 * `subagent` row (`subagent.updated`) announces and ends it, and says whether ZCode can cancel its
 * background work.
 *
 * Per child: a `subagent_update` on the parent session announces it (title and description from the
 * parent tool call's input, state `running`, `capabilities.cancel` only where ZCode can stop one
 * subagent), then its tools go out under its own session id (its own tool-call tracker), then its
 * summary as its message and a last `subagent_update` with state `idle` and the stop reason. The
 * child is forgotten then (evicted); late events of an ended child are dropped.
 *
 * Its permission requests and questions are asked under its child session (event-router.ts).
 * `session/load` replays a child through the same tracker (replay mode, history-replay.ts).
 *
 * Bounded: at most MAX_CHILDREN children are tracked per parent session at a time; the work of a
 * child beyond that stays flattened into the parent turn (as for a client without the capability).
 * At most ENDED_KEPT ended child ids are remembered to drop their late events.
 *
 * `subagent_update` is in SDK 2.4.0's unstable schema only (the spec stabilised it on 2026-11-20);
 * it is typed here against the SDK's unstable entry and goes out through the same session queue.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionUpdate as UnstableSessionUpdate } from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../log/logger.js";
import type { ToolUpdatedPayload } from "../protocol/native-types.js";
import { ToolCallTracker } from "./tool-call-tracker.js";
import { resultText } from "./tool-presentation.js";
import type { ToolCallUpdate } from "@agentclientprotocol/sdk";

/** children tracked per parent session at a time (a 17th running at once is shown flattened) */
export const MAX_CHILDREN = 16;
/** ended child ids remembered per parent session (their late events are dropped) */
const ENDED_KEPT = 64;
/** the longest title / description taken from the parent tool call's input */
const TITLE_CHARS = 200;
const DESCRIPTION_CHARS = 2000;

/** How a child's foreground work ended (ACP `IdleStateUpdate.stopReason`). */
export type ChildStopReason = "end_turn" | "cancelled" | "error";

/** What the tracker needs of its parent session. */
export interface SubagentParent {
  readonly parentSessionId: string;
  readonly cwd: string;
  readonly logger: Logger;
  /** queue an update: on the parent session, or under `target` (a child's session id) */
  post(update: SessionUpdate, target?: string): void;
  /** what the parent knows about one of its tool calls (the Agent call that started a child) */
  describeParentTool(toolCallId: string): Partial<ToolCallUpdate> | undefined;
}

interface Child {
  readonly sessionId: string;
  readonly parentToolCallId: string | undefined;
  readonly tools: ToolCallTracker;
  /** ZCode runs it in the background (`background` / `backgrounded`): its Agent call's end does not end it */
  backgrounded: boolean;
  /** its background work (V4 `backgroundWorks[kind:"subagent"]`), when ZCode says it can be cancelled: what `cancelBackgroundWork` names */
  cancellableWork?: string;
  /** whether its announcement (or a later update) advertised cancel */
  advertised: boolean;
  /** aborted when the child ends or is cancelled: its open permission requests are withdrawn (denied) */
  readonly abort: AbortController;
  /** the client cancelled it and ZCode was asked to stop it: however it ends now, it ends `cancelled` */
  cancelling?: boolean;
  /** its parent tool call had already ended when the child's first event came (one V4 frame): how */
  ending?: ParentEnd;
}

/** how a parent tool call (the Agent call that started a child) ended */
export interface ParentEnd {
  stopReason: ChildStopReason;
  reason: string | undefined;
  summary: string | undefined;
}

/** Where a subagent's request is asked: its child session, withdrawn when the child ends. */
export interface ChildInteractionTarget {
  sessionId: string;
  signal: AbortSignal;
  describe: (toolCallId: string) => Partial<ToolCallUpdate> | undefined;
  /**
   * The request is shown before the child's tool row was read (it comes on the child's own
   * conversation, and can be overtaken): the child's tracker records the call as shown.
   */
  adopt: (call: ToolCallUpdate) => boolean;
}

/** The subagent origin of an event or request, when ZCode names one. */
export interface SubagentOrigin {
  childSessionId: string;
  parentToolCallId: string | undefined;
  agentType: string | undefined;
  /** ZCode runs it in the background (legacy mirror `background`, V4 `subagent.backgrounded`) */
  backgrounded?: boolean;
}

/**
 * What the V4 `subagent` row of the parent says of one child (projection.ts `subagent.updated`):
 * ZCode's own status (`running`, or one of the terminal `success` / `failed` / `cancelled`), its
 * summary, and whether its background work can be cancelled (`backgroundWorks`).
 */
export interface SubagentRowUpdate {
  childSessionId: string;
  parentToolCallId?: string | undefined;
  subagentType?: string | undefined;
  status: string;
  summaryText?: string | undefined;
  backgrounded?: boolean | undefined;
  /** the background work's id, present only while ZCode lists it `cancellable` */
  cancellableWorkId?: string | undefined;
}

/** how ZCode can stop one child: its background work, or (3.18+, GUESSED shape) `stopSubagent` by its Agent call */
export type StopTarget = { kind: "backgroundWork"; workId: string } | { kind: "stopSubagent"; parentToolCallId: string };

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** `origin` of a permission request (docs/zcode-host.md §6.1), or undefined when it is not a subagent's */
export function requestOrigin(request: unknown): SubagentOrigin | undefined {
  const origin = isRecord(request) && isRecord(request.origin) ? request.origin : undefined;
  const childSessionId = str(origin?.childSessionId);
  if (!origin || origin.kind !== "subagent" || !childSessionId) return undefined;
  return { childSessionId, parentToolCallId: str(origin.parentToolCallId), agentType: str(origin.agentType) };
}

/** the V4 `subagent` row's terminal statuses and how a child that ends so ends (ZCode: `success`, not `completed`) */
const ROW_END: Record<string, ChildStopReason> = { success: "end_turn", failed: "error", cancelled: "cancelled" };

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The subagent children of one parent session. */
export class Subagents {
  /** ZCode can stop one subagent (`stopSubagent` allowed by the install's manifest): children advertise `cancel` */
  canStop = false;
  private readonly children = new Map<string, Child>();
  /** the parent tool call that started each tracked child */
  private readonly byParentTool = new Map<string, string>();
  private readonly ended = new Set<string>();
  /**
   * Agent calls that ended before any event of their child: on the V4 path one frame may carry a
   * whole subagent, and its rows are said in the order they were first touched (the Agent call's
   * end before its child's tools). Bounded like `ended`.
   */
  private readonly endedParents = new Map<string, ParentEnd>();
  private overflowLogged = false;

  /**
   * `replay`: the instance replays a `session/load` history (history-replay.ts): a child whose
   * Agent call ended before its first part ends at the caller's `settle()`, not on the next tick
   * (the history arrives in pieces; its next piece may hold more of the child's work).
   */
  constructor(
    private readonly parent: SubagentParent,
    private readonly replay = false,
  ) {}

  /** children tracked now (diagnostics, tests) */
  get size(): number {
    return this.children.size;
  }

  has(childSessionId: string): boolean {
    return this.children.has(childSessionId);
  }

  /**
   * A `tool.updated` event: a subagent's own tool goes out under its child session (true);
   * false when it is not a subagent's, or the child cannot be tracked (the caller flattens it).
   * The parent's Agent call ending also ends its child (after the caller showed the parent's update).
   */
  toolUpdated(payload: ToolUpdatedPayload): boolean {
    const childSessionId = payload.source === "subagent" ? str(payload.childSessionId) : undefined;
    if (!childSessionId) return false;
    if (this.ended.has(childSessionId)) {
      this.parent.logger.debug("event of an ended subagent dropped", { childSessionId, kind: payload.kind });
      return true;
    }
    const child = this.child({
      childSessionId,
      parentToolCallId: str(payload.parentToolCallId),
      agentType: str(payload.agentType),
      backgrounded: payload.background === true,
    });
    if (!child) return false;
    if (payload.background === true) child.backgrounded = true;
    // ZCode's mirror renames the child's tool (`tool_subagent_<agentId>_<id>`) and keeps its own id
    // as `childToolCallId`: under the child session the tool has the child's own id
    const own = str(payload.childToolCallId);
    const update = own && payload.toolCallId !== undefined ? { ...payload, toolCallId: own } : payload;
    for (const out of child.tools.toolUpdated(update)) this.parent.post(out, child.sessionId);
    return true;
  }

  /**
   * The V4 parent's `subagent` row changed (projection.ts): a running child is announced (its tools
   * come from its own conversation), a terminal status ends it with ZCode's summary; a child whose
   * background work became cancellable advertises cancel now. A child that was never tracked and
   * is already over is announced and ended at once (one frame may carry a whole subagent).
   */
  subagentRow(row: SubagentRowUpdate): void {
    if (this.ended.has(row.childSessionId)) return;
    const child = this.child({
      childSessionId: row.childSessionId,
      parentToolCallId: row.parentToolCallId,
      agentType: row.subagentType,
      backgrounded: row.backgrounded === true,
      cancellableWork: row.cancellableWorkId,
    });
    if (!child) return;
    if (row.backgrounded === true) child.backgrounded = true;
    child.cancellableWork = row.cancellableWorkId;
    const stop = ROW_END[row.status];
    if (stop) {
      const reason = stop === "error" ? row.summaryText || "The subagent failed." : stop === "cancelled" ? "Cancelled." : undefined;
      this.end(child.sessionId, stop, reason, row.summaryText);
      return;
    }
    if (!child.advertised && this.cancellable(child)) {
      child.advertised = true;
      // a patch: only what changed (the unstable schema keeps omitted fields)
      this.parent.post(subagentUpdate({ sessionUpdate: "subagent_update", sessionId: child.sessionId, capabilities: { cancel: {} } }));
    }
  }

  /**
   * A replayed tool call of a subagent (history-replay.ts): under its child session (announced
   * first when new), true; false when the child cannot be tracked, or was ended already (the caller
   * flattens it: a replay loses no part of the history).
   */
  replayTool(origin: SubagentOrigin, update: SessionUpdate): boolean {
    if (this.ended.has(origin.childSessionId)) return false;
    const child = this.child(origin);
    if (!child) return false;
    this.parent.post(update, child.sessionId);
    return true;
  }

  /** Replay: end every child whose Agent call had already ended (the parent's own work goes on). */
  settle(): void {
    for (const [id, child] of [...this.children]) {
      if (child.ending) this.end(id, child.ending.stopReason, child.ending.reason, child.ending.summary);
    }
  }

  /** After the parent's own tool event: an Agent call that finished ends the child it started. */
  parentToolUpdated(payload: ToolUpdatedPayload, turnCancelled: boolean): void {
    if ((payload.kind !== "result" && payload.kind !== "error") || !payload.toolCallId) return;
    const how: ParentEnd =
      payload.kind === "result"
        ? { stopReason: "end_turn", reason: undefined, summary: resultText(payload.result) }
        : {
            // an Agent call that fails while the turn is being cancelled was cancelled with it
            stopReason: turnCancelled || payload.error?.type === "cancelled" ? "cancelled" : "error",
            reason: payload.error?.message ?? "The subagent failed.",
            summary: undefined,
          };
    this.parentEnded(payload.toolCallId, how);
  }

  /**
   * A parent tool call ended (live: its event; replay: its part's final state): the child it
   * started ends, or, not seen yet, ends as soon as it has been shown (its work may come after).
   */
  parentEnded(toolCallId: string, how: ParentEnd): void {
    const childSessionId = this.byParentTool.get(toolCallId);
    if (childSessionId) {
      // a backgrounded subagent's Agent call returns at once; the child runs on (its row ends it)
      if (this.children.get(childSessionId)?.backgrounded) return;
      this.end(childSessionId, how.stopReason, how.reason, how.summary);
      return;
    }
    this.endedParents.set(toolCallId, how);
    if (this.endedParents.size > ENDED_KEPT) this.endedParents.delete(this.endedParents.keys().next().value!);
  }

  /**
   * The child a subagent's permission request is asked under (announced first when it is new),
   * with the signal that withdraws the request when the child ends; undefined: ask on the parent.
   */
  interactionTarget(origin: SubagentOrigin): ChildInteractionTarget | undefined {
    if (this.ended.has(origin.childSessionId)) return undefined;
    const child = this.child(origin);
    if (!child) return undefined;
    return {
      sessionId: child.sessionId,
      signal: child.abort.signal,
      describe: (id) => child.tools.describe(id),
      adopt: (call) => child.tools.adopt(call),
    };
  }

  /**
   * How ZCode can stop this child: its background work where ZCode lists it cancellable
   * (`cancelBackgroundWork`), else `stopSubagent` where the install allows it; undefined: it cannot.
   */
  stopTarget(childSessionId: string): StopTarget | undefined {
    const child = this.children.get(childSessionId);
    if (!child) return undefined;
    if (child.cancellableWork) return { kind: "backgroundWork", workId: child.cancellableWork };
    if (this.canStop && child.parentToolCallId) return { kind: "stopSubagent", parentToolCallId: child.parentToolCallId };
    return undefined;
  }

  private cancellable(child: Child): boolean {
    return this.canStop || child.cancellableWork !== undefined;
  }

  /**
   * The client cancelled this child and ZCode is asked to stop it: it ends `cancelled`, whichever
   * event ends it. False when it was cancelled already (the transport and the SDK both report a cancel).
   */
  cancelling(childSessionId: string): boolean {
    const child = this.children.get(childSessionId);
    if (!child || child.cancelling) return false;
    child.cancelling = true;
    return true;
  }

  /**
   * The parent's turn ended: every child still tracked ends with it (`cancelled` when the turn
   * ended early, its open tools failed with `reason`).
   */
  endAll(stopReason: ChildStopReason, reason?: string): void {
    for (const [id, child] of [...this.children]) {
      if (child.ending) this.end(id, child.ending.stopReason, child.ending.reason, child.ending.summary);
      else this.end(id, stopReason, reason);
    }
    this.endedParents.clear();
  }

  /** End one child: open tools closed, its summary as its message, state idle, evicted. */
  end(childSessionId: string, stopReason: ChildStopReason, reason?: string, summary?: string): void {
    const child = this.children.get(childSessionId);
    if (!child) return;
    this.children.delete(childSessionId);
    if (child.parentToolCallId) this.byParentTool.delete(child.parentToolCallId);
    this.remember(childSessionId);
    if (child.cancelling) stopReason = "cancelled";
    child.abort.abort(`subagent ${stopReason}`);
    if (reason !== undefined) for (const update of child.tools.closeOpen(reason)) this.parent.post(update, childSessionId);
    if (summary) this.parent.post({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: summary } }, childSessionId);
    this.parent.post(subagentUpdate({ sessionUpdate: "subagent_update", sessionId: childSessionId, state: { state: "idle", stopReason } }));
  }

  private remember(childSessionId: string): void {
    this.ended.add(childSessionId);
    if (this.ended.size > ENDED_KEPT) {
      const oldest = this.ended.values().next().value;
      if (oldest !== undefined) this.ended.delete(oldest);
    }
  }

  /** The tracked child, announced on the parent when new; undefined when the bound is reached. */
  private child(origin: SubagentOrigin & { cancellableWork?: string | undefined }): Child | undefined {
    const known = this.children.get(origin.childSessionId);
    if (known) return known;
    if (this.children.size >= MAX_CHILDREN) {
      if (!this.overflowLogged) {
        this.overflowLogged = true;
        this.parent.logger.warn("more subagents at once than tracked; the others stay in the parent's turn", { max: MAX_CHILDREN });
      }
      return undefined;
    }
    const child: Child = {
      sessionId: origin.childSessionId,
      parentToolCallId: origin.parentToolCallId,
      tools: new ToolCallTracker(this.parent.cwd),
      abort: new AbortController(),
      backgrounded: origin.backgrounded === true,
      advertised: false,
      ...(origin.cancellableWork ? { cancellableWork: origin.cancellableWork } : {}),
    };
    this.children.set(child.sessionId, child);
    if (child.parentToolCallId) this.byParentTool.set(child.parentToolCallId, child.sessionId);
    this.parent.post(this.announcement(child, origin.agentType));
    const ending = child.parentToolCallId ? this.endedParents.get(child.parentToolCallId) : undefined;
    if (ending && child.parentToolCallId && child.backgrounded) this.endedParents.delete(child.parentToolCallId);
    else if (ending && child.parentToolCallId) {
      // its parent already ended: the rest of the batch that carried both is its work, then it ends
      this.endedParents.delete(child.parentToolCallId);
      child.ending = ending;
      // a replay ends it at its caller's settle()
      if (!this.replay) {
        setImmediate(() => {
          if (this.children.get(child.sessionId) === child) this.end(child.sessionId, ending.stopReason, ending.reason, ending.summary);
        });
      }
    }
    return child;
  }

  private announcement(child: Child, agentType: string | undefined): SessionUpdate {
    const call = child.parentToolCallId ? this.parent.describeParentTool(child.parentToolCallId) : undefined;
    const input = isRecord(call?.rawInput) ? call.rawInput : {};
    const type = agentType ?? str(input.subagent_type);
    const title = str(input.description) ?? type ?? "Subagent";
    const update: UnstableSessionUpdate = {
      sessionUpdate: "subagent_update",
      sessionId: child.sessionId,
      title: clip(title, TITLE_CHARS),
      state: { state: "running" },
    };
    const prompt = str(input.prompt);
    if (prompt) update.description = clip(prompt, DESCRIPTION_CHARS);
    if (this.cancellable(child)) {
      update.capabilities = { cancel: {} };
      child.advertised = true;
    }
    const zcode: Record<string, unknown> = {};
    if (child.parentToolCallId) zcode.parentToolCallId = child.parentToolCallId;
    if (type) zcode.agentType = type;
    if (Object.keys(zcode).length > 0) update._meta = { zcode };
    return subagentUpdate(update);
  }
}

/**
 * An unstable-schema update through the stable-typed session queue: the SDK does not filter
 * outgoing updates, and only clients that advertised `subagents` get one (the caller's gate).
 */
function subagentUpdate(update: UnstableSessionUpdate): SessionUpdate {
  return update as unknown as SessionUpdate;
}
