/**
 * A small V4 conversation reader for simulator tests (shared/reference/zcode-v4.md §3.3–§3.5): it
 * collects the wire frames of onDynamicConversationFrame, reassembles fragments (checking the CRC32
 * with an independent implementation: zlib's when Node has it), keeps the held snapshot of one
 * subscription and applies deltas as ZCode's reference reducer does. It never resyncs by itself:
 * tests call `resync` and see the gap as `gaps`.
 */
import * as zlib from "node:zlib";
import { randomUUID } from "node:crypto";
import type { SimRelease } from "../../../fixtures/sim-install.js";
import type { Any, Connection } from "./host-harness.js";
import { newInstall, startHost, WS, type SessionRig } from "./session-helpers.js";
import { CLIENT, handshake } from "./v4-helpers.js";
import { waitUntil } from "./host-harness.js";

/** CRC-32 (IEEE) — zlib's when present (Node ≥ 20.15 / 22.2), else a bitwise loop (not the simulator's table). */
export function crc32Hex(bytes: Buffer): string {
  const native = (zlib as Any).crc32 as ((data: Buffer) => number) | undefined;
  let value: number;
  if (typeof native === "function") value = native(bytes);
  else {
    let crc = ~0;
    for (const byte of bytes) {
      crc ^= byte;
      for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
    }
    value = ~crc >>> 0;
  }
  return (value >>> 0).toString(16).padStart(8, "0");
}

function appendToRow(row: Any, path: string, append: string): Any {
  if (path === "text" && (row.kind === "assistantText" || row.kind === "reasoning")) return { ...row, text: row.text + append };
  if (path === "inputText" && row.kind === "toolCall") return { ...row, inputText: row.inputText + append };
  if (path === "output.text" && row.kind === "toolCall" && row.output)
    return { ...row, output: { ...row.output, text: row.output.text + append } };
  if (path === "summaryText" && row.kind === "subagent") return { ...row, summaryText: row.summaryText + append };
  return row;
}

/** ZCode's applyConversationDelta (v4/apply.ts), as zcode-v4.md §3.7 describes it. */
export function applyDelta(snapshot: Any, delta: Any): Any {
  const rows = snapshot.rows;
  switch (delta.op) {
    case "row.appended":
      return {
        ...snapshot,
        rows: {
          ...rows,
          window: [...rows.window, delta.row],
          totalCount: rows.totalCount + 1,
          firstRowId: rows.firstRowId ?? delta.row.rowId,
        },
      };
    case "row.upserted": {
      const index = rows.window.findIndex((r: Any) => r.rowId === delta.row.rowId);
      if (index < 0) return snapshot;
      const window = [...rows.window];
      window[index] = delta.row;
      return { ...snapshot, rows: { ...rows, window } };
    }
    case "row.removed":
      return { ...snapshot, rows: { ...rows, window: rows.window.filter((r: Any) => r.rowId < delta.fromRowId) } };
    case "row.delta": {
      const index = rows.window.findIndex((r: Any) => r.rowId === delta.rowId);
      if (index < 0) return snapshot;
      const window = [...rows.window];
      window[index] = appendToRow(window[index], delta.path, delta.append);
      return { ...snapshot, rows: { ...rows, window } };
    }
    case "state.updated":
      return { ...snapshot, ...delta.patch };
    default:
      return snapshot;
  }
}

export class FrameReader {
  /** every wire frame as it arrived */
  readonly wire: Any[] = [];
  /** every logical frame (complete, or reassembled from its fragments), with its wire fields */
  readonly logical: Array<{ deliveryKind: string; ordinal: number; subscriptionId: string; fragments: number; frame: Any }> = [];
  /** frames of the current subscription that did not continue the held seq: {fromSeq, held} */
  readonly gaps: Array<{ fromSeq: number; held: number }> = [];
  subscriptionId: string | undefined;
  held: Any;
  private assemblies = new Map<string, { parts: string[]; first: Any }>();
  private wakers = new Set<() => void>();
  private lastOrdinal = 0;
  private awaitingRecovery = false;
  private subscription: { dispose(): void };

  constructor(
    readonly conn: Connection,
    readonly workspacePath = WS,
  ) {
    this.subscription = conn.agent.onDynamicConversationFrame({ workspacePath })((frame: Any) => {
      this.wire.push(frame);
      this.onWire(frame);
      for (const wake of [...this.wakers]) wake();
    });
  }

  private onWire(frame: Any): void {
    if (frame.kind === "complete") {
      this.onLogical(frame, frame.frame, 0);
      return;
    }
    let assembly = this.assemblies.get(frame.logicalFrameId);
    if (!assembly) {
      assembly = { parts: [], first: frame };
      this.assemblies.set(frame.logicalFrameId, assembly);
    }
    assembly.parts[frame.fragmentIndex] = frame.dataBase64;
    if (assembly.parts.filter((p) => p !== undefined).length < frame.fragmentCount) return;
    this.assemblies.delete(frame.logicalFrameId);
    const bytes = Buffer.concat(assembly.parts.map((p) => Buffer.from(p, "base64")));
    if (bytes.length !== frame.logicalBytes)
      throw new Error(`fragments of ${frame.logicalFrameId}: ${bytes.length} bytes, not ${frame.logicalBytes}`);
    if (crc32Hex(bytes) !== frame.checksum.value) throw new Error(`fragments of ${frame.logicalFrameId}: crc32 mismatch`);
    this.onLogical(frame, JSON.parse(bytes.toString("utf8")), frame.fragmentCount);
  }

  private onLogical(wire: Any, frame: Any, fragments: number): void {
    this.logical.push({
      deliveryKind: wire.deliveryKind,
      ordinal: wire.logicalFrameOrdinal,
      subscriptionId: wire.subscriptionId,
      fragments,
      frame,
    });
    if (this.subscriptionId !== undefined && wire.subscriptionId !== this.subscriptionId) return;
    if (wire.logicalFrameOrdinal <= this.lastOrdinal) return;
    if (this.subscriptionId === undefined) return; // early frames are replayed by bind()
    this.lastOrdinal = wire.logicalFrameOrdinal;
    if (this.awaitingRecovery && wire.deliveryKind !== "recovery") return;
    this.apply(frame);
    if (wire.deliveryKind === "recovery") this.awaitingRecovery = false;
  }

  private apply(frame: Any): void {
    if (frame.payload.kind === "snapshot") {
      if (frame.fromSeq !== 0 || frame.payload.snapshot.seq !== frame.toSeq) throw new Error("snapshot frame with a wrong interval");
      this.held = frame.payload.snapshot;
      return;
    }
    if (!this.held || frame.fromSeq !== this.held.seq || frame.toSeq < frame.fromSeq) {
      this.gaps.push({ fromSeq: frame.fromSeq, held: this.held?.seq ?? -1 });
      return;
    }
    let next = this.held;
    for (const delta of frame.payload.deltas) next = applyDelta(next, delta);
    this.held = { ...next, seq: frame.toSeq };
  }

  /** Take the subscription id of an ack and replay the frames that arrived before it. */
  bind(subscriptionId: string): void {
    this.subscriptionId = subscriptionId;
    this.lastOrdinal = 0;
    this.held = undefined;
    for (const entry of this.logical.filter((l) => l.subscriptionId === subscriptionId).sort((a, b) => a.ordinal - b.ordinal)) {
      if (entry.ordinal <= this.lastOrdinal) continue;
      this.lastOrdinal = entry.ordinal;
      this.apply(entry.frame);
    }
    for (const wake of [...this.wakers]) wake();
  }

  async subscribe(sessionId: string, extra: Record<string, unknown> = {}): Promise<Any> {
    const answer = await this.conn.agent.subscribeConversationV4({ workspacePath: this.workspacePath, sessionId, ...extra });
    this.bind(answer.ack.subscriptionId);
    return answer;
  }

  async resync(forceSnapshot = false): Promise<Any> {
    this.awaitingRecovery = true;
    const base = this.held ? { logEpoch: this.held.logEpoch, seq: this.held.seq } : null;
    return this.conn.agent.resyncConversationV4({
      workspacePath: this.workspacePath,
      subscriptionId: this.subscriptionId,
      base,
      forceSnapshot,
    });
  }

  rows(): Any[] {
    return this.held?.rows.window ?? [];
  }

  /** Wait until `check` returns a value for the reader (re-checked on every wire frame). */
  waitFor<T>(check: (reader: FrameReader) => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
    return waitUntil(
      () => check(this) || undefined,
      (w) => {
        this.wakers.add(w);
        return () => this.wakers.delete(w);
      },
      timeoutMs,
      what,
    );
  }

  /** Wait until the held conversation is idle with a finished turn header for every turn so far. */
  idleAfter(turns: number, timeoutMs = 5000): Promise<Any> {
    return this.waitFor(
      (r) => {
        const headers = r.rows().filter((row) => row.kind === "turnHeader");
        return (
          r.held?.control.phase !== "running" &&
          headers.length >= turns &&
          headers.every((h) => h.state !== "running") &&
          r.held?.queue.items.length === 0 &&
          r.held
        );
      },
      `idle after ${turns} turn(s)`,
      timeoutMs,
    );
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

export interface V4Rig extends Pick<SessionRig, "install" | "host" | "conn" | "sessionId"> {
  reader: FrameReader;
}

/** A host, a V4 handshake, a session and a frame listener (no legacy subscription: works on 4.0.0). */
export async function v4Rig(options: { release?: SimRelease; profile?: Record<string, unknown> } = {}): Promise<V4Rig> {
  const install = await newInstall(options.release ?? "3.12.3");
  const host = startHost(install, options.profile ? { profile: options.profile } : {});
  const conn = await host.connect();
  await conn.agent.initialize({ workspacePath: WS });
  const snapshot = await conn.agent.createSession({ workspacePath: WS });
  const rig = { install, host, conn, sessionId: snapshot.session.sessionId as string };
  await handshake(rig as unknown as SessionRig);
  return { ...rig, reader: new FrameReader(conn) };
}

/** Send one V4 command of the rig's session. */
export function v4Command(
  rig: Pick<V4Rig, "conn" | "sessionId">,
  type: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Any> {
  const envelope = { commandId: randomUUID(), clientId: CLIENT, sessionId: rig.sessionId, type, payload, issuedAt: Date.now(), ...extra };
  return rig.conn.agent.sendConversationCommandV4({ workspacePath: WS, envelope }).then((ack: Any) => ({ ...ack, envelope }));
}

export const rowsOf = (reader: FrameReader, kind: string): Any[] => reader.rows().filter((row) => row.kind === kind);
