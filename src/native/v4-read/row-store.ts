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
const TERMINAL_TOOL = new Set(["success", "error", "cancelled"]);
const UNFINISHED_MARKER = new Set(["running", "pending", "inProgress", "compacting"]);

/**
 * The live rows a store keeps before it lets go of finished ones (see `RowStore` "Bound"). The
 * store holds what the projection may still need: the rows of running turns and those that can
 * still change in place. 512 rows are the last ten or so turns of a busy session (a turn with a
 * few tools is 5 to 20 rows; ZCode's own snapshot window is far smaller) and, at the ≤ 1 MiB a
 * bounded row has when it arrives (docs/zcode-host.md §16.9), never more than the byte bound.
 */
export const MAX_HELD_ROWS = 512;
/**
 * The bytes of held rows (their JSON, the appends of `row.delta` counted as they come) before the
 * store lets go of finished ones: a long answer may grow one row to 4 MiB (§16.9), so the count
 * alone would allow 512 × 4 MiB. 32 MiB keeps a baseline window (≤ 12 MiB) and a running turn's
 * large rows; a process holds one such store per subscribed session (at most 32 attached).
 */
export const MAX_HELD_ROW_BYTES = 32 * 1024 * 1024;
/**
 * Rows that cannot be let go of (still streaming, a tool not finished, a running turn's header)
 * past this many, or past 4 × MAX_HELD_ROW_BYTES, end the subscription (`HeldRowsError`): a host
 * that keeps thousands of rows open at once is not one the bridge can follow within its bounds.
 */
export const MAX_UNFINISHED_ROWS = 4 * MAX_HELD_ROWS;
/**
 * How many let-go rows the store remembers (its id, position, turn and the few fields its indexes
 * need; the projection keeps what it said of each): a later `row.upserted` / `row.appended` of one
 * takes it back and says exactly what changed, a `row.removed` of one still removes the rows after
 * it. Past this many, the oldest are forgotten entirely.
 */
export const EVICTED_ROWS_REMEMBERED = 8 * MAX_HELD_ROWS;

/** ZCode referred to a row the store let go of in a way it cannot apply (see `RowStore` "Bound") */
export class EvictedRowError extends Error {
  constructor(
    readonly rowId: string | number,
    what: string,
  ) {
    super(
      `ZCode ${what} row ${String(rowId)} of this conversation, which zcode-acp no longer holds (it lets go of finished rows to stay bounded).`,
    );
  }
}

/** the store cannot get under its bounds: too many rows are unfinished at once */
export class HeldRowsError extends Error {}

interface Evicted {
  ordinal: number;
  /** the row's kind and the fields the indexes and lookups use (turnId, toolCallId, …), no content */
  stub: Row;
  /** its bytes (counted in the store's bytes while it is remembered) */
  size: number;
  /**
   * a `row.delta` of it is a no-op, not a fault: the row left with a snapshot window (ZCode's own
   * reducer holds only the window; the row's next whole upsert brings it back), or it was let go
   * unfinished because its turn had ended (output after a turn's end is never said)
   */
  deltasIgnored: boolean;
}

/** process-wide counts for `_zcode/diagnostics` (numbers only) */
const stores = new Set<RowStore>();
let peakHeldRows = 0;
let peakHeldBytes = 0;
let evictedTotal = 0;

/** the held rows of every live store of this process, their peak after any frame, and the bounds */
export function heldRowsDiagnostics(): Record<string, number> {
  let heldRows = 0;
  let heldBytes = 0;
  for (const store of stores) {
    heldRows += store.rows.size;
    heldBytes += store.heldBytes;
  }
  return {
    stores: stores.size,
    heldRows,
    heldBytes,
    peakHeldRows,
    peakHeldBytes,
    evictedRows: evictedTotal,
    maxHeldRows: MAX_HELD_ROWS,
    maxHeldBytes: MAX_HELD_ROW_BYTES,
  };
}

/**
 * Bound. The held rows would otherwise grow with the session's length. After each frame has been
 * projected (`evict`), while more than MAX_HELD_ROWS rows or MAX_HELD_ROW_BYTES are held, the
 * oldest finished rows go: first those of ended turns (or of no turn), then finished rows of
 * running turns. Finished: a terminal header or tool, a text that is not streaming, a sub-agent
 * or compaction that is not running, any other kind. A row that can still grow by `row.delta`, a
 * running header and a tool waiting on an interaction are never let go of. What the projection
 * said of a row is kept with its remembered id, so:
 * - `row.upserted` / `row.appended` of a let-go row takes it back (the reference reducer would
 *   update it) and the projection says exactly what changed, nothing twice;
 * - `row.removed` of a let-go row removes the held rows after it (positions are kept);
 * - a tool row looked up by toolCallId or interaction, a sub-agent row by its parent, and an
 *   ended turn, still answer from the remembered fields (no content), so an interaction that
 *   names a let-go tool is still announced with its turn and answered once, never guessed;
 * - `row.delta` of a let-go row cannot be applied (the text is gone) and ends the subscription
 *   (EvictedRowError → NATIVE_PROTOCOL_ERROR: load the session again); it cannot happen for a
 *   finished row in ZCode's model (only streaming rows grow);
 * - a forgotten row (older than the EVICTED_ROWS_REMEMBERED let go of since): with numeric row ids
 *   (ZCode's are session-monotonic) one between the first held and the newest forgotten is known
 *   to be forgotten: any delta naming it ends the subscription, a snapshot window leaves it out
 *   (it was said); other unknown rows are outside the window, as before (no-op).
 */
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
   * interaction they wait on. They cover the remembered let-go rows too.
   */
  private readonly endedTurnIds = new Set<string>();
  private readonly runningHeaders = new Map<RowKey, string>();
  private readonly toolsById = new Map<string, RowKey>();
  private readonly toolsByInteraction = new Map<string, RowKey>();
  /** each held row's position (rows of a conversation keep their order) and size */
  private readonly ordinals = new Map<RowKey, number>();
  private readonly sizes = new Map<RowKey, number>();
  private nextOrdinal = 0;
  private bytes = 0;
  /** the rows let go of, oldest first (bounded: EVICTED_ROWS_REMEMBERED) */
  private readonly evicted = new Map<RowKey, Evicted>();
  /** numeric row ids: the lowest ever held, the highest forgotten */
  private lowestRowId: number | undefined;
  private forgottenThrough: number | undefined;
  /** rows a snapshot's replacement forgot (past the memory's bound): the next `evict` returns them */
  private readonly forgottenByReplace: RowKey[] = [];

  constructor(
    private readonly bounds: { rows: number; bytes: number; remembered: number } = {
      rows: MAX_HELD_ROWS,
      bytes: MAX_HELD_ROW_BYTES,
      remembered: EVICTED_ROWS_REMEMBERED,
    },
  ) {
    stores.add(this);
  }

  /** the store is no longer read: it leaves the diagnostics */
  dispose(): void {
    stores.delete(this);
  }

  /** the bytes of the held rows (their JSON, with the appends since) and of the remembered rows' fields */
  get heldBytes(): number {
    return this.bytes;
  }

  /** the part of `heldBytes` the remembered let-go rows' fields take */
  get rememberedBytes(): number {
    let bytes = 0;
    for (const record of this.evicted.values()) bytes += record.size;
    return bytes;
  }

  /** how many let-go rows are remembered */
  get remembered(): number {
    return this.evicted.size;
  }

  /** whether a row of this key was let go of and is remembered */
  wasEvicted(key: RowKey): boolean {
    return this.evicted.has(key);
  }

  /** the turns whose header is terminal */
  get endedTurns(): ReadonlySet<string> {
    return this.endedTurnIds;
  }

  /** does the turn have a header (running or ended)? */
  hasHeader(turnId: string): boolean {
    if (this.endedTurnIds.has(turnId)) return true;
    for (const id of this.runningHeaders.values()) if (id === turnId) return true;
    return false;
  }

  /** the turn of the last header still running */
  runningTurn(): string | undefined {
    let turnId: string | undefined;
    for (const id of this.runningHeaders.values()) turnId = id;
    return turnId;
  }

  /** the tool row of a toolCallId, or (given one) the one waiting on an interaction (a let-go one: its remembered fields) */
  toolRow(toolCallId: string | undefined, interactionId?: string): Row | undefined {
    const key =
      (toolCallId ? this.toolsById.get(toolCallId) : undefined) ??
      (interactionId !== undefined ? this.toolsByInteraction.get(interactionId) : undefined);
    return key === undefined ? undefined : this.lookup(key);
  }

  /** a held row, else the remembered fields of a let-go one */
  lookup(key: RowKey): Row | undefined {
    return this.rows.get(key) ?? this.evicted.get(key)?.stub;
  }

  private set(key: RowKey, row: Row, size = rowBytes(row)): void {
    const previous = this.rows.get(key);
    if (previous) this.unindex(key, previous);
    this.bytes += size - (this.sizes.get(key) ?? 0);
    this.sizes.set(key, size);
    if (!this.ordinals.has(key)) this.ordinals.set(key, this.nextOrdinal++);
    if (typeof row.rowId === "number" && (this.lowestRowId === undefined || row.rowId < this.lowestRowId)) this.lowestRowId = row.rowId;
    this.rows.set(key, row);
    this.index(key, row);
  }

  private index(key: RowKey, row: Row): void {
    if (row.kind === "turnHeader" && typeof row.turnId === "string") {
      if (typeof row.state === "string" && TERMINAL_HEADER.has(row.state)) this.endedTurnIds.add(row.turnId);
      if (row.state === "running") this.runningHeaders.set(key, row.turnId);
    } else if (row.kind === "toolCall") {
      if (typeof row.toolCallId === "string" && row.toolCallId !== "") this.toolsById.set(row.toolCallId, key);
      if (typeof row.approvalInteractionId === "string") this.toolsByInteraction.set(row.approvalInteractionId, key);
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
    }
  }

  private delete(key: RowKey): void {
    const row = this.rows.get(key);
    if (row) this.unindex(key, row);
    this.rows.delete(key);
    this.ordinals.delete(key);
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  /** a let-go row comes back (ZCode sent it whole): it takes its old position */
  private readmit(key: RowKey, row: Row): void {
    const record = this.evicted.get(key);
    if (!record) return;
    this.unremember(key, record);
    this.ordinals.set(key, record.ordinal);
    this.set(key, row);
  }

  /** a remembered let-go row leaves the memory (taken back, removed, or forgotten) */
  private unremember(key: RowKey, record: Evicted): void {
    this.unindex(key, record.stub);
    this.evicted.delete(key);
    this.bytes -= record.size;
  }

  /** a numeric row id that was held once, let go of and forgotten since */
  private forgotten(rowId: string | number): boolean {
    return (
      typeof rowId === "number" &&
      this.forgottenThrough !== undefined &&
      this.lowestRowId !== undefined &&
      rowId >= this.lowestRowId &&
      rowId <= this.forgottenThrough &&
      !this.rows.has(rowKey(rowId)) &&
      !this.evicted.has(rowKey(rowId))
    );
  }

  /**
   * Let go of the oldest finished rows while over the bounds (after the frame was projected).
   * Returns the keys now forgotten entirely (the projection drops what it kept of them). Throws
   * HeldRowsError when the unfinished rows alone are over MAX_UNFINISHED_ROWS.
   */
  evict(): RowKey[] {
    const forgotten: RowKey[] = this.forgottenByReplace.splice(0);
    if (this.rows.size > this.bounds.rows || this.bytes > this.bounds.bytes) {
      // down to 7/8 of the bound, so that a session at its bound does not scan on every frame
      const rowsGoal = this.bounds.rows - Math.floor(this.bounds.rows / 8);
      const bytesGoal = this.bounds.bytes - Math.floor(this.bounds.bytes / 8);
      const over = (): boolean => this.rows.size > rowsGoal || this.bytes > bytesGoal;
      for (const endedOnly of [true, false]) {
        for (const [key, row] of [...this.rows]) {
          if (!over()) break;
          if (!finished(row, this.endedTurnIds)) continue;
          const turnId = typeof row.turnId === "string" ? row.turnId : undefined;
          const turnEnded = turnId !== undefined && this.endedTurnIds.has(turnId);
          if (endedOnly && turnId !== undefined && !turnEnded) continue;
          forgotten.push(...this.letGo(key, row, !finishedAlone(row, turnEnded)));
        }
        if (!over()) break;
      }
      const unfinished = this.rows.size > this.bounds.rows * 4 || this.bytes > this.bounds.bytes * 4;
      if (unfinished) {
        throw new HeldRowsError(
          `ZCode keeps ${this.rows.size} rows (${this.bytes} bytes) of this conversation unfinished at once, more than zcode-acp holds.`,
        );
      }
    }
    peakHeldRows = Math.max(peakHeldRows, this.rows.size);
    peakHeldBytes = Math.max(peakHeldBytes, this.bytes);
    return forgotten;
  }

  private letGo(key: RowKey, row: Row, deltasIgnored: boolean): RowKey[] {
    const ordinal = this.ordinals.get(key) ?? this.nextOrdinal++;
    this.delete(key);
    this.remember(key, row, ordinal, deltasIgnored);
    evictedTotal++;
    return this.trimRemembered();
  }

  private remember(key: RowKey, row: Row, ordinal: number, deltasIgnored: boolean): void {
    const stub = stubOf(row);
    const size = rowBytes(stub);
    this.evicted.set(key, { ordinal, stub, size, deltasIgnored });
    this.bytes += size;
    this.index(key, stub);
  }

  /** past EVICTED_ROWS_REMEMBERED, the oldest remembered rows are forgotten entirely; returns their keys */
  private trimRemembered(): RowKey[] {
    const forgotten: RowKey[] = [];
    for (const [old, record] of this.evicted) {
      if (this.evicted.size <= this.bounds.remembered) break;
      this.unremember(old, record);
      const id = record.stub.rowId;
      if (typeof id === "number") this.forgottenThrough = Math.max(this.forgottenThrough ?? id, id);
      forgotten.push(old);
    }
    return forgotten;
  }

  get held(): boolean {
    return this.logEpoch !== undefined;
  }

  /**
   * Replace the held state with a snapshot (`snapshot.seq` is the new position). ZCode's wire
   * snapshot carries only its last rows (zcode-v4.md §3.5 `snapshotTailWindowRows`, 60), so a held
   * row missing from the window is not gone:
   * - a row held before the window's first held row (or every held row, when the window holds none
   *   of them) lies before the window: it is remembered as a let-go row (its later `row.upserted`
   *   takes it back, a `row.delta` of it does nothing, as ZCode's reducer does for a row outside its
   *   window). A long running turn's header and its unfinished tools stay known, so the turn's end
   *   and the tools' results are still said;
   * - a held row after the window's first held row that the window lacks was removed in ZCode.
   * The remembered let-go rows stay remembered unless the window brings them back (whole); a
   * forgotten one in the window is left out (it was said). Returns the keys of the rows that left
   * with the window (`outsideWindow`).
   */
  replace(snapshot: Record<string, unknown>): RowKey[] {
    const { rows, logEpoch, seq, revision, ...zone } = snapshot;
    if ((typeof logEpoch !== "string" && typeof logEpoch !== "number") || typeof seq !== "number") {
      throw new MalformedFrameError("a V4 snapshot without logEpoch and seq");
    }
    this.logEpoch = logEpoch;
    this.seq = seq;
    this.revision = typeof revision === "number" ? revision : 0;
    this.zone = zone;
    const window = (isRecord(rows) && Array.isArray(rows.window) ? rows.window : []).flatMap((item) => asRow(item) ?? []);
    const inWindow = new Set(window.map((row) => rowKey(row.rowId)));
    const lost = new Set(window.filter((row) => this.forgotten(row.rowId)).map((row) => rowKey(row.rowId)));
    // the first window row the store knows (held or remembered): what precedes it lies before the window
    let firstKnown: number | undefined;
    for (const row of window) {
      const key = rowKey(row.rowId);
      firstKnown = this.ordinals.get(key) ?? this.evicted.get(key)?.ordinal;
      if (firstKnown !== undefined) break;
    }
    const outside: Array<[RowKey, Row, number]> = [];
    for (const [key, row] of this.rows) {
      if (inWindow.has(key)) continue;
      const ordinal = this.ordinals.get(key) ?? this.nextOrdinal++;
      if (firstKnown === undefined || ordinal < firstKnown) outside.push([key, row, ordinal]);
    }
    // remembered rows after the window's start that the window lacks were removed too
    if (firstKnown !== undefined) {
      for (const [key, record] of [...this.evicted]) if (record.ordinal > firstKnown && !inWindow.has(key)) this.unremember(key, record);
    }
    this.rows.clear();
    this.ordinals.clear();
    this.sizes.clear();
    this.bytes = 0;
    this.endedTurnIds.clear();
    this.runningHeaders.clear();
    this.toolsById.clear();
    this.toolsByInteraction.clear();
    for (const [key, record] of this.evicted) {
      this.index(key, record.stub);
      this.bytes += record.size;
    }
    for (const [key, row, ordinal] of outside) this.remember(key, row, ordinal, true);
    // kept in row order (the memory forgets its oldest first)
    const remembered = [...this.evicted].sort((a, b) => a[1].ordinal - b[1].ordinal);
    this.evicted.clear();
    for (const [key, record] of remembered) this.evicted.set(key, record);
    this.forgottenByReplace.push(...this.trimRemembered());
    for (const row of window) {
      const key = rowKey(row.rowId);
      if (lost.has(key)) continue;
      // a remembered row the window brings back takes the window's order (all window rows are new here)
      const record = this.evicted.get(key);
      if (record) this.unremember(key, record);
      this.set(key, row);
    }
    return outside.map(([key]) => key).filter((key) => this.evicted.has(key));
  }

  /**
   * The turns whose header left with a snapshot window still running (remembered, not held): a
   * snapshot whose A zone says the session is idle tells how they ended (`settleOutside`).
   */
  runningOutside(): Array<{ key: RowKey; turnId: string }> {
    const out: Array<{ key: RowKey; turnId: string }> = [];
    for (const [key, turnId] of this.runningHeaders) if (!this.rows.has(key) && this.evicted.has(key)) out.push({ key, turnId });
    return out;
  }

  /** a remembered running header ended in this state (ZCode's A zone said so): its turn has ended */
  settleOutside(key: RowKey, state: string): void {
    const record = this.evicted.get(key);
    if (!record || this.rows.has(key)) return;
    this.unindex(key, record.stub);
    record.stub = { ...record.stub, state };
    this.index(key, record.stub);
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
        if (this.forgotten(row.rowId)) throw new EvictedRowError(row.rowId, "changed");
        if (this.evicted.has(key)) this.readmit(key, row);
        else if (op === "row.upserted" && !this.rows.has(key)) return;
        else this.set(key, row);
        touch(touched.rows, key);
        return;
      }
      case "row.removed": {
        const from = delta.fromRowId;
        if (typeof from !== "string" && typeof from !== "number") throw new MalformedFrameError("a row.removed delta without fromRowId");
        const at = this.ordinals.get(rowKey(from)) ?? this.evicted.get(rowKey(from))?.ordinal;
        if (at === undefined) {
          // a row outside the window (nothing held is after it); a forgotten one: the rows after it are unknown
          if (this.forgotten(from)) throw new EvictedRowError(from, "removed (with every later row)");
          return;
        }
        for (const [key, ordinal] of [...this.ordinals]) {
          if (ordinal < at) continue;
          this.delete(key);
          touched.removed.push(key);
        }
        for (const [key, record] of [...this.evicted]) {
          if (record.ordinal < at) continue;
          this.unremember(key, record);
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
        if (!row) {
          const record = this.evicted.get(key);
          if (record?.deltasIgnored) return; // a row outside the window, or one of an ended turn (see Evicted)
          if (record || this.forgotten(rowId)) throw new EvictedRowError(rowId, `appended to ${String(path)} of`);
          return; // a row outside the window
        }
        const next: Row = { ...row };
        if (path === "output.text") {
          const output = isRecord(row.output) ? row.output : {};
          next.output = { ...output, text: (typeof output.text === "string" ? output.text : "") + append };
        } else {
          const field = path as string;
          next[field] = (typeof row[field] === "string" ? row[field] : "") + append;
        }
        this.set(key, next, (this.sizes.get(key) ?? 0) + Buffer.byteLength(append, "utf8"));
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

function rowBytes(row: Row): number {
  return Buffer.byteLength(JSON.stringify(row), "utf8");
}

/**
 * a row the projection has said all of: nothing more can grow in it by `row.delta`, or its turn
 * has ended (a tool left `running` or a text left `streaming` under a terminal header says nothing
 * more: the projection ignores a finished turn's late output; let go, its deltas are no-ops)
 */
function finished(row: Row, endedTurns: ReadonlySet<string>): boolean {
  const turnEnded = typeof row.turnId === "string" && endedTurns.has(row.turnId);
  if (turnEnded && row.kind !== "timelineMarker") return true;
  return finishedAlone(row, turnEnded);
}

/** finished by its own state (`turnEnded`: for a timeline marker, which has no end of its own) */
function finishedAlone(row: Row, turnEnded = false): boolean {
  switch (row.kind) {
    case "turnHeader":
      return typeof row.state === "string" && TERMINAL_HEADER.has(row.state);
    case "assistantText":
    case "reasoning":
      return row.state !== "streaming";
    case "toolCall":
      return typeof row.status === "string" && TERMINAL_TOOL.has(row.status);
    case "subagent":
      return row.status !== "running";
    case "timelineMarker": {
      // a compaction marker's status is in its `marker` object (rows.ts timelineMarkerPayloadSchema)
      const marker = row.marker;
      const status = typeof marker === "object" && marker !== null ? (marker as Record<string, unknown>).status : row.status;
      return turnEnded && !(typeof status === "string" && UNFINISHED_MARKER.has(status));
    }
    default:
      return true;
  }
}

/** what is remembered of a let-go row: its kind, turn and the fields the indexes and lookups read */
function stubOf(row: Row): Row {
  const stub: Row = { rowId: row.rowId, kind: row.kind };
  for (const field of [
    "turnId",
    "state",
    "status",
    "toolCallId",
    "approvalInteractionId",
    "parentToolCallId",
    "childSessionId",
    "sourceCommandId",
  ]) {
    if (typeof row[field] === "string") stub[field] = row[field];
  }
  return stub;
}
