/**
 * The held state of one V4 conversation (zcode-v4.md §3.6–§3.8): the snapshot's "A zone" (control,
 * meta, config, usage, plan, pendingInteractions, …), its rows by `rowId` in order, and the
 * position (`logEpoch`, `seq`, `revision`). Deltas are applied as ZCode's reference reducer does:
 * `row.appended` / `row.upserted` (whole row; an upsert of an unknown row is a no-op),
 * `row.removed` (that row and every later one), `row.delta` (a string append at one of four
 * paths), `state.updated` (key-level replace of the A zone, never a deep merge).
 *
 * Leniency: a row of an unknown kind is held (and ignored by the projection); a delta of an
 * unknown kind, or a `row.delta` at an unknown path, is refused (`UnknownDeltaError`): applying
 * only part of a change would leave the held seq claiming a state the bridge does not have.
 * The live-only kinds (`pluginUi.*`, `workflowRun.*`) change no conversation state and are skipped.
 */
export type Row = Record<string, unknown> & { rowId: string | number; kind: string };
export type RowKey = string;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** the paths a `row.delta` appends to (zcode-v4.md §3.7) */
export const ROW_DELTA_PATHS = ["text", "inputText", "output.text", "summaryText"] as const;

export class UnknownDeltaError extends Error {
  constructor(readonly deltaKind: string) {
    super(`ZCode sent a V4 delta of the unknown kind "${deltaKind}"`);
  }
}

export class MalformedFrameError extends Error {}

export function rowKey(rowId: string | number): RowKey {
  return String(rowId);
}

export function asRow(value: unknown): Row | undefined {
  if (!isRecord(value)) return undefined;
  const { rowId, kind } = value;
  if ((typeof rowId !== "string" || rowId === "") && !(typeof rowId === "number" && Number.isFinite(rowId))) return undefined;
  if (typeof kind !== "string" || kind === "") return undefined;
  return value as Row;
}

/** What one applied delta touched: the rows (in order of first touch) and whether the A zone changed. */
export interface Touched {
  rows: RowKey[];
  removed: RowKey[];
  zone: boolean;
  /**
   * the A zone after each `state.updated` op, in order: a frame batches ~30 ms of ops, and each
   * intermediate plan or usage is one ZCode state the legacy stream also reported
   */
  zones?: Record<string, unknown>[];
}

const TERMINAL_HEADER = new Set(["completedSuccess", "completedInterrupted", "failed"]);

export class RowStore {
  logEpoch: string | number | undefined;
  seq = 0;
  revision = 0;
  zone: Record<string, unknown> = {};
  readonly rows = new Map<RowKey, Row>();
  /**
   * Indexes kept as rows come and go, so that what a frame asks of the store costs the same late in
   * a long session as early (no scan of every held row per frame): the turns whose header is
   * terminal, the headers still running (in row order), the tool rows by toolCallId and by the
   * interaction they wait on.
   */
  private readonly endedTurnIds = new Set<string>();
  private readonly runningHeaders = new Map<RowKey, string>();
  private readonly toolsById = new Map<string, RowKey>();
  private readonly toolsByInteraction = new Map<string, RowKey>();
  private readonly subagentsByParent = new Map<string, RowKey>();

  /** the turns whose header is terminal */
  get endedTurns(): ReadonlySet<string> {
    return this.endedTurnIds;
  }

  /** the turn of the last header still running */
  runningTurn(): string | undefined {
    let turnId: string | undefined;
    for (const id of this.runningHeaders.values()) turnId = id;
    return turnId;
  }

  /** the tool row of a toolCallId, or (given one) the one waiting on an interaction */
  toolRow(toolCallId: string | undefined, interactionId?: string): Row | undefined {
    const key =
      (toolCallId ? this.toolsById.get(toolCallId) : undefined) ??
      (interactionId !== undefined ? this.toolsByInteraction.get(interactionId) : undefined);
    return key === undefined ? undefined : this.rows.get(key);
  }

  /** the `subagent` row of a parent tool call (it names the child session) */
  subagentRow(parentToolCallId: string): Row | undefined {
    const key = this.subagentsByParent.get(parentToolCallId);
    return key === undefined ? undefined : this.rows.get(key);
  }

  private set(key: RowKey, row: Row): void {
    const previous = this.rows.get(key);
    if (previous) this.unindex(key, previous);
    this.rows.set(key, row);
    if (row.kind === "turnHeader" && typeof row.turnId === "string") {
      if (typeof row.state === "string" && TERMINAL_HEADER.has(row.state)) this.endedTurnIds.add(row.turnId);
      if (row.state === "running") this.runningHeaders.set(key, row.turnId);
    } else if (row.kind === "toolCall") {
      if (typeof row.toolCallId === "string" && row.toolCallId !== "") this.toolsById.set(row.toolCallId, key);
      if (typeof row.approvalInteractionId === "string") this.toolsByInteraction.set(row.approvalInteractionId, key);
    } else if (row.kind === "subagent" && typeof row.parentToolCallId === "string") {
      this.subagentsByParent.set(row.parentToolCallId, key);
    }
  }

  private unindex(key: RowKey, row: Row): void {
    if (row.kind === "turnHeader" && typeof row.turnId === "string") {
      this.runningHeaders.delete(key);
      this.endedTurnIds.delete(row.turnId);
    } else if (row.kind === "toolCall") {
      if (typeof row.toolCallId === "string" && this.toolsById.get(row.toolCallId) === key) this.toolsById.delete(row.toolCallId);
      if (typeof row.approvalInteractionId === "string" && this.toolsByInteraction.get(row.approvalInteractionId) === key) {
        this.toolsByInteraction.delete(row.approvalInteractionId);
      }
    } else if (row.kind === "subagent" && typeof row.parentToolCallId === "string") {
      if (this.subagentsByParent.get(row.parentToolCallId) === key) this.subagentsByParent.delete(row.parentToolCallId);
    }
  }

  private delete(key: RowKey): void {
    const row = this.rows.get(key);
    if (row) this.unindex(key, row);
    this.rows.delete(key);
  }

  get held(): boolean {
    return this.logEpoch !== undefined;
  }

  /** replace everything with a snapshot (`snapshot.seq` is the new position) */
  replace(snapshot: Record<string, unknown>): void {
    const { rows, logEpoch, seq, revision, ...zone } = snapshot;
    if ((typeof logEpoch !== "string" && typeof logEpoch !== "number") || typeof seq !== "number") {
      throw new MalformedFrameError("a V4 snapshot without logEpoch and seq");
    }
    this.logEpoch = logEpoch;
    this.seq = seq;
    this.revision = typeof revision === "number" ? revision : 0;
    this.zone = zone;
    this.rows.clear();
    this.endedTurnIds.clear();
    this.runningHeaders.clear();
    this.toolsById.clear();
    this.toolsByInteraction.clear();
    this.subagentsByParent.clear();
    const window = isRecord(rows) && Array.isArray(rows.window) ? rows.window : [];
    for (const item of window) {
      const row = asRow(item);
      if (row) this.set(rowKey(row.rowId), row);
    }
  }

  /** apply one delta; throws UnknownDeltaError / MalformedFrameError (the reader then stops trusting the store: it ends or resyncs) */
  apply(delta: unknown, touched: Touched): void {
    // ZCode names a delta's kind `op` (its `conversationDeltaSchema`, v4/delta.ts)
    if (!isRecord(delta) || typeof delta.op !== "string") throw new MalformedFrameError("a V4 delta without an op");
    const op = delta.op;
    switch (op) {
      case "row.appended":
      case "row.upserted": {
        const row = asRow(delta.row);
        if (!row) throw new MalformedFrameError(`a ${op} delta without a valid row`);
        const key = rowKey(row.rowId);
        if (op === "row.upserted" && !this.rows.has(key)) return;
        this.set(key, row);
        touch(touched.rows, key);
        return;
      }
      case "row.removed": {
        const from = delta.fromRowId;
        if (typeof from !== "string" && typeof from !== "number") throw new MalformedFrameError("a row.removed delta without fromRowId");
        let removing = false;
        for (const key of [...this.rows.keys()]) {
          if (key === rowKey(from)) removing = true;
          if (!removing) continue;
          this.delete(key);
          touched.removed.push(key);
        }
        return;
      }
      case "row.delta": {
        const { rowId, path, append } = delta;
        if ((typeof rowId !== "string" && typeof rowId !== "number") || typeof append !== "string") {
          throw new MalformedFrameError("a row.delta without rowId and append");
        }
        if (!(ROW_DELTA_PATHS as readonly unknown[]).includes(path)) throw new UnknownDeltaError(`row.delta ${String(path)}`);
        const key = rowKey(rowId);
        const row = this.rows.get(key);
        if (!row) return; // a row outside the window
        const next: Row = { ...row };
        if (path === "output.text") {
          const output = isRecord(row.output) ? row.output : {};
          next.output = { ...output, text: (typeof output.text === "string" ? output.text : "") + append };
        } else {
          const field = path as string;
          next[field] = (typeof row[field] === "string" ? row[field] : "") + append;
        }
        this.set(key, next);
        touch(touched.rows, key);
        return;
      }
      case "state.updated": {
        if (!isRecord(delta.patch)) throw new MalformedFrameError("a state.updated delta without a patch");
        const { revision, ...patch } = delta.patch;
        if (typeof revision === "number") this.revision = revision;
        this.zone = { ...this.zone, ...patch };
        touched.zone = true;
        (touched.zones ??= []).push(this.zone);
        return;
      }
      default:
        if (op.startsWith("pluginUi.") || op === "workflowRun.updated" || op === "workflowRun.removed") return;
        throw new UnknownDeltaError(op);
    }
  }
}

function touch(list: RowKey[], key: RowKey): void {
  if (!list.includes(key)) list.push(key);
}
