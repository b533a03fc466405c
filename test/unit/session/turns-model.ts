/**
 * A small model of ZCode's input queue and turns, driven step by step, around the session's real
 * turns (src/session/session-turns.ts, zcode-inputs.ts) and its real update queue
 * (update-coalescer.ts): what the session writes (updates, the prompts' answers) goes to one wire
 * log, in order, as a transport writes it. Used by the write-order property test and the
 * regression tests of adr/0036. Two input paths: "v4" (ZCode's queue: send while busy, ids,
 * removals, stops that hold the queue) and "legacy" (one input at a time, paired by order); and per
 * simulated release what else differs (`RELEASES`: a failed turn that holds the queue, a hold the
 * read path reports), as the simulator has it (fixtures/README.md, sim-v4.js).
 *
 * Every ZCode side effect is immediate; what ZCode *says* (acks, session events, the usage read
 * after a turn) waits in an outbox until the test delivers it, so any interleaving can be played.
 */
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import { silentLogger } from "../../../src/log/logger.js";
import type { NativeApi, SentInput } from "../../../src/native/native-api.js";
import type { ActiveTurn, TurnResult } from "../../../src/session/active-turn.js";
import { SessionLifecycle } from "../../../src/session/session-lifecycle.js";
import { SessionTurns, type PromptControl, type TurnSession } from "../../../src/session/session-turns.js";
import type { SteeringOutcome } from "../../../src/session/steering.js";
import { UpdateCoalescer } from "../../../src/session/update-coalescer.js";
import { BridgeError } from "../../../src/util/errors.js";

export type Line = "v4" | "legacy";

/** What a simulated release does that the session's write order depends on (fixtures/README.md "Flavours"). */
export interface ReleaseBehaviour {
  release: string;
  /**
   * the input call: V4 `sendText` (ZCode queues a busy send; acks with ids, removals, guides) or
   * legacy `sendPrompt` (refuses a busy send, 1308: the session refuses a prompt while busy)
   */
  input: Line;
  /** a failed turn with items queued holds them (`pauseReason: "error"`; 3.14 on, sim-v4.js `ERROR_HOLD_FROM`) */
  holdsAfterFailure: boolean;
  /** the read path reports ZCode's hold (V4 `queue.autoDrain` / `pauseReason`: 4.0.0's V4 reading); else only the bound applies */
  reportsHold: boolean;
  /** steering texts go as V4 guides (else the steering falls back to a prompt of its own) */
  steering: boolean;
}

/**
 * The releases the end-to-end suites run on (vitest.config.ts), plus 3.10.2, the one simulated
 * release without V4 input (its manifest allows no `sendConversationCommandV4`): every other
 * simulated release sends with `sendText`, 3.11.2 included (adr/0022).
 */
export const RELEASES: readonly ReleaseBehaviour[] = [
  { release: "3.10.2", input: "legacy", holdsAfterFailure: false, reportsHold: false, steering: false },
  { release: "3.11.2", input: "v4", holdsAfterFailure: false, reportsHold: false, steering: true },
  { release: "3.12.3", input: "v4", holdsAfterFailure: false, reportsHold: false, steering: true },
  { release: "3.14.4", input: "v4", holdsAfterFailure: true, reportsHold: false, steering: true },
  { release: "4.0.0", input: "v4", holdsAfterFailure: true, reportsHold: true, steering: true },
];

const BY_LINE: Record<Line, ReleaseBehaviour> = {
  v4: { release: "v4", input: "v4", holdsAfterFailure: false, reportsHold: false, steering: true },
  legacy: RELEASES[0]!,
};
const WHERE = { workspacePath: "/w", sessionId: "s1" };

export type WireEntry =
  { kind: "update"; label: string; what: string; seq: number } | { kind: "answer"; label: string; outcome: string; seq: number };

interface ZItem {
  inputId: string | undefined;
  label: string;
}
interface ZTurn {
  turnId: string;
  inputId: string | undefined;
  label: string;
  stopped: boolean;
  failed?: boolean;
}
type ZEvent =
  | { type: "started"; turn: ZTurn }
  | { type: "chunk"; turn: ZTurn }
  | { type: "ended"; turn: ZTurn }
  | { type: "drained"; ids: string[] }
  | { type: "hold"; held: boolean; reason?: string };

interface PendingAck {
  resolve(sent: SentInput): void;
  reject(error: unknown): void;
  sent: SentInput;
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

export class TurnsModel {
  seq = 0;
  readonly wire: WireEntry[] = [];
  /** what ZCode started, in order: label and seq */
  readonly starts: Array<{ label: string; seq: number }> = [];
  /** answers as the session gave them (label → outcome, seq when seen) */
  readonly answers = new Map<string, { outcome: string; seq: number; count: number }>();
  readonly steerings = new Map<string, string>();
  readonly steered: string[] = [];
  /** ZCode's state */
  queue: ZItem[] = [];
  guides: ZItem[] = [];
  running: ZTurn | undefined;
  autoDrain = true;
  pauseReason: string | undefined;
  private turnCounter = 0;
  readonly outbox: ZEvent[] = [];
  readonly acks: PendingAck[] = [];
  readonly usageReads: Array<() => void> = [];
  /** ZCode's stops and removals, in order (`stop <label of the turn it hit>`, `remove <label>`) */
  readonly calls: string[] = [];
  /** ZCode's own queue changes, in order: `hold <pauseReason>`, `resume` */
  readonly queueLog: string[] = [];
  /** the next send's ack is lost (ZCode took the input; the bridge hears a timeout) */
  loseNextAck = false;
  /** ZCode's answers to our releases of its held queue wait in `releases` while set (`release()` answers the oldest) */
  pauseReleases = false;
  readonly releases: Array<() => void> = [];
  /** removals fail (a timeout) while set */
  failRemovals = false;
  /** the next steering text's operation fails before its send */
  failNextBeforeSend = false;
  readonly turns: SessionTurns;
  readonly updates: UpdateCoalescer;
  private readonly labels = new Map<ActiveTurn, string>();
  private readonly byInputId = new Map<string, string>();
  private readonly shownTurns = new Map<string, ActiveTurn>();
  private nextLabel = 0;
  readonly controls = new Map<string, PromptControl>();
  readonly session: TurnSession;

  readonly line: Line;
  readonly behaviour: ReleaseBehaviour;

  constructor(release: Line | ReleaseBehaviour, cancelGraceMs = 60_000) {
    this.behaviour = typeof release === "string" ? BY_LINE[release] : release;
    this.line = this.behaviour.input;
    this.updates = new UpdateCoalescer({
      send: async (update) => {
        const text = update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : "";
        const [label = "?", what = "?"] = text.split(":");
        this.wire.push({ kind: "update", label, what, seq: ++this.seq });
      },
    });
    this.updates.open();
    const native = {
      takesLiveInput: async () => this.line === "v4",
      sendInput: (params: { inputId?: string; delivery?: string; content: string }) => this.sendInput(params),
      removeQueuedInput: async ({ queueItemId }: { queueItemId: string }) => {
        const at = this.queue.findIndex((item) => `queue_${item.inputId}` === queueItemId);
        this.calls.push(`remove ${this.byInputId.get(queueItemId.slice("queue_".length)) ?? "?"}${this.failRemovals ? " (fails)" : ""}`);
        if (this.failRemovals) throw new BridgeError("HOST_TIMEOUT", "removal timed out");
        if (at < 0) return false;
        this.queue.splice(at, 1);
        return true;
      },
      stopTurn: async () => this.stop(),
      releaseHeldQueue: async () => {
        this.calls.push("release");
        if (this.pauseReleases) {
          const answered = deferred<void>();
          this.releases.push(() => answered.resolve());
          await answered.promise;
        }
        this.resume();
      },
    } as unknown as NativeApi;
    const lifecycle = new SessionLifecycle("s1");
    lifecycle.to("attached");
    this.session = {
      sessionId: "s1",
      where: WHERE,
      logger: silentLogger,
      deps: {
        native,
        broker: { withdrawAll: async () => undefined },
        cancelGraceMs,
        answerWrites: true,
        mergeDeltas: false,
        steerOutcomeMs: 600_000,
      } as unknown as TurnSession["deps"],
      lifecycle,
      updates: this.updates,
      post: (update) => this.updates.post(update),
      beforeSend: async (_signal, turn) => {
        if (!turn && this.failNextBeforeSend) {
          this.failNextBeforeSend = false;
          throw new BridgeError("HOST_CALL_FAILED", "no event subscription");
        }
      },
      markResync: () => undefined,
      closeTurnEvents: (turn) => this.updates.post(chunk(`${this.labelOf(turn)}:final`)),
      reportUsage: async (turn, post) => {
        const read = deferred<void>();
        this.usageReads.push(() => read.resolve());
        await read.promise;
        post(chunk(`${this.labelOf(turn)}:usage`));
      },
      resume: async () => undefined,
      runningNow: async () => this.running !== undefined,
    };
    this.turns = new SessionTurns(this.session, false);
  }

  private labelOf(turn: ActiveTurn): string {
    return this.labels.get(turn) ?? "?";
  }

  // ---- the client's side ----

  prompt(): string {
    const label = `p${++this.nextLabel}`;
    const answered = this.turns.prompt(blocks(label), this.turns.cancelCount, {
      control: (control) => this.controls.set(label, control),
    });
    this.observe(label, answered);
    return label;
  }

  steer(idle: "promptRequired" | "startNewTurn" = "startNewTurn"): string {
    const label = `s${++this.nextLabel}`;
    this.steered.push(label);
    this.turns.steer(blocks(label), idle).then(
      (outcome: SteeringOutcome) => this.steerings.set(label, outcome.outcome),
      (error: BridgeError) => this.steerings.set(label, `error ${error.code}`),
    );
    return label;
  }

  private observe(label: string, answered: Promise<TurnResult>): void {
    const record = (outcome: string, value: unknown): void => {
      const seen = this.answers.get(label);
      if (seen) {
        seen.count++;
        return;
      }
      // the transport writes the answer, then reports it written
      const seq = ++this.seq;
      this.answers.set(label, { outcome, seq, count: 1 });
      this.wire.push({ kind: "answer", label, outcome, seq });
      this.turns.answerWritten(value);
    };
    answered.then(
      (result) => record(result.stopReason, result),
      (error: BridgeError) => record(`error ${error.code}`, error),
    );
  }

  // ---- ZCode's side ----

  private sendInput(params: { inputId?: string; delivery?: string; content: string }): Promise<SentInput> {
    const label = params.content;
    const inputId = this.line === "v4" ? params.inputId : undefined;
    // a held queue (autoDrain off, items in it) refuses a send without a disposition (ZCode's "choice" routing)
    if (this.line === "v4" && this.held) {
      this.calls.push(`refused ${label} (held)`);
      return Promise.reject(
        new BridgeError("HOST_CALL_FAILED", "the queue is held; choose a disposition", {
          details: { reasonCode: "heldQueueDispositionRequired" },
        }),
      );
    }
    if (inputId) this.byInputId.set(inputId, label);
    const item = { inputId, label };
    let delivery: "startNow" | "queue";
    if (params.delivery === "guide" && this.running) {
      this.guides.push(item);
      delivery = "queue";
    } else if (!this.running && this.queue.length === 0) {
      this.start(item);
      delivery = "startNow";
    } else {
      this.queue.push(item);
      delivery = "queue";
    }
    const sent: SentInput = { inputId, delivery };
    return new Promise<SentInput>((resolve, reject) => {
      if (this.loseNextAck) {
        this.loseNextAck = false;
        reject(new BridgeError("HOST_TIMEOUT", "the ack was lost"));
        return;
      }
      this.acks.push({ resolve, reject, sent });
    });
  }

  private start(item: ZItem): void {
    const turn: ZTurn = { turnId: `t${++this.turnCounter}`, inputId: item.inputId, label: item.label, stopped: false };
    this.running = turn;
    this.starts.push({ label: item.label, seq: ++this.seq });
    this.outbox.push({ type: "started", turn });
  }

  private stop(): void {
    this.calls.push(`stop ${this.running?.label ?? "(idle)"}`);
    const turn = this.running;
    if (!turn) return;
    turn.stopped = true;
    this.finish();
    // a stop with items left holds ZCode's queue
    if (this.queue.length > 0 && this.autoDrain) this.hold("stopped");
    this.advance();
  }

  /** ZCode's queue is held: autoDrain off, with a reason (the V4 read path reports it) */
  private hold(reason: string): void {
    this.queueLog.push(`hold ${reason}`);
    this.autoDrain = false;
    this.pauseReason = reason;
    if (this.behaviour.reportsHold) this.outbox.push({ type: "hold", held: true, reason });
  }

  /** held: autoDrain off with items queued (a send without a disposition is refused) */
  get held(): boolean {
    return !this.autoDrain && this.queue.length > 0;
  }

  /** `setAutoDrain(true)`: ours (a release) or ZCode's desktop (its queue panel); an idle session starts its queue head */
  resume(): void {
    if (!this.autoDrain) {
      this.queueLog.push("resume");
      this.autoDrain = true;
      this.pauseReason = undefined;
      if (this.behaviour.reportsHold) this.outbox.push({ type: "hold", held: false });
    }
    this.advance();
  }

  private finish(): void {
    const turn = this.running!;
    this.running = undefined;
    this.outbox.push({ type: "ended", turn });
    // an undrained guide becomes a queue item of its own
    this.queue.unshift(...this.guides.splice(0));
  }

  private advance(): void {
    if (this.running || !this.autoDrain || this.queue.length === 0) return;
    this.start(this.queue.shift()!);
  }

  /** ZCode runs a turn of its own (a background result), when idle */
  own(): void {
    if (this.running || this.line !== "v4") return;
    this.start({ inputId: `own${this.turnCounter}`, label: "own" });
  }

  /** the running turn streams a chunk */
  chunk(): void {
    if (this.running) this.outbox.push({ type: "chunk", turn: this.running });
  }

  /** the running turn ends (the next queued input starts) */
  end(): void {
    if (!this.running) return;
    this.finish();
    this.advance();
  }

  /** the running turn fails (a provider error): from 3.14 on, what is queued behind it is held */
  fail(): void {
    const turn = this.running;
    if (!turn) return;
    turn.failed = true;
    this.finish();
    if (this.behaviour.holdsAfterFailure && this.queue.length > 0 && this.autoDrain) this.hold("error");
    this.advance();
  }

  /** the running turn takes its guides in */
  drain(): void {
    if (!this.running || this.guides.length === 0) return;
    const ids = this.guides.splice(0).map((guide) => guide.inputId!);
    this.outbox.push({ type: "drained", ids });
  }

  /** the oldest ack reaches the bridge */
  ack(): void {
    const ack = this.acks.shift();
    ack?.resolve(ack.sent);
  }

  /** the oldest release of ours takes effect and answers */
  release(): void {
    this.releases.shift()?.();
  }

  /** the oldest usage read answers */
  usage(): void {
    this.usageReads.shift()?.();
  }

  /** the oldest event reaches the session (as the event router would route it) */
  deliver(): void {
    const event = this.outbox.shift();
    if (!event) return;
    if (event.type === "drained") return this.turns.steerDrained(event.ids);
    if (event.type === "hold") return this.turns.queueHeld(event.held, event.reason);
    const { turn } = event;
    if (event.type === "started") {
      const own = turn.label === "own";
      const shown = this.turns.turnStarted(turn.turnId, {
        ...(turn.inputId !== undefined ? { inputId: turn.inputId } : {}),
        ...(own ? { inputSource: "background_task" } : {}),
      });
      if (shown) {
        this.labels.set(shown, turn.label);
        this.shownTurns.set(turn.turnId, shown);
      }
      return;
    }
    const shown = this.shownTurns.get(turn.turnId);
    const live = shown !== undefined && this.turns.live === shown ? shown : undefined;
    if (event.type === "chunk") {
      if (live) this.updates.post(chunk(`${turn.label}:chunk`));
      return;
    }
    if (live && turn.failed && !live.cancelRequested)
      this.turns.turnEndSeen(live, { error: new BridgeError("TURN_FAILED", "api_error: the model request failed") }, true);
    else if (live) this.turns.turnEndSeen(live, { stopReason: turn.stopped || live.cancelRequested ? "cancelled" : "end_turn" }, true);
    else if (!shown) this.turns.foreignTurnEnded(turn.turnId);
  }

  /** the host goes away: its queue with it */
  exit(): void {
    this.queue = [];
    this.guides = [];
    this.running = undefined;
    this.outbox.length = 0;
    this.autoDrain = true;
    this.pauseReason = undefined;
    for (const ack of this.acks.splice(0)) ack.reject(new BridgeError("HOST_EXITED", "the host exited"));
    this.turns.giveUp(new BridgeError("HOST_EXITED", "the host exited"), { native: false });
  }

  /** everything ZCode still owes is said, every turn runs to its end */
  get quiet(): boolean {
    return (
      this.outbox.length === 0 && this.acks.length === 0 && this.usageReads.length === 0 && this.releases.length === 0 && !this.running
    );
  }
}

function blocks(label: string): ContentBlock[] {
  return [{ type: "text", text: label }];
}

function chunk(text: string): SessionUpdate {
  return { sessionUpdate: "agent_message_chunk", content: { type: "text", text } };
}

/** Let every pending microtask and immediate run (the session's chains, the update queue). */
export async function settle(rounds = 4): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
