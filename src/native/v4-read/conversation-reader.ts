/**
 * One session's V4 conversation subscription (zcode-v4.md §3.1–§3.5, §9.3): the workspace's frame
 * listener is joined first (./frame-listener.ts: one per workspace, frames may precede the ack),
 * then `subscribeConversationV4`; the listener hands this reader the frames of its subscription
 * and, before the ack names it, those of its topic (held, bounded in frames and bytes, replayed
 * once the ack names the subscription; other subscriptions' early frames are dropped then).
 * Each physical frame goes through the assembler (./frame-assembler.ts); each logical frame is
 * sequenced against the held position:
 *
 * - a snapshot (`fromSeq 0`, `snapshot.seq == toSeq`) replaces the held state: the first one is the
 *   baseline, a later `online` one (ZCode's answer to a slow subscriber) a replacement, unless its
 *   `logEpoch` differs or its seq went back (then a resync). Rows that left with its window stay
 *   known (./row-store.ts `replace`), so a long turn's end is still said;
 * - deltas must start where the held state ends (`fromSeq == seq`, `toSeq >= fromSeq`), else resync;
 * - an assembly fault or timeout is a resync; while a resync runs only its `recovery` frame counts:
 *   a recovery frame that cannot be used ends the subscription, a fault that may have been the
 *   recovery's (a timeout, an unattributed fault) asks again once, and the whole wait is bounded
 *   (RECOVERY_WAIT_MS): the reader never waits deaf.
 *
 * A delta of an unknown kind ends the subscription with NATIVE_PROTOCOL_ERROR (./row-store.ts). The
 * projection (./projection.ts) turns each applied frame into the session model's events.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import { BridgeError, describeError, isBridgeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";
import { FrameAssembler, ASSEMBLY_LIMITS, type DeliveryKind } from "./frame-assembler.js";
import { attachFrames } from "./frame-listener.js";
import { ConversationProjection } from "./projection.js";
import { SubagentConversations } from "./subagent-conversations.js";
import { EvictedRowError, HeldRowsError, MalformedFrameError, RowStore, UnknownDeltaError, type Touched } from "./row-store.js";

/**
 * frames of its topic held while the subscribe call has not named its subscription yet, and their
 * bytes (ZCode's facade stages pre-ack frames within the same 1024 frames / 32 MiB, zcode-v4.md §3.2)
 */
export const EARLY_FRAMES_KEPT = 1024;
export const EARLY_BYTES_KEPT = 32 * 1024 * 1024;
/**
 * How long a resync waits for its recovery frame: the resync call's own bound (30 s), then a
 * recovery snapshot of up to 12 MiB in fragments (each assembly has 30 s), with room for the
 * channel's backpressure pauses. Past it the subscription ends (HOST_TIMEOUT).
 */
export const RECOVERY_WAIT_MS = 120_000;
/** resyncs asked for one recovery: the first, and once more after a fault that may have been its frame */
const RECOVERY_ASKS = 2;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

export interface ReaderOptions {
  host: HostClient;
  logger: Logger;
  /** the bridge's seq the first event follows; told of each new last seq */
  startSeq: number;
  onSeq(seq: number): void;
  /** the line's event normalisation (a v2 snapshot → the session model) */
  normalise(event: unknown): unknown;
  now?: () => number;
  /**
   * follow the conversation's running subagents through their own conversations and pass their
   * tools on into this one's events (./subagent-conversations.ts); a session's reader does, a
   * child's does not
   */
  followSubagents?: boolean;
  /**
   * the first snapshot's rows are news, said as events (a subagent's conversation, followed from
   * its start); else they are history, which `readHistory` says
   */
  freshBaseline?: boolean;
}

function protocolError(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("NATIVE_PROTOCOL_ERROR", message, details ? { details } : {});
}

export class ConversationReader {
  private subscriptionId: string | undefined;
  private early: unknown[] | undefined = [];
  private earlyBytes = 0;
  /** the listener lost frames before the subscribe answer: a resync follows the bind */
  private lostEarly = false;
  private readonly assembler: FrameAssembler;
  private readonly store = new RowStore();
  private readonly projection: ConversationProjection;
  private awaitingRecovery = false;
  /** resyncs asked for the awaited recovery */
  private recoveryAsks = 0;
  /** the awaited recovery is a fresh snapshot (no base) */
  private recoveryForced = false;
  private recoveryTimer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  readonly topic: string;
  /** called once when the reader ends on its own (a fatal fault): releases the subscription */
  onFatal: (() => void) | undefined;
  /** the running subagents followed (a session's reader only) */
  children: SubagentConversations | undefined;

  constructor(
    private readonly ref: SessionRef,
    private readonly sink: HostEventSink,
    private readonly options: ReaderOptions,
  ) {
    this.assembler = new FrameAssembler(options.now);
    this.projection = new ConversationProjection(ref, options.logger, options.startSeq, options.now);
    this.projection.freshBaseline = options.freshBaseline === true;
    this.topic = `conversation/${ref.sessionId}`;
  }

  /**
   * Events made outside the projection (a followed subagent's tools): numbered into this
   * conversation's order and handed to the sink, as a frame's events are.
   */
  inject(events: unknown[]): void | Promise<void> {
    if (this.ended) return;
    return this.emit(this.projection.number(events));
  }

  /** the held rows and their bytes, for tests */
  get held(): { rows: number; bytes: number; remembered: number } {
    return { rows: this.store.rows.size, bytes: this.store.heldBytes, remembered: this.store.remembered };
  }

  /** the held position, for tests and diagnostics */
  get position(): { logEpoch: string | number | undefined; seq: number; revision: number } {
    return { logEpoch: this.store.logEpoch, seq: this.store.seq, revision: this.store.revision };
  }

  /** The ack named the subscription: early frames of it are applied now. */
  bind(subscriptionId: string): void {
    this.subscriptionId = subscriptionId;
    const early = this.early ?? [];
    this.early = undefined;
    this.earlyBytes = 0;
    for (const frame of early) void this.physical(frame);
    if (this.lostEarly) this.lost();
  }

  /** the workspace's listener was replaced after it lost frames (./frame-listener.ts): resynchronise */
  lost(): void {
    if (this.ended) return;
    if (this.subscriptionId === undefined) {
      this.lostEarly = true;
      return;
    }
    this.lostEarly = false;
    const reason = "the frame listener lost frames (channel overflow)";
    // the awaited recovery itself may be lost: it is asked again (once)
    if (this.awaitingRecovery) this.askAgain(reason);
    else this.resync(reason, !this.store.held);
  }

  /** the reader ended (a fatal fault, its listener's end, or its release) */
  get done(): boolean {
    return this.ended;
  }

  /** one physical wire frame from onDynamicConversationFrame */
  physical(raw: unknown): void | Promise<void> {
    if (this.ended) return;
    if (this.subscriptionId === undefined) return this.hold(raw);
    if (!isRecord(raw) || raw.subscriptionId !== this.subscriptionId) return; // another subscription's frame
    if (typeof raw.topic === "string" && raw.topic !== this.topic) return;
    const result = this.assembler.push(raw);
    this.armTimer();
    if (result.kind === "none") return;
    if (result.kind === "fault") {
      if (!this.awaitingRecovery) return this.fault(result.reason);
      // a resync's own answer that cannot be used ends the subscription (it would only be asked again)
      if (result.deliveryKind === "recovery" && result.timeout !== true) {
        return this.fatal(
          new BridgeError(
            result.code === "FRAME_TOO_LARGE" ? "FRAME_TOO_LARGE" : "NATIVE_PROTOCOL_ERROR",
            `ZCode's recovery frame is unusable: ${result.reason}.`,
          ),
        );
      }
      // a live frame's fault while the recovery is awaited changes nothing (only the recovery counts)
      if (result.deliveryKind === "initial" || result.deliveryKind === "online") return;
      // it may have been the recovery's (a timeout, a fault of no known frame): ask once more, then end
      return this.askAgain(result.reason);
    }
    return this.logical(result.deliveryKind, result.frame);
  }

  /** a frame of its topic before the subscribe answer (bounded in frames and bytes) */
  private hold(raw: unknown): void {
    if (!this.early) return;
    const bytes = frameBytes(raw);
    if (this.early.length >= EARLY_FRAMES_KEPT || this.earlyBytes + bytes > EARLY_BYTES_KEPT) {
      return this.fatal(
        protocolError(
          "ZCode sent more frames of this conversation before its subscribe answer than zcode-acp holds " +
            `(${EARLY_FRAMES_KEPT} frames, ${EARLY_BYTES_KEPT} bytes).`,
        ),
      );
    }
    this.early.push(raw);
    this.earlyBytes += bytes;
  }

  /** the frame listener ended (host exit, channel failure) */
  end(error: BridgeError | null): void {
    if (this.ended) return;
    this.stop();
    this.sink.onEnd(error);
  }

  /** the subscription is being disposed: nothing more is delivered */
  stop(): void {
    this.ended = true;
    this.early = undefined;
    void this.children?.dispose();
    this.store.dispose();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.clearRecoveryTimer();
  }

  private logical(deliveryKind: DeliveryKind, frame: unknown): void | Promise<void> {
    if (this.awaitingRecovery && deliveryKind !== "recovery") return;
    const recovery = deliveryKind === "recovery";
    if (recovery) {
      this.awaitingRecovery = false;
      this.recoveryAsks = 0;
      this.clearRecoveryTimer();
    }
    const bad = (reason: string): void =>
      recovery ? this.fatal(protocolError(`ZCode's recovery frame is unusable: ${reason}.`)) : this.fault(reason);
    if (!isRecord(frame) || !isCount(frame.fromSeq) || !isCount(frame.toSeq) || frame.toSeq < frame.fromSeq || !isRecord(frame.payload)) {
      return bad("a logical frame without a valid (fromSeq, toSeq] and payload");
    }
    const { fromSeq, toSeq, payload } = frame;
    try {
      if (payload.kind === "snapshot") {
        const snapshot = payload.snapshot;
        if (!isRecord(snapshot) || fromSeq !== 0 || snapshot.seq !== toSeq) return bad("a snapshot frame whose seq does not match");
        if (this.store.held && !recovery && (snapshot.logEpoch !== this.store.logEpoch || toSeq < this.store.seq)) {
          return this.resync("a snapshot of another log epoch or an older seq", true);
        }
        const baseline = !this.store.held;
        this.store.replace(snapshot);
        const events = this.projection.snapshot(this.store, baseline);
        this.projection.forget(this.store.evict());
        return this.emit(events);
      }
      if (payload.kind === "deltas") {
        if (!Array.isArray(payload.deltas)) return bad("a deltas frame without deltas");
        if (!this.store.held) return recovery ? bad("deltas before any snapshot") : this.resync("deltas before any snapshot", true);
        if (fromSeq !== this.store.seq) {
          return recovery
            ? bad(`deltas from seq ${fromSeq}, held ${this.store.seq}`)
            : this.resync(`a gap: deltas from seq ${fromSeq}, held ${this.store.seq}`, false);
        }
        const touched: Touched = { rows: [], removed: [], zone: false };
        for (const delta of payload.deltas) this.store.apply(delta, touched);
        this.store.seq = toSeq;
        const events = this.projection.changed(this.store, touched);
        // the frame is said: the oldest finished rows past the bound go (row-store.ts "Bound")
        this.projection.forget(this.store.evict());
        return this.emit(events);
      }
      throw new UnknownDeltaError(`payload ${String(payload.kind)}`);
    } catch (error) {
      if (error instanceof UnknownDeltaError) {
        return this.fatal(
          protocolError(`${error.message}; zcode-acp does not guess what it means. Update zcode-acp.`, { deltaKind: error.deltaKind }),
        );
      }
      if (error instanceof MalformedFrameError) return bad(error.message);
      if (error instanceof EvictedRowError || error instanceof HeldRowsError) {
        return this.fatal(protocolError(`${error.message} Load the session again.`));
      }
      throw error;
    }
  }

  private emit(events: readonly unknown[]): void | Promise<void> {
    this.options.onSeq(this.projection.lastSeq);
    const pending: Array<Promise<void>> = [];
    for (const event of events) {
      if (this.ended) break;
      const result = this.sink.onEvent(this.options.normalise(event));
      if (result) pending.push(result);
    }
    // a subagent row said: its child's conversation is followed, or closed (after the row's own events)
    if (!this.ended) this.children?.observe(events);
    if (pending.length > 0) return Promise.all(pending).then(() => undefined);
  }

  private fault(reason: string): void {
    this.options.logger.warn("V4 conversation frame fault: resynchronising", { sessionId: this.ref.sessionId, reason });
    this.resync(reason, false);
  }

  /** ask for a recovery frame from the held position (or a fresh snapshot); only it counts from now on */
  private resync(reason: string, forceSnapshot: boolean): void {
    if (this.ended || this.awaitingRecovery || this.subscriptionId === undefined) return;
    this.awaitingRecovery = true;
    this.recoveryAsks = 0;
    this.recoveryForced = forceSnapshot;
    this.clearRecoveryTimer();
    // the whole wait for the recovery is bounded: past it the subscription ends, never deaf
    this.recoveryTimer = setTimeout(() => {
      this.recoveryTimer = undefined;
      if (!this.awaitingRecovery) return;
      this.fatal(
        new BridgeError(
          "HOST_TIMEOUT",
          `ZCode did not send the recovery frame of a conversation resync within ${RECOVERY_WAIT_MS / 1000} s; ` +
            "the session's events are read again at its next use.",
          { details: { sessionId: this.ref.sessionId, reason } },
        ),
      );
    }, RECOVERY_WAIT_MS);
    this.recoveryTimer.unref?.();
    this.ask(reason);
  }

  /** a fault that may have been the awaited recovery's: the resync is asked once more, then the subscription ends */
  private askAgain(reason: string): void {
    if (this.recoveryAsks >= RECOVERY_ASKS) {
      return this.fatal(protocolError(`ZCode's recovery frame did not arrive usable after ${RECOVERY_ASKS} resyncs: ${reason}.`));
    }
    this.options.logger.warn("V4 conversation fault while a recovery was awaited: asking again", { sessionId: this.ref.sessionId, reason });
    this.ask(reason);
  }

  private ask(reason: string): void {
    if (this.subscriptionId === undefined) return;
    this.recoveryAsks++;
    this.assembler.reset();
    const forceSnapshot = this.recoveryForced;
    this.options.logger.info("V4 conversation resync", { sessionId: this.ref.sessionId, reason, forceSnapshot });
    const base = this.store.held && !forceSnapshot ? { logEpoch: this.store.logEpoch, seq: this.store.seq } : null;
    const params: Record<string, unknown> = { workspacePath: this.ref.workspacePath, subscriptionId: this.subscriptionId, base };
    if (base === null) params.forceSnapshot = true;
    this.options.host.call("agent", "resyncConversationV4", params, { timeout: "resyncConversation" }).catch((error: unknown) => {
      this.fatal(
        isBridgeError(error)
          ? error
          : new BridgeError("HOST_CALL_FAILED", `ZCode refused to resynchronise the conversation: ${describeError(error)}`),
      );
    });
  }

  private clearRecoveryTimer(): void {
    if (this.recoveryTimer) clearTimeout(this.recoveryTimer);
    this.recoveryTimer = undefined;
  }

  private fatal(error: BridgeError): void {
    if (this.ended) return;
    this.options.logger.error("V4 conversation subscription ended", {
      sessionId: this.ref.sessionId,
      code: error.code,
      message: error.message,
    });
    this.end(error);
    this.onFatal?.();
  }

  /** an unfinished fragmented frame gets 30 s; then the reader resynchronises */
  private armTimer(): void {
    if (this.assembler.pending === 0 || this.timer || this.ended) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const result = this.assembler.expire();
      if (result.kind === "fault") this.fault(result.reason);
      else this.armTimer();
    }, ASSEMBLY_LIMITS.timeoutMs + 100);
    this.timer.unref?.();
  }
}

/**
 * Open a reader: the workspace's frame listener first (./frame-listener.ts, shared by the
 * workspace's readers), then `subscribeConversationV4`; the returned subscription unsubscribes in
 * ZCode (`unsubscribeConversationV4`) and leaves the listener (the last reader disposes it). A
 * second subscription of the same workspace (another session, a sub-agent's child conversation)
 * costs no second listener: each frame still crosses the channel once.
 */
export async function openConversation(ref: SessionRef, sink: HostEventSink, options: ReaderOptions): Promise<HostSubscription> {
  const { host } = options;
  const reader = new ConversationReader(ref, sink, options);
  if (options.followSubagents) {
    reader.children = new SubagentConversations(ref, {
      logger: options.logger,
      // a child's conversation through the same reader, from its start; it follows no subagents itself
      open: (child, childSink) =>
        openConversation(child, childSink, {
          host,
          logger: options.logger.child("subagent"),
          startSeq: 0,
          onSeq: () => {},
          normalise: (event) => event,
          ...(options.now ? { now: options.now } : {}),
          freshBaseline: true,
        }),
      deliver: (events) => reader.inject(events),
    });
  }
  const listener = await attachFrames(host, ref.workspacePath, reader, options.logger).catch((error: unknown) => {
    reader.stop(); // its row store leaves the diagnostics
    throw error;
  });
  let subscriptionId: string;
  try {
    const answer = await host.call<unknown>(
      "agent",
      "subscribeConversationV4",
      { workspacePath: ref.workspacePath, sessionId: ref.sessionId },
      { timeout: "subscribeConversation" },
    );
    const ack = isRecord(answer) && isRecord(answer.ack) ? answer.ack : answer;
    if (!isRecord(ack) || typeof ack.subscriptionId !== "string" || ack.subscriptionId === "") {
      throw protocolError("ZCode answered the conversation subscription without a subscriptionId.");
    }
    subscriptionId = ack.subscriptionId;
  } catch (error) {
    reader.stop();
    await listener.detach().catch(() => undefined);
    throw error;
  }
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    reader.stop();
    await host
      .call(
        "agent",
        "unsubscribeConversationV4",
        { workspacePath: ref.workspacePath, subscriptionId },
        { timeout: "unsubscribeConversation" },
      )
      .catch((error: unknown) => options.logger.debug("V4 unsubscribe failed", { subscriptionId, error: describeError(error) }));
    await listener.detach();
  };
  reader.onFatal = () => void release();
  // ended before the answer (too many early frames, its listener's end): nothing of it outlives this
  if (reader.done) await release();
  listener.bind(subscriptionId);
  reader.bind(subscriptionId);
  return { id: listener.id, incarnation: listener.incarnation, dispose: release };
}

/** the bytes an early frame holds (its JSON; a fragment's is mostly its base64) */
function frameBytes(raw: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(raw) ?? "", "utf8");
  } catch {
    return 0;
  }
}
