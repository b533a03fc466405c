/**
 * The projection of a V4 conversation (snapshot + deltas, ./row-store.ts) onto the bridge's session
 * model: the SAME raw events the legacy `onDynamicSessionEvent` stream delivers (docs/zcode-host.md
 * §5, §16), so that the session layer reads both paths alike.
 *
 * - `snapshot`: the A zone as a v2 session snapshot (meta → title, config → model / mode / plan,
 *   `plan.items` → todos, `usage.contextWindow` → context usage, `control` → running status);
 * - `session.event`s, numbered by the reader's own seq (one V4 delta may make several):
 *   `turn.started` / `turn.completed` / `turn.failed` from `turnHeader` rows, `model.streaming`
 *   text and reasoning deltas from the growth of `assistantText` / `reasoning` rows,
 *   `tool.updated` from `toolCall` rows, `turn.steerDrained` from guided `userInput` rows,
 *   `session.titleUpdated` from `meta`, `part.upserted` of a `compaction` part from a
 *   `timelineMarker` row whose `marker` is `{type:"compact", …}` (docs/zcode-host.md §5.11; other
 *   marker types are ignored);
 * - `state.updated` for a mode change in `config`;
 * - `permission.request` / `userInput.request` from new `pendingInteractions` (requestId =
 *   interactionId, answered through `resolveInteraction`).
 *
 * It is a differ: what was last said about each row is kept, and a changed row says only what
 * changed. Subagents (zcode-3.15.1-source.md §2.4): the parent holds one `subagent` row per child
 * (`{parentToolCallId?, subagentType, status, summaryText, childSessionId?, backgrounded?, workId?}`),
 * said as the bridge's own `subagent.updated` event when it changes (with the background work's id
 * while `backgroundWorks` lists it `cancellable`); the child's tool rows are NOT in the parent (its
 * `toolCall` rows have no `parentToolCallId`): the reader follows the child's own conversation
 * (./subagent-conversations.ts). A child's permission or question is the parent's pending
 * interaction with `payload.origin`, taken verbatim. Rows of the other kinds (artifact,
 * hookInvocation, timelineMarker) and of unknown kinds are ignored with a debug log. Per frame the events go out in this order: new
 * turns, row changes (in the order the rows were touched), A zone changes, interactions, then
 * turn ends, so that a turn's text and tools always precede its end.
 */
import type { Logger } from "../../log/logger.js";
import type { SessionRef } from "../native-api.js";
import { bridgeMode } from "../shared/modes.js";
import { boundStrings, boundText, EVENT_STRING_BYTES, omittedMarker, trailingMarker } from "./bounded-text.js";

/** characters per text delta event: four UTF-8 bytes each at most, so one delta stays within EVENT_STRING_BYTES */
const DELTA_CHARS = EVENT_STRING_BYTES / 4;
import { rowKey, type Row, type RowKey, type RowStore, type Touched } from "./row-store.js";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

const TERMINAL_HEADER = new Set(["completedSuccess", "completedInterrupted", "failed"]);
/** a snapshot's idle `control.phase` (zcode-v4.md §3.6) → the state of a turn header it ended */
const PHASE_END: Record<string, string> = {
  completedSuccess: "completedSuccess",
  completedInterrupted: "completedInterrupted",
  error: "failed",
};
const BACKGROUND_ORIGINS = new Set(["backgroundResult", "goalContinuation"]);
const IGNORED_KINDS = new Set(["artifact", "hookInvocation", "timelineMarker"]);
/** ZCode's `subagent` row statuses (`success`, not `completed`) */
const SUBAGENT_STATUS = new Set(["running", "success", "failed", "cancelled"]);
/** the longest summary a `subagent.updated` event carries (the child's message) */
const SUMMARY_BYTES = 64 * 1024;
const TODO_STATUS: Record<string, string> = { pending: "pending", inProgress: "in_progress", completed: "completed" };
/** the tail of a running tool's output shown as its progress */
const PROGRESS_TAIL_CHARS = 4096;

interface Seen {
  kind: string;
  /** assistantText / reasoning: characters of the answer said (the runtime's marker not counted), and whether that marker was said */
  text?: number;
  marked?: boolean;
  /** toolCall: status said, whether its input was said, its last progress text */
  status?: string;
  input?: boolean;
  progress?: string;
  /** turnHeader: started said, terminal said */
  started?: boolean;
  ended?: boolean;
  /** userInput: steer drained said */
  steered?: boolean;
  /** subagent: what its last `subagent.updated` said */
  subagent?: string;
}

interface ZoneSeen {
  title: string | undefined;
  mode: string | undefined;
  settings: string;
  interactions: Set<string>;
}

/** turns of compactions without a header of their own remembered (started said; ended said) */
const COMPACT_TURNS_KEPT = 64;

export class ConversationProjection {
  private readonly seen = new Map<RowKey, Seen>();
  /** `/compact` runs without a turn header: their marker's turn, and whether its end was said */
  private readonly compactTurns = new Map<string, boolean>();
  private zone: ZoneSeen | undefined;
  private seq: number;
  /**
   * the first snapshot's rows are news, not history (a subagent's conversation, followed from its
   * start: nothing reads its history before): they are said as events
   */
  freshBaseline = false;

  constructor(
    private readonly ref: SessionRef,
    private readonly logger: Logger,
    /** the session-model seq the first event follows (legacy `runtime.eventSeq`) */
    startSeq: number,
    private readonly now: () => number = Date.now,
  ) {
    this.seq = startSeq;
  }

  /** the last seq given to an event */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * A snapshot replaced the held state. `baseline`: the first one of a subscription — its rows
   * are history (said by `readHistory`), only its snapshot and waiting interactions are events.
   */
  snapshot(store: RowStore, baseline: boolean): unknown[] {
    const out: unknown[] = [{ type: "snapshot", snapshot: this.sessionSnapshot(store) }];
    this.zone = this.zoneSeen(store.zone, this.zone?.interactions ?? new Set());
    if (baseline && this.freshBaseline) {
      this.seen.clear();
      out.push(...this.changed(store, { rows: [...store.rows.keys()], removed: [], zone: false }, false));
      return out;
    }
    if (baseline) {
      this.seen.clear();
      for (const [key, row] of store.rows) this.seen.set(key, settled(row));
      out.push(...this.interactions(store));
      return out;
    }
    // what was said of a row the store let go of and remembers is kept (row-store.ts "Bound"), a row
    // that left with the snapshot's window included (RowStore.replace)
    for (const key of [...this.seen.keys()]) if (!store.rows.has(key) && !store.wasEvicted(key)) this.seen.delete(key);
    out.push(...this.changed(store, { rows: [...store.rows.keys()], removed: [], zone: false }, false, this.idleEnds(store)));
    return out;
  }

  /**
   * The safety net of a snapshot whose window no longer holds a started turn's header: when its A
   * zone says the session is idle (`control.phase` a terminal one, no `activeWorks`, nothing
   * stoppable), that turn has ended as the phase says — its header's terminal upsert was folded
   * into the snapshot, outside its window. A phase the bridge does not know ends nothing.
   */
  private idleEnds(store: RowStore): unknown[] {
    const control = isRecord(store.zone.control) ? store.zone.control : {};
    const state = typeof control.phase === "string" ? PHASE_END[control.phase] : undefined;
    const busy = control.canStop === true || (Array.isArray(control.activeWorks) && control.activeWorks.length > 0);
    if (state === undefined || busy) return [];
    const ends: unknown[] = [];
    for (const { key, turnId } of store.runningOutside()) {
      const seen = this.seen.get(key);
      if (!seen?.started || seen.ended) continue;
      const stub = store.lookup(key);
      store.settleOutside(key, state);
      this.logger.debug("V4 turn ended by an idle snapshot (its header is outside the window)", { turnId, phase: control.phase });
      const header: Row = { ...(stub ?? { rowId: key, kind: "turnHeader" }), turnId, state };
      this.header(store, header, seen, turnId, [], ends);
    }
    return ends;
  }

  /** the store forgot these let-go rows entirely: what was said of them goes too (bounded as the store is) */
  forget(keys: readonly RowKey[]): void {
    for (const key of keys) this.seen.delete(key);
  }

  /** how many rows the projection remembers what it said of (held and remembered let-go rows) */
  get remembered(): number {
    return this.seen.size;
  }

  /**
   * Number events made outside this projection (a followed subagent's tools, ./subagent-conversations.ts)
   * into this conversation's order: the session layer checks one seq order per session.
   */
  number(events: unknown[]): unknown[] {
    return this.numbered(events);
  }

  /** Number the session events in the order they go out (the session layer checks that order). */
  private numbered(events: unknown[]): unknown[] {
    for (const item of events) {
      const event = isRecord(item) && item.type === "session.event" && isRecord(item.event) ? item.event : undefined;
      if (!event) continue;
      const seq = ++this.seq;
      event.seq = seq;
      event.eventId = `v4-${this.ref.sessionId}-${seq}`;
    }
    return events;
  }

  /**
   * Events for what one frame of deltas changed, turn by turn in the order the frame first touches
   * them: a turn's start, its rows, its end; then the A zone and interactions, before the end of
   * the last turn (a queued input's turn starting in the frame its predecessor ends comes after
   * that end).
   */
  changed(store: RowStore, touched: Touched, zoneEvents = true, lastEnds: readonly unknown[] = []): unknown[] {
    for (const key of touched.removed) this.seen.delete(key);
    const turns = new Map<string, { starts: unknown[]; body: unknown[]; ends: unknown[] }>();
    for (const key of touched.rows) {
      const row = store.rows.get(key);
      if (!row) continue;
      const turnKey = str(row.turnId) ?? "";
      let turn = turns.get(turnKey);
      if (!turn) turns.set(turnKey, (turn = { starts: [], body: [], ends: [] }));
      this.row(store, row, turn.starts, turn.body, turn.ends);
    }
    const zone: unknown[] = [];
    if (zoneEvents && touched.zone) for (const state of touched.zones ?? [store.zone]) zone.push(...this.zoneChanges(store, state));
    const groups = [...turns.values()];
    const out: unknown[] = [];
    groups.forEach((turn, index) => {
      out.push(...turn.starts, ...turn.body);
      if (index < groups.length - 1) out.push(...turn.ends);
    });
    out.push(...zone, ...this.interactions(store), ...(groups.at(-1)?.ends ?? []), ...lastEnds);
    return this.numbered(out);
  }

  // ---- rows ----

  private row(store: RowStore, row: Row, starts: unknown[], body: unknown[], ends: unknown[]): void {
    const key = rowKey(row.rowId);
    let seen = this.seen.get(key);
    if (seen && seen.kind !== row.kind) seen = undefined;
    if (!seen) {
      seen = { kind: row.kind };
      this.seen.set(key, seen);
    }
    const turnId = str(row.turnId);
    switch (row.kind) {
      case "turnHeader":
        return this.header(store, row, seen, turnId, starts, ends);
      case "assistantText":
      case "reasoning": {
        // the row's text is the answer's head (whole while within the runtime's bound), and once
        // closed, where the runtime cut it, its marker; a snapshot (a resync's) or an upsert may bring
        // a head the client has part of: what is said is the part past the characters already said,
        // then the marker, once
        const { text, marker } = answerText(row);
        const said = seen.text ?? 0;
        const mark = marker !== undefined && seen.marked !== true;
        if (text.length <= said && !mark) return;
        seen.text = Math.max(said, text.length);
        if (mark) seen.marked = true;
        // a row still streaming under a finished turn is output that came after the turn's end (the
        // legacy stream's late event): ZCode closes a turn's rows when the turn ends
        if (row.state === "streaming" && turnId !== undefined && store.endedTurns.has(turnId)) {
          this.logger.debug("V4 text of a finished turn ignored", { rowId: row.rowId, turnId });
          return;
        }
        // what is new, as deltas of at most one event bound each (the legacy stream's deltas are
        // small): a frame that carried much text (ZCode merges ~30 ms of appends) loses none of it
        const messageId = str(row.assistantResponseId) ?? str(row.entityId);
        const added = (text.length > said ? text.slice(said) : "") + (mark ? marker : "");
        for (let at = 0; at < added.length; at += DELTA_CHARS) {
          const payload: Record<string, unknown> = {
            kind: row.kind === "assistantText" ? "text_delta" : "reasoning_delta",
            delta: boundText(added.slice(at, at + DELTA_CHARS), EVENT_STRING_BYTES),
          };
          if (messageId) payload.assistantMessageId = messageId;
          body.push(this.event("model.streaming", payload, turnId));
        }
        return;
      }
      case "toolCall":
        return this.tool(row, seen, turnId, body);
      case "subagent":
        return this.subagent(store, row, seen, turnId, body);
      case "timelineMarker": {
        // a compaction; the other markers (forkNotice, forkCreated, modelChange, goalSet, goalVerify,
        // retryNotice, checkpointRestored) have no ACP equivalent and are ignored
        if (!isCompactMarker(row)) return;
        const said = compactionKey(row);
        if (seen.status === said) return;
        seen.status = said;
        const command = str(row.sourceCommandId);
        // a `/compact` whose run has no turn header of its own: the marker is its turn, its
        // `sourceCommandId` the input it pairs with (the compact ack names no turn: v4-input.ts)
        const own = command !== undefined && turnId !== undefined && !store.hasHeader(turnId);
        if (own && !this.compactTurns.has(turnId)) {
          this.compactTurns.set(turnId, false);
          if (this.compactTurns.size > COMPACT_TURNS_KEPT) this.compactTurns.delete(this.compactTurns.keys().next().value!);
          starts.push(this.event("turn.started", { inputId: command }, turnId));
        }
        body.push(this.event("part.upserted", { part: compactionPart(row) }, turnId));
        const status = isRecord(row.marker) ? str(row.marker.status) : undefined;
        if (own && this.compactTurns.get(turnId) === false && status !== undefined && status !== "running") {
          this.compactTurns.set(turnId, true);
          if (status === "failed") {
            ends.push(this.event("turn.failed", { error: { message: "ZCode's compaction failed." }, inputId: command }, turnId));
          } else {
            const resultType = status === "cancelled" ? "cancelled" : "success";
            ends.push(this.event("turn.completed", { resultType, inputId: command }, turnId));
          }
        }
        return;
      }
      case "userInput": {
        const id = str(row.sourceCommandId);
        if (row.guided !== true || !id || seen.steered) return;
        seen.steered = true;
        body.push(this.event("turn.steerDrained", { pendingInputIds: [id], ...(turnId ? { targetTurnId: turnId } : {}) }, turnId));
        return;
      }
      default:
        if (!IGNORED_KINDS.has(row.kind)) this.logger.debug("V4 row of an unknown kind ignored", { kind: row.kind });
        return;
    }
  }

  private header(store: RowStore, row: Row, seen: Seen, turnId: string | undefined, starts: unknown[], ends: unknown[]): void {
    if (!turnId) return;
    const state = str(row.state);
    const inputId = str(row.sourceCommandId);
    if (!seen.started) {
      seen.started = true;
      const payload: Record<string, unknown> = {};
      if (inputId) payload.inputId = inputId;
      if (typeof row.origin === "string" && BACKGROUND_ORIGINS.has(row.origin)) payload.inputSource = "background_task";
      starts.push(this.event("turn.started", payload, turnId));
    }
    if (seen.ended || state === undefined || !TERMINAL_HEADER.has(state)) return;
    seen.ended = true;
    if (state === "failed") {
      const lastError = isRecord(store.zone.control) && isRecord(store.zone.control.lastError) ? store.zone.control.lastError : {};
      const error: Record<string, unknown> = { message: str(lastError.message) ?? "ZCode reported the turn as failed." };
      if (typeof lastError.code === "string" || typeof lastError.code === "number") error.code = lastError.code;
      ends.push(this.event("turn.failed", { error, ...(inputId ? { inputId } : {}) }, turnId));
      return;
    }
    const resultType = state === "completedSuccess" ? "success" : "cancelled";
    ends.push(this.event("turn.completed", { resultType, ...(inputId ? { inputId } : {}) }, turnId));
  }

  /**
   * A `subagent` row (zcode-3.15.1-source.md §2.4): `subagent.updated` when what it says changed.
   * Without a `childSessionId` there is no child to show or follow yet (ZCode fills it in later).
   */
  private subagent(store: RowStore, row: Row, seen: Seen, turnId: string | undefined, body: unknown[]): void {
    const childSessionId = str(row.childSessionId);
    const status = str(row.status);
    if (!childSessionId || !status || !SUBAGENT_STATUS.has(status)) {
      if (status && !SUBAGENT_STATUS.has(status)) this.logger.debug("V4 subagent row of an unknown status ignored", { status });
      return;
    }
    const payload = subagentPayload(store, row, childSessionId, status);
    const said = JSON.stringify(payload);
    if (seen.subagent === said) return;
    seen.subagent = said;
    body.push(this.event("subagent.updated", payload, turnId));
  }

  private tool(row: Row, seen: Seen, turnId: string | undefined, body: unknown[]): void {
    const toolCallId = str(row.toolCallId);
    if (!toolCallId) return;
    const toolName = str(row.toolName);
    const status = str(row.status) ?? "inputStreaming";
    const base: Record<string, unknown> = { toolCallId };
    if (toolName) base.toolName = toolName;
    const hasInput = row.input !== undefined && status !== "inputStreaming";
    if (seen.status === undefined || (hasInput && !seen.input)) {
      const scheduled: Record<string, unknown> = { kind: "scheduled", ...base };
      if (hasInput) scheduled.input = boundStrings(row.input, EVENT_STRING_BYTES);
      if (toolName) body.push(this.event("tool.updated", scheduled, turnId));
      else body.push(this.event("model.streaming", { kind: "tool_input_start", toolCallId }, turnId));
      seen.input = hasInput;
      seen.status ??= "inputStreaming";
    }
    if (status === seen.status && status !== "running") return;
    switch (status) {
      case "inputStreaming":
      case "pendingApproval":
        seen.status = status;
        return;
      case "running": {
        if (seen.status !== "running") body.push(this.event("tool.updated", { kind: "started", ...base }, turnId));
        seen.status = "running";
        const preview = progressText(row);
        if (preview !== undefined && preview !== seen.progress) {
          seen.progress = preview;
          body.push(this.event("tool.updated", { kind: "progress", ...base, outputPreview: preview }, turnId));
        }
        return;
      }
      case "success":
        // a frame batches ~30 ms: a tool that ran and finished within it still started (as on the legacy stream)
        if (seen.status !== "running") body.push(this.event("tool.updated", { kind: "started", ...base }, turnId));
        seen.status = status;
        body.push(this.event("tool.updated", { kind: "result", ...base, result: toolResult(row) }, turnId));
        return;
      case "error":
      case "cancelled": {
        seen.status = status;
        const failure = isRecord(row.error) ? row.error : {};
        const error: Record<string, unknown> = {
          message: str(failure.message) ?? (status === "cancelled" ? "The tool call was cancelled." : "The tool call failed."),
        };
        if (failure.code !== undefined) error.code = failure.code;
        body.push(this.event("tool.updated", { kind: "error", ...base, error }, turnId));
        return;
      }
      default:
        this.logger.debug("V4 tool row of an unknown status ignored", { toolCallId, status });
    }
  }

  // ---- A zone ----

  private zoneSeen(zone: Record<string, unknown>, interactions: Set<string>): ZoneSeen {
    const config = isRecord(zone.config) ? zone.config : {};
    return {
      title: metaTitle(zone),
      mode: bridgeMode(config.mode, config.planEnabled),
      settings: settingsKey(zone),
      interactions,
    };
  }

  /** what changed in the A zone `state` (the held one, or one the frame passed through) since last said */
  private zoneChanges(store: RowStore, state: Record<string, unknown>): unknown[] {
    const before = this.zone;
    const after = this.zoneSeen(state, before?.interactions ?? new Set());
    this.zone = after;
    const out: unknown[] = [];
    if (after.title !== undefined && after.title !== before?.title) {
      out.push(this.event("session.titleUpdated", { title: after.title, ...(before?.title ? { previousTitle: before.title } : {}) }));
    }
    if (after.mode !== undefined && after.mode !== before?.mode) {
      out.push({
        type: "state.updated",
        notification: {
          type: "state.updated",
          scope: "session",
          sessionId: this.ref.sessionId,
          revision: store.revision,
          patch: { mode: { current: after.mode } },
        },
      });
    }
    if (after.settings !== before?.settings) out.push({ type: "snapshot", snapshot: this.sessionSnapshot(store, state) });
    return out;
  }

  /** new pending interactions as the legacy reverse requests; each one once */
  private interactions(store: RowStore): unknown[] {
    const zone = (this.zone ??= this.zoneSeen(store.zone, new Set()));
    const pending = Array.isArray(store.zone.pendingInteractions) ? store.zone.pendingInteractions : [];
    const out: unknown[] = [];
    const live = new Set<string>();
    for (const item of pending) {
      if (!isRecord(item)) continue;
      const id = str(item.interactionId);
      if (!id) continue;
      live.add(id);
      if (zone.interactions.has(id)) continue;
      const event = interactionEvent(item, id, this.ref.sessionId, store);
      if (!event) {
        this.logger.debug("V4 interaction of an unknown kind ignored", { interactionId: id, kind: item.kind });
        continue;
      }
      zone.interactions.add(id);
      out.push(event);
    }
    for (const id of [...zone.interactions]) if (!live.has(id)) zone.interactions.delete(id);
    return out;
  }

  /** the A zone as a zcode-task-v2 session snapshot (normalised further by the line, like a legacy one) */
  sessionSnapshot(store: RowStore, zone: Record<string, unknown> = store.zone): Record<string, unknown> {
    const config = isRecord(zone.config) ? zone.config : {};
    const control = isRecord(zone.control) ? zone.control : {};
    const running = control.phase === "running" || control.phase === "prewarming";
    const title = metaTitle(zone);
    const session: Record<string, unknown> = {
      sessionId: this.ref.sessionId,
      workspace: { workspacePath: this.ref.workspacePath },
      title: title ?? null,
      status: running ? "running" : "idle",
    };
    if (typeof config.mode === "string" && config.mode !== "") session.mode = config.mode;
    if (config.planEnabled === true) session.planEnabled = true;
    const settings: Record<string, unknown> = {
      model: { current: selectionOf(config) ?? null },
      mode: { ...(typeof config.mode === "string" ? { current: config.mode } : {}), planEnabled: config.planEnabled === true },
    };
    const runtime: Record<string, unknown> = { eventSeq: this.seq, activeTurnId: running ? (store.runningTurn() ?? null) : null };
    const usage = isRecord(zone.usage) && isRecord(zone.usage.contextWindow) ? zone.usage.contextWindow : undefined;
    if (usage && typeof usage.usedTokens === "number" && typeof usage.maxTokens === "number" && usage.maxTokens > 0) {
      // `breakdown` ([{source, chars}], characters, not tokens) as ZCode's legacy contextUsage has it;
      // ZCode drops it from the usage patch after a compaction (checked in snapshot-updates.ts)
      const contextUsage: Record<string, unknown> = { used: Math.max(0, usage.usedTokens), size: usage.maxTokens };
      if (Array.isArray(usage.breakdown)) contextUsage.breakdown = usage.breakdown;
      runtime.contextUsage = contextUsage;
    }
    // whether ZCode holds its queue, and why (`pauseReason`: stopped | manual | error; adr/0038)
    if (isRecord(zone.queue)) {
      runtime.queueHeld = zone.queue.autoDrain === false;
      if (zone.queue.autoDrain === false && typeof zone.queue.pauseReason === "string") runtime.queuePauseReason = zone.queue.pauseReason;
    }
    const snapshot: Record<string, unknown> = { session, settings, runtime };
    if (isRecord(zone.plan) && Array.isArray(zone.plan.items)) {
      snapshot.todos = zone.plan.items.flatMap((item) =>
        isRecord(item) && typeof item.content === "string" && typeof item.status === "string" && TODO_STATUS[item.status]
          ? [{ content: item.content, status: TODO_STATUS[item.status] }]
          : [],
      );
    } else if ("plan" in zone) {
      snapshot.todos = [];
    }
    return snapshot;
  }

  /** one session event; its `seq` and `eventId` are given when the batch goes out (`numbered`) */
  private event(type: string, payload: Record<string, unknown>, turnId?: string): unknown {
    const event: Record<string, unknown> = {
      eventId: "",
      sessionId: this.ref.sessionId,
      seq: 0,
      timestamp: this.now(),
      deliveryKind: "desktop-continuous",
      type,
      payload,
    };
    if (turnId) event.turnId = turnId;
    return { type: "session.event", event };
  }
}

/** what a row in the first snapshot has already said (nothing of it is an event) */
function settled(row: Row): Seen {
  const seen: Seen = { kind: row.kind };
  if (row.kind === "assistantText" || row.kind === "reasoning") {
    const { text, marker } = answerText(row);
    seen.text = text.length;
    seen.marked = marker !== undefined;
  } else if (typeof row.text === "string") seen.text = row.text.length;
  if (row.kind === "toolCall") {
    seen.status = str(row.status) ?? "inputStreaming";
    seen.input = row.input !== undefined && seen.status !== "inputStreaming";
    seen.progress = progressText(row);
  }
  if (row.kind === "turnHeader") {
    seen.started = true;
    seen.ended = typeof row.state === "string" && TERMINAL_HEADER.has(row.state);
  }
  if (row.kind === "userInput") seen.steered = true;
  if (isCompactMarker(row)) seen.status = compactionKey(row);
  // a subagent of the history is said by `readHistory`; a change of it later is news
  if (row.kind === "subagent") seen.subagent = "";
  return seen;
}

/**
 * The `subagent.updated` payload of a `subagent` row: its child, ZCode's status and summary, and its
 * background work's id while `backgroundWorks` lists that work `cancellable` (zcode-3.15.1-source.md §2.4).
 */
function subagentPayload(store: RowStore, row: Row, childSessionId: string, status: string): Record<string, unknown> {
  const payload: Record<string, unknown> = { childSessionId, status };
  const parentToolCallId = str(row.parentToolCallId);
  if (parentToolCallId) payload.parentToolCallId = parentToolCallId;
  const subagentType = str(row.subagentType);
  if (subagentType) payload.subagentType = boundText(subagentType, 256);
  if (typeof row.summaryText === "string" && row.summaryText !== "") payload.summaryText = boundText(row.summaryText, SUMMARY_BYTES);
  if (row.backgrounded === true) payload.backgrounded = true;
  const workId = str(row.workId);
  const works: unknown[] = Array.isArray(store.zone.backgroundWorks) ? store.zone.backgroundWorks : [];
  const work = works.find(
    (item) =>
      isRecord(item) &&
      item.kind === "subagent" &&
      (workId !== undefined ? item.workId === workId : item.childSessionId === childSessionId),
  );
  if (status === "running" && isRecord(work) && work.cancellable === true && work.status === "running" && str(work.workId)) {
    payload.cancellableWorkId = work.workId;
  }
  return payload;
}

/**
 * An answer row's text and, for a closed row the runtime cut, its marker apart (a row still
 * streaming never carries the marker: src/runtime/conversation-frames.js keeps its head only)
 */
function answerText(row: Row): { text: string; marker: string | undefined } {
  const full = typeof row.text === "string" ? row.text : "";
  const marker = row.state === "streaming" ? undefined : trailingMarker(full);
  return { text: marker === undefined ? full : full.slice(0, full.length - marker.length), marker };
}

/**
 * A compaction row: `timelineMarker` whose `marker` is the object `{type:"compact", origin, status,
 * tokensBefore?, tokensAfter?, summaryRef?}` (ZCode's rows.ts `timelineMarkerPayloadSchema`)
 */
export function isCompactMarker(row: Row): boolean {
  return row.kind === "timelineMarker" && isRecord(row.marker) && row.marker.type === "compact";
}

/** what of a compaction marker the session layer was told: its marker (status, token counts) */
function compactionKey(row: Row): string {
  return isRecord(row.marker) ? JSON.stringify([row.marker.status, row.marker.tokensBefore, row.marker.tokensAfter]) : "";
}

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/**
 * A compaction marker as the bridge's `compaction` part (src/session/compaction.ts reads it): its
 * id the row's entity id (ZCode's compaction operationId), else the row's; ZCode's status,
 * `origin`, token counts and `summaryRef` as sent. The summary text is not in the row (only a
 * reference to the model-only summary message), so the part has none.
 */
export function compactionPart(row: Row): Record<string, unknown> {
  const marker = isRecord(row.marker) ? row.marker : {};
  const part: Record<string, unknown> = { type: "compaction", partId: str(row.entityId) ?? `compaction-row-${String(row.rowId)}` };
  const status = str(marker.status);
  if (status) part.status = status.slice(0, 64);
  const origin = str(marker.origin);
  if (origin) part.origin = origin.slice(0, 64);
  const before = count(marker.tokensBefore);
  if (before !== undefined) part.tokensBefore = before;
  const after = count(marker.tokensAfter);
  if (after !== undefined) part.tokensAfter = after;
  const ref = str(marker.summaryRef);
  if (ref) part.summaryRef = ref.slice(0, 200);
  const command = str(row.sourceCommandId);
  if (command) part.sourceCommandId = command.slice(0, 200);
  return part;
}

function metaTitle(zone: Record<string, unknown>): string | undefined {
  const meta = zone.meta;
  return isRecord(meta) && typeof meta.title === "string" && meta.title !== "" ? meta.title : undefined;
}

function selectionOf(config: Record<string, unknown>): Record<string, unknown> | undefined {
  const selection = config.modelSelection;
  if (isRecord(selection) && str(selection.providerId) && str(selection.modelId)) return selection;
  const providerId = str(config.provider);
  const modelId = str(config.model);
  if (!providerId || !modelId) return undefined;
  const thought = str(config.thought);
  return { providerId, modelId, ...(thought ? { options: { reasoningLevel: thought } } : {}) };
}

/** what of the A zone a snapshot event reports beside title and mode: model, plan, usage, a held queue */
function settingsKey(zone: Record<string, unknown>): string {
  const config = isRecord(zone.config) ? zone.config : {};
  const usage = isRecord(zone.usage) ? zone.usage.contextWindow : undefined;
  const held = isRecord(zone.queue) && zone.queue.autoDrain === false;
  const reason = held && isRecord(zone.queue) ? (zone.queue.pauseReason ?? null) : null;
  return JSON.stringify([selectionOf(config) ?? null, zone.plan ?? null, usage ?? null, held, reason]);
}

function progressText(row: Row): string | undefined {
  if (typeof row.outputPreview === "string" && row.outputPreview !== "") return row.outputPreview;
  const output = isRecord(row.output) ? row.output : undefined;
  if (typeof output?.text === "string" && output.text !== "") return output.text.slice(-PROGRESS_TAIL_CHARS);
  return undefined;
}

/**
 * A finished tool row's output as the legacy `tool.updated result` carries it: the text as
 * `content` (what the translator shows; bounded as the runtime bounds a legacy event's strings), ZCode's `display` (a `file_diff` for Edit / Write; the
 * diff itself the translator derives from the input, as on the legacy path) and truncation.
 */
export function toolResult(row: Row, maxBytes = EVENT_STRING_BYTES): Record<string, unknown> {
  const output = isRecord(row.output) ? row.output : {};
  const result: Record<string, unknown> = {};
  // the legacy result's `success` is the row's status (a V4 row has no `perf`)
  if (row.status === "success") result.success = true;
  if (typeof output.text === "string") {
    // ZCode's row keeps the head of a long output and says how long it was (`truncated.totalBytes`)
    const total = isRecord(output.truncated) && typeof output.truncated.totalBytes === "number" ? output.truncated.totalBytes : 0;
    const kept = total > 0 ? Buffer.byteLength(output.text, "utf8") : 0;
    const bounded = boundText(output.text, maxBytes);
    result.content = total > kept && bounded === output.text ? output.text + omittedMarker(total - kept) : bounded;
  }
  if (output.display !== undefined) result.display = output.display;
  if (output.truncated !== undefined) result.truncated = output.truncated;
  return result;
}

function turnOf(store: RowStore, item: Record<string, unknown>, toolCallId: string | undefined, interactionId: string): string | undefined {
  const tool = store.toolRow(toolCallId, interactionId);
  if (tool) return str(tool.turnId);
  const anchor = item.anchorRowId;
  if (anchor === undefined || anchor === null || (typeof anchor !== "string" && typeof anchor !== "number")) return undefined;
  const anchored = store.lookup(rowKey(anchor));
  return anchored ? str(anchored.turnId) : undefined;
}

/** the keys of ZCode's interaction origin (`zcodeInteractionRequestOriginSchema`, strict), all strings */
const ORIGIN_KEYS = [
  "agentId",
  "agentType",
  "childSessionId",
  "childTurnId",
  "description",
  "parentSessionId",
  "parentToolCallId",
  "parentTurnId",
] as const;
const ORIGIN_VALUE_BYTES = 4096;

/** a subagent's `payload.origin`, as ZCode gave it (its string keys, each bounded); undefined when it is not a subagent's */
function interactionOrigin(payload: Record<string, unknown>): Record<string, unknown> | undefined {
  const origin = isRecord(payload.origin) ? payload.origin : undefined;
  if (origin?.kind !== "subagent" || !str(origin.childSessionId)) return undefined;
  const out: Record<string, unknown> = { kind: "subagent" };
  for (const key of ORIGIN_KEYS) {
    const value = str(origin[key]);
    if (value) out[key] = boundText(value, ORIGIN_VALUE_BYTES);
  }
  return out;
}

const OPTION_DECISION: Record<string, string> = { allowOnce: "allow", allowAlways: "allow", deny: "deny" };

/** one pending interaction as the legacy reverse request event; undefined for a kind the bridge does not answer */
function interactionEvent(item: Record<string, unknown>, interactionId: string, sessionId: string, store: RowStore): unknown {
  const payload = isRecord(item.payload) ? item.payload : {};
  const toolCallId = str(payload.toolCallId);
  // a subagent's request is the parent's interaction naming its child (`payload.origin`, taken as given)
  const origin = interactionOrigin(payload);
  const turnId = turnOf(store, item, toolCallId, interactionId) ?? (origin ? str(origin.parentTurnId) : undefined);
  const request: Record<string, unknown> = { requestId: interactionId, sessionId };
  if (turnId) request.turnId = turnId;
  if (toolCallId) request.toolCallId = toolCallId;
  if (str(payload.toolName)) request.toolName = payload.toolName;
  if (origin) request.origin = origin;
  if (item.kind === "permission") {
    if (typeof payload.summary === "string") request.reason = payload.summary;
    if (payload.detail !== undefined) request.input = boundStrings(payload.detail, EVENT_STRING_BYTES);
    // `fullAccessOption` is not among the options: it switches the whole session to full access
    request.options = (Array.isArray(payload.options) ? payload.options : []).flatMap((option) => {
      if (!isRecord(option) || !str(option.optionId)) return [];
      const kind = str(option.kind);
      const response =
        isRecord(option.response) && typeof option.response.decision === "string"
          ? option.response
          : {
              decision: (kind && OPTION_DECISION[kind]) ?? kind ?? "custom",
              ...(kind === "allowAlways" ? { permissionUpdates: [{ type: "v4Option", optionId: option.optionId }] } : {}),
            };
      return [{ optionId: option.optionId, name: str(option.label) ?? option.optionId, ...(kind ? { kind } : {}), response }];
    });
    return { type: "permission.request", request };
  }
  if (item.kind === "userInput") {
    if (typeof payload.prompt === "string") request.prompt = payload.prompt;
    if (payload.input !== undefined) request.input = boundStrings(payload.input, EVENT_STRING_BYTES);
    if (payload.questions !== undefined) request.questions = payload.questions;
    if (payload.schema !== undefined) request.schema = payload.schema;
    return { type: "userInput.request", request };
  }
  return undefined;
}
