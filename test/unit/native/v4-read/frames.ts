/** Hand-built V4 wire frames for the reader's tests (zcode-v4.md §3.3–§3.8). */
import { crc32Hex } from "../../../../src/native/v4-read/crc32.js";

export const SUB = "sub-1";
export const SESSION = "S1";
export const TOPIC = `conversation/${SESSION}`;

export type Delivery = "initial" | "online" | "recovery";

export function logical(fromSeq: number, toSeq: number, payload: Record<string, unknown>): Record<string, unknown> {
  return { topic: TOPIC, subscriptionId: SUB, fromSeq, toSeq, sentAt: 1, payload };
}

export function complete(
  ordinal: number,
  frame: unknown,
  deliveryKind: Delivery = "online",
  subscriptionId = SUB,
): Record<string, unknown> {
  return {
    wireVersion: 3,
    kind: "complete",
    deliveryKind,
    logicalFrameId: `${subscriptionId}-lf-${ordinal}`,
    logicalFrameOrdinal: ordinal,
    topic: TOPIC,
    subscriptionId,
    frame,
  };
}

/** the logical frame cut into `count` fragments (in order), with its crc32 (or a wrong one) */
export function fragments(
  ordinal: number,
  frame: unknown,
  count: number,
  options: { deliveryKind?: Delivery; badChecksum?: boolean } = {},
): Array<Record<string, unknown>> {
  const bytes = Buffer.from(JSON.stringify(frame), "utf8");
  const size = Math.ceil(bytes.length / count);
  const value = options.badChecksum ? (crc32Hex(bytes) === "00000000" ? "00000001" : "00000000") : crc32Hex(bytes);
  return Array.from({ length: count }, (_, index) => ({
    wireVersion: 3,
    kind: "fragment",
    deliveryKind: options.deliveryKind ?? "online",
    logicalFrameId: `${SUB}-lf-${ordinal}`,
    logicalFrameOrdinal: ordinal,
    topic: TOPIC,
    subscriptionId: SUB,
    fragmentIndex: index,
    fragmentCount: count,
    logicalBytes: bytes.length,
    checksum: { algorithm: "crc32", value },
    dataBase64: bytes.subarray(index * size, (index + 1) * size).toString("base64"),
  }));
}

export function snapshot(seq: number, zone: Record<string, unknown> = {}, rows: unknown[] = [], logEpoch = "E1"): Record<string, unknown> {
  return {
    protocolVersion: 1,
    sessionId: SESSION,
    logEpoch,
    seq,
    revision: seq,
    control: { phase: "completedSuccess", canStop: false, activeWorks: [], lastError: null },
    meta: { title: "", titleSource: "default" },
    config: { provider: "builtin:zai-coding-plan", model: "GLM-5.2", thought: "high", mode: "build", planEnabled: false },
    usage: { contextWindow: null, cumulative: {} },
    queue: { items: [], autoDrain: true },
    pendingInteractions: [],
    plan: null,
    rows: { window: rows, totalCount: rows.length, firstRowId: null },
    ...zone,
  };
}

export const snapshotPayload = (snap: Record<string, unknown>) => ({ kind: "snapshot", snapshot: snap });
export const deltas = (...list: unknown[]) => ({ kind: "deltas", deltas: list });

let rowIds = 0;
export function resetRows(): void {
  rowIds = 0;
}
export function row(kind: string, fields: Record<string, unknown>): Record<string, unknown> {
  rowIds += 1;
  return { rowId: rowIds, kind, turnId: "T1", createdAt: 1, createdAtSeq: 1, ...fields };
}
