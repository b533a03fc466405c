/**
 * The session's outgoing `session/update` queue: updates are written one at a time,
 * in order, once the gate is open. While the client is behind (an update is still being
 * written), consecutive text chunks of the same kind and message are merged into the queued
 * one, so a burst of deltas costs one notification instead of one per delta. Nothing waits
 * for a timer: an update that finds the queue idle is written at once, unmerged.
 *
 * What the client reassembles is unchanged: the merged text is the concatenation, in order,
 * of the merged deltas, and no update ever overtakes another. Only plain text chunks
 * (`agent_message_chunk` / `agent_thought_chunk` with `{type:"text", text}` content, the same
 * `messageId`, nothing else) are merged, up to `maxMergedChars` per notification.
 *
 * The queue also measures its backlog: `pressure()` returns a promise while more than
 * `highWaterChars` are queued, settled once the backlog is down to `lowWaterChars`. The
 * session engine hands it to the host subscription, which stops reading the host channel
 * while consumers are behind, so a slow client holds back the host instead of filling memory.
 *
 * Merging can be turned off (`merge: false`, from the CLI's `mergeDeltas` setting: the
 * benchmark's baseline); the backlog measure and `pressure()` stay.
 *
 * Turn boundaries (adr/0036): `barrier()` puts a barrier entry at the tail. Nothing queued after
 * it is written until it is lifted, while `barrier.post` still queues an update in front of it
 * (the ended turn's own final updates: usage, snapshot changes). `barrier.passed()` resolves once
 * everything in front of it was written; the session then hands out the prompt's answer and lifts
 * the barrier once that answer was written. Updates held behind a barrier whose answer is not out
 * yet wait for us (the answer may need the host channel: the turn's usage is read through it), so
 * they do not count towards `pressure()`; once the answer was handed out (`barrier.answered()`)
 * they wait only for the client to read it, and count again, so a client that stops reading holds
 * back the host as it does without a barrier.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";

export interface UpdateCoalescerOptions {
  /**
   * write one update; resolves once it was handed to the client connection. `target`: the ACP
   * session it is for when it is not the queue's own (a subagent's child session, ./subagents.ts)
   */
  send(update: SessionUpdate, target?: string): Promise<void>;
  /** a write failed (the client is gone); the queue goes on with the next update */
  onError?(error: unknown): void;
  /** merge text chunks while the client is behind (default: on) */
  merge?: boolean;
  /** longest merged text, in UTF-16 units (default 64 KiB) */
  maxMergedChars?: number;
  /** `pressure()` starts holding back above this backlog (default 1 MiB) */
  highWaterChars?: number;
  /** … and lets go at or below this one (default 256 KiB) */
  lowWaterChars?: number;
}

/** Fixed cost of one queued update in the backlog measure (its envelope), in UTF-16 units. */
const ENTRY_COST = 256;

type TextChunk = Extract<SessionUpdate, { sessionUpdate: "agent_message_chunk" | "agent_thought_chunk" }>;

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

interface Entry {
  update: SessionUpdate;
  /** a turn boundary (`barrier()`): not written; the queue stops here until it is lifted */
  barrier?: true;
  /** a barrier whose answer was handed out (`TurnBarrier.answered`) */
  answered?: true;
  /** another ACP session than the queue's own (a subagent's child); never merged across sessions */
  target: string | undefined;
  /** text parts of a merged chunk, joined when it is written */
  parts: string[] | undefined;
  chars: number;
  cost: number;
  /** created only when a caller wants to know when the entry was written */
  done: Deferred | undefined;
}

/** A turn boundary in the queue (see `UpdateCoalescer.barrier`). */
export interface TurnBarrier {
  /** queue an update in front of the barrier (the ended turn's own final updates); after a lift: an ordinary post */
  post(update: SessionUpdate, target?: string): void;
  /** resolves once everything queued in front of the barrier was written or failed (never rejects; waits for open()) */
  passed(): Promise<void>;
  /** the prompt's answer was handed out: what waits behind now waits for the client, and counts towards pressure() */
  answered(): void;
  /** let what waits behind the barrier go (idempotent) */
  lift(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(noop); // callers that do not await must not cause an unhandled rejection
  return { promise, resolve, reject };
}

/** The text of a chunk that may be merged with a neighbour, or undefined. */
function mergeableText(update: SessionUpdate): string | undefined {
  if (update.sessionUpdate !== "agent_message_chunk" && update.sessionUpdate !== "agent_thought_chunk") return undefined;
  for (const key in update) if (key !== "sessionUpdate" && key !== "content" && key !== "messageId") return undefined;
  const content = update.content as { type?: unknown; text?: unknown };
  if (content.type !== "text" || typeof content.text !== "string") return undefined;
  for (const key in content) if (key !== "type" && key !== "text") return undefined;
  return content.text;
}

function sameStream(a: SessionUpdate, b: SessionUpdate): boolean {
  return a.sessionUpdate === b.sessionUpdate && (a as TextChunk).messageId === (b as TextChunk).messageId;
}

export class UpdateCoalescer {
  private readonly options: Required<Omit<UpdateCoalescerOptions, "onError">> & Pick<UpdateCoalescerOptions, "onError">;
  private readonly queue: Entry[] = [];
  private opened = false;
  private inFlight: Entry | undefined;
  private backlog = 0;
  /** barrier entries in the queue whose answer is not handed out yet */
  private unanswered = 0;
  /** the part of the backlog behind the first unanswered barrier (waiting for us, not for the client) */
  private held = 0;
  private openWaiters: Array<() => void> = [];
  private relief: { promise: Promise<void>; resolve(): void } | undefined;
  /** deltas merged away (diagnostics, tests) */
  merged = 0;

  constructor(options: UpdateCoalescerOptions) {
    this.options = { merge: true, maxMergedChars: 64 * 1024, highWaterChars: 1024 * 1024, lowWaterChars: 256 * 1024, ...options };
  }

  /** updates queued and not yet written */
  get queued(): number {
    return this.queue.length;
  }

  /** the backlog measure: queued text plus a fixed cost per queued update */
  get backlogChars(): number {
    return this.backlog;
  }

  /** Queue an update; resolves when it (or the chunk it was merged into) was written. */
  push(update: SessionUpdate, target?: string): Promise<void> {
    const entry = this.enqueue(update, target);
    entry.done ??= deferred();
    const promise = entry.done.promise;
    this.pump();
    return promise;
  }

  /** Queue an update nobody waits for (no promise is made). */
  post(update: SessionUpdate, target?: string): void {
    this.enqueue(update, target);
    this.pump();
  }

  /** The entry that carries `update`: the queued tail it was merged into, or a new one. */
  private enqueue(update: SessionUpdate, target: string | undefined): Entry {
    const text = mergeableText(update);
    const tail = this.queue[this.queue.length - 1];
    if (
      text !== undefined &&
      this.options.merge &&
      tail?.parts &&
      tail.target === target &&
      sameStream(tail.update, update) &&
      tail.chars + text.length <= this.options.maxMergedChars
    ) {
      tail.parts.push(text);
      tail.chars += text.length;
      tail.cost += text.length;
      this.backlog += text.length;
      if (this.unanswered > 0) this.held += text.length; // the tail is behind an unanswered barrier
      this.merged += 1;
      return tail;
    }
    const chars = text?.length ?? 0;
    const entry: Entry = {
      update,
      target,
      parts: text === undefined ? undefined : [text],
      chars,
      cost: ENTRY_COST + chars,
      done: undefined,
    };
    this.queue.push(entry);
    this.backlog += entry.cost;
    if (this.unanswered > 0) this.held += entry.cost;
    return entry;
  }

  /**
   * The turn boundary: a barrier entry at the tail. Updates posted from now on wait behind it
   * until `lift()`; `post` on the barrier queues in front of it.
   */
  barrier(): TurnBarrier {
    const mark: Entry = {
      update: undefined as unknown as SessionUpdate,
      barrier: true,
      target: undefined,
      parts: undefined,
      chars: 0,
      cost: 0,
      done: undefined,
    };
    this.queue.push(mark);
    this.unanswered++;
    let lifted = false;
    return {
      post: (update, target) => {
        if (lifted) return this.post(update, target);
        const at = this.queue.indexOf(mark);
        const chars = mergeableText(update)?.length ?? 0;
        const entry: Entry = { update, target, parts: undefined, chars, cost: ENTRY_COST + chars, done: undefined };
        this.queue.splice(at, 0, entry);
        this.backlog += entry.cost;
        if (this.queue.findIndex((other) => other.barrier && !other.answered) < at) this.held += entry.cost;
        this.pump();
      },
      passed: () => {
        if (lifted) return this.drain();
        const at = this.queue.indexOf(mark);
        const before = at > 0 ? this.queue[at - 1]! : this.inFlight;
        if (before) {
          before.done ??= deferred();
          return before.done.promise.then(noop, noop);
        }
        if (!this.opened) return new Promise((resolve) => this.openWaiters.push(resolve));
        return Promise.resolve();
      },
      answered: () => {
        if (lifted || mark.answered) return;
        mark.answered = true;
        this.unanswered--;
        this.held = this.heldBehindFirstUnanswered();
      },
      lift: () => {
        if (lifted) return;
        lifted = true;
        this.queue.splice(this.queue.indexOf(mark), 1);
        if (!mark.answered) {
          this.unanswered--;
          this.held = this.heldBehindFirstUnanswered();
        }
        mark.done?.resolve();
        this.pump();
      },
    };
  }

  private heldBehindFirstUnanswered(): number {
    let held = 0;
    let behind = false;
    for (const entry of this.queue) {
      if (entry.barrier && !entry.answered) behind = true;
      else if (behind) held += entry.cost;
    }
    return held;
  }

  /** Let queued updates go out (the client knows the session by now). Idempotent. */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    for (const wake of this.openWaiters.splice(0)) wake();
    this.pump();
  }

  /** Resolves once everything queued so far was written or failed (never rejects; waits for open()). */
  drain(): Promise<void> {
    const last = this.queue[this.queue.length - 1] ?? this.inFlight;
    if (last) {
      last.done ??= deferred();
      return last.done.promise.then(noop, noop);
    }
    if (!this.opened) return new Promise((resolve) => this.openWaiters.push(resolve));
    return Promise.resolve();
  }

  /** undefined while the backlog is below the high-water mark, else a promise settled at the low one. */
  pressure(): Promise<void> | undefined {
    if (this.relief) return this.relief.promise;
    if (this.backlog - this.held <= this.options.highWaterChars) return undefined;
    let resolve!: () => void;
    const promise = new Promise<void>((res) => (resolve = res));
    this.relief = { promise, resolve };
    return promise;
  }

  /** Write the next entry unless one is being written (one write at a time, in order). */
  private pump(): void {
    if (!this.opened || this.inFlight || this.queue.length === 0 || this.queue[0]!.barrier) return;
    const entry = this.queue.shift()!;
    this.inFlight = entry;
    const update = entry.parts && entry.parts.length > 1 ? withText(entry.update, entry.parts.join("")) : entry.update;
    let sending: Promise<void>;
    try {
      sending = entry.target === undefined ? this.options.send(update) : this.options.send(update, entry.target);
    } catch (error) {
      sending = Promise.reject(error);
    }
    sending.then(this.sent, this.failed);
  }

  private readonly sent = (): void => {
    this.finish()?.resolve();
  };

  private readonly failed = (error: unknown): void => {
    this.finish()?.reject(error);
    this.options.onError?.(error);
  };

  /** The in-flight entry is done: update the backlog, relieve pressure, go on with the next one. */
  private finish(): Deferred | undefined {
    const entry = this.inFlight!;
    this.inFlight = undefined;
    this.backlog -= entry.cost;
    if (this.relief && (this.backlog - this.held <= this.options.lowWaterChars || this.queue.length === 0)) {
      this.relief.resolve();
      this.relief = undefined;
    }
    this.pump();
    return entry.done;
  }
}

function withText(update: SessionUpdate, text: string): SessionUpdate {
  const chunk = update as TextChunk;
  return { ...chunk, content: { type: "text", text } };
}

function noop(): void {}
