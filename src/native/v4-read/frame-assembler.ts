/**
 * The V4 wire frame assembler of one conversation subscription (zcode-v4.md §3.3): physical
 * frames in, logical frames out. A physical frame is `complete` (it carries the logical frame) or
 * a `fragment` of one (base64 data, reassembled in index order, checked against its byte count and
 * CRC-32, decoded as UTF-8, parsed as JSON). Ordinals grow per subscription: an ordinal not newer
 * than the last delivered one is a duplicate and dropped. A `recovery` frame supersedes a
 * half-assembled older frame; any other frame that overtakes an unfinished one is a gap.
 *
 * Faults are answers, not throws: the reader resynchronises on a fault (§3.5 rule 5). Limits are
 * ZCode's own (`PROTOCOL_V4_LIMITS`): 1024 fragments, 16 MiB per logical frame, 32 concurrent
 * assemblies, 32 MiB staged, 30 s per assembly.
 */
import { crc32Hex } from "./crc32.js";

export const V4_WIRE_VERSION = 3;
/** the frame the bootstrap sends in place of one it could not reassemble or bound (never ZCode's) */
export const ZCODE_ACP_FAULT = "zcodeAcpFault";
export const ASSEMBLY_LIMITS = Object.freeze({
  maxFragments: 1024,
  maxLogicalBytes: 16 * 1024 * 1024,
  /** decoded bytes of one fragment (ZCode's physical frame limit is 1 MiB; the bootstrap splits below it) */
  maxFragmentBytes: 1024 * 1024,
  maxAssemblies: 32,
  maxStagedBytes: 32 * 1024 * 1024,
  timeoutMs: 30_000,
});

export type DeliveryKind = "initial" | "online" | "recovery";
const DELIVERY_KINDS = new Set<string>(["initial", "online", "recovery"]);

export type AssemblyResult =
  | { kind: "frame"; deliveryKind: DeliveryKind; ordinal: number; subscriptionId: string; frame: unknown }
  | { kind: "none" }
  /**
   * `deliveryKind`: that of the frame the fault is about, when it is known (a resync's answer that
   * cannot be used ends the subscription); `timeout`: an assembly did not complete in time
   */
  | { kind: "fault"; reason: string; deliveryKind?: DeliveryKind; code?: string; timeout?: true };

interface Assembly {
  ordinal: number;
  deliveryKind: DeliveryKind;
  subscriptionId: string;
  count: number;
  logicalBytes: number;
  checksum: string;
  parts: Map<number, Uint8Array>;
  staged: number;
  startedAt: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const HEX8 = /^[0-9a-fA-F]{8}$/;

export class FrameAssembler {
  private lastOrdinal = 0;
  private readonly assemblies = new Map<string, Assembly>();
  private staged = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** unfinished assemblies (a reader arms a timer while there are any) */
  get pending(): number {
    return this.assemblies.size;
  }

  /**
   * drop assemblies older than the timeout; a fault if any was dropped (of delivery kind `recovery`
   * when one of them was a resync's answer, with `timeout` set)
   */
  expire(): AssemblyResult {
    const limit = this.now() - ASSEMBLY_LIMITS.timeoutMs;
    let expired = 0;
    let recovery = false;
    for (const [id, assembly] of this.assemblies) {
      if (assembly.startedAt > limit) continue;
      if (assembly.deliveryKind === "recovery") recovery = true;
      this.drop(id);
      expired++;
    }
    if (expired === 0) return { kind: "none" };
    return {
      kind: "fault",
      reason: `${expired} fragmented frame(s) did not complete within 30 s`,
      timeout: true,
      ...(recovery ? { deliveryKind: "recovery" as const } : {}),
    };
  }

  /** forget everything half-assembled (after a resync request: only the recovery counts) */
  reset(): void {
    this.assemblies.clear();
    this.staged = 0;
  }

  push(physical: unknown): AssemblyResult {
    const timedOut = this.expire();
    if (timedOut.kind === "fault") return timedOut;
    if (!isRecord(physical)) return fault("a wire frame is not an object");
    if (physical.wireVersion !== V4_WIRE_VERSION) return fault(`a wire frame of version ${JSON.stringify(physical.wireVersion)}`);
    const ordinal = physical.logicalFrameOrdinal;
    if (!isCount(ordinal) || ordinal < 1) return fault("a wire frame without a valid logicalFrameOrdinal");
    const deliveryKind = physical.deliveryKind;
    if (typeof deliveryKind !== "string" || !DELIVERY_KINDS.has(deliveryKind)) {
      return fault(`a wire frame of delivery kind ${JSON.stringify(deliveryKind)}`);
    }
    const subscriptionId = typeof physical.subscriptionId === "string" ? physical.subscriptionId : "";
    if (ordinal <= this.lastOrdinal) return { kind: "none" }; // a duplicate or an older frame
    if (physical.kind === ZCODE_ACP_FAULT) {
      // the bootstrap could not reassemble or bound this frame (src/runtime/conversation-frames.js):
      // its ordinal is used up, and the reader resynchronises (or ends, if it was a recovery)
      this.lastOrdinal = ordinal;
      const detail = isRecord(physical.fault) ? physical.fault : {};
      const code = typeof detail.code === "string" ? detail.code.slice(0, 64) : "CHANNEL_PROTOCOL";
      const message = typeof detail.message === "string" ? detail.message.slice(0, 500) : "no reason given";
      return {
        kind: "fault",
        reason: `the bootstrap could not pass frame ${ordinal} on (${code}: ${message})`,
        deliveryKind: deliveryKind as DeliveryKind,
        code,
      };
    }
    if (physical.kind === "complete") {
      if (!("frame" in physical)) return fault("a complete wire frame without its frame");
      return this.deliver(ordinal, deliveryKind as DeliveryKind, subscriptionId, physical.frame);
    }
    if (physical.kind !== "fragment") return fault(`a wire frame of kind ${JSON.stringify(physical.kind)}`);
    return this.fragment(physical, ordinal, deliveryKind as DeliveryKind, subscriptionId);
  }

  private deliver(ordinal: number, deliveryKind: DeliveryKind, subscriptionId: string, frame: unknown): AssemblyResult {
    // an older frame still assembling is overtaken: a recovery supersedes it, anything else is a gap
    let overtaken = false;
    for (const [id, assembly] of this.assemblies) {
      if (assembly.ordinal >= ordinal) continue;
      this.drop(id);
      overtaken = true;
    }
    this.lastOrdinal = ordinal;
    if (overtaken && deliveryKind !== "recovery") return fault(`frame ${ordinal} overtook an unfinished fragmented frame`, deliveryKind);
    return { kind: "frame", deliveryKind, ordinal, subscriptionId, frame };
  }

  private fragment(physical: Record<string, unknown>, ordinal: number, deliveryKind: DeliveryKind, subscriptionId: string): AssemblyResult {
    const { logicalFrameId: id, fragmentIndex: index, fragmentCount: count, logicalBytes, checksum, dataBase64 } = physical;
    if (typeof id !== "string" || id === "") return fault("a fragment without a logicalFrameId");
    if (!isCount(count) || count < 1 || count > ASSEMBLY_LIMITS.maxFragments) return fault(`a fragment count of ${String(count)}`);
    if (!isCount(index) || index >= count) return fault(`a fragment index of ${String(index)} of ${count}`);
    if (!isCount(logicalBytes) || logicalBytes > ASSEMBLY_LIMITS.maxLogicalBytes)
      return fault(`a logical frame of ${String(logicalBytes)} bytes`);
    if (!isRecord(checksum) || checksum.algorithm !== "crc32" || typeof checksum.value !== "string" || !HEX8.test(checksum.value)) {
      return fault("a fragment without a crc32 checksum");
    }
    if (typeof dataBase64 !== "string" || dataBase64.length % 4 !== 0 || !BASE64.test(dataBase64))
      return fault("a fragment whose data is not base64");
    const data = Buffer.from(dataBase64, "base64");
    if (data.length > ASSEMBLY_LIMITS.maxFragmentBytes) return fault(`a fragment of ${data.length} bytes`);
    let assembly = this.assemblies.get(id);
    if (!assembly) {
      if (this.assemblies.size >= ASSEMBLY_LIMITS.maxAssemblies) return this.overflow("too many fragmented frames at once");
      assembly = {
        ordinal,
        deliveryKind,
        subscriptionId,
        count,
        logicalBytes,
        checksum: checksum.value.toLowerCase(),
        parts: new Map(),
        staged: 0,
        startedAt: this.now(),
      };
      this.assemblies.set(id, assembly);
    } else if (
      assembly.ordinal !== ordinal ||
      assembly.count !== count ||
      assembly.logicalBytes !== logicalBytes ||
      assembly.checksum !== checksum.value.toLowerCase()
    ) {
      this.drop(id);
      return fault(`the fragments of ${id} disagree about their frame`, deliveryKind);
    }
    if (assembly.parts.has(index)) return { kind: "none" }; // a repeated fragment
    if (assembly.staged + data.length > logicalBytes) {
      this.drop(id);
      return fault(`the fragments of ${id} exceed their ${logicalBytes} bytes`, deliveryKind);
    }
    if (this.staged + data.length > ASSEMBLY_LIMITS.maxStagedBytes) return this.overflow("more than 32 MiB of fragments staged");
    assembly.parts.set(index, data);
    assembly.staged += data.length;
    this.staged += data.length;
    if (assembly.parts.size < count) return { kind: "none" };
    this.drop(id);
    const bytes = Buffer.concat([...Array(count).keys()].map((i) => assembly.parts.get(i)!));
    if (bytes.length !== logicalBytes) return fault(`frame ${id} has ${bytes.length} bytes, not ${logicalBytes}`, assembly.deliveryKind);
    if (crc32Hex(bytes) !== assembly.checksum) return fault(`frame ${id} fails its crc32 checksum`, assembly.deliveryKind);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      return fault(`frame ${id} is not UTF-8`, assembly.deliveryKind);
    }
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return fault(`frame ${id} is not JSON`, assembly.deliveryKind);
    }
    if (ordinal <= this.lastOrdinal) return { kind: "none" };
    return this.deliver(ordinal, assembly.deliveryKind, assembly.subscriptionId, frame);
  }

  private overflow(reason: string): AssemblyResult {
    this.reset();
    return fault(reason);
  }

  private drop(id: string): void {
    const assembly = this.assemblies.get(id);
    if (!assembly) return;
    this.staged -= assembly.staged;
    this.assemblies.delete(id);
  }
}

function fault(reason: string, deliveryKind?: DeliveryKind): AssemblyResult {
  return deliveryKind === undefined ? { kind: "fault", reason } : { kind: "fault", reason, deliveryKind };
}
