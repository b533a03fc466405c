/**
 * The broker's book of pending interactions, and the memory of requests already handled so
 * that a re-announced request (same requestId; the host repeats unanswered requests about
 * every second) is neither asked nor answered twice.
 */
import { PendingInteraction, type PendingInit } from "./pending.js";

/** how many handled request keys are remembered for de-duplication */
const HANDLED_MEMORY = 4096;

export interface RegistryOptions {
  /** how long a client request may stay open after the client's own cancel (pending.ts) */
  clientCancelGraceMs: number;
}

export class PendingRegistry {
  private readonly pending = new Map<string, PendingInteraction>();
  private readonly handled = new Set<string>();
  /** interactions whose client request is open, ended ones included (during the cancel grace) */
  private readonly awaitingClient = new Set<PendingInteraction>();

  constructor(private readonly options: RegistryOptions = { clientCancelGraceMs: 0 }) {}
  /** ended, but their host answer is still on its way */
  private readonly finishing = new Set<PendingInteraction>();

  /** true when this request is pending or was already handled (a re-announcement) */
  seen(key: string): boolean {
    return this.pending.has(key) || this.handled.has(key);
  }

  /** remember a request that was handled without a pending interaction (answered at once) */
  markHandled(key: string): void {
    this.handled.delete(key);
    this.handled.add(key);
    while (this.handled.size > HANDLED_MEMORY) {
      const oldest = this.handled.values().next().value;
      if (oldest === undefined) break;
      this.handled.delete(oldest);
    }
  }

  open(init: PendingInit): PendingInteraction {
    const onClientRequest = (p: PendingInteraction, open: boolean): void => {
      if (open) this.awaitingClient.add(p);
      else this.awaitingClient.delete(p);
    };
    const pending = new PendingInteraction({ clientCancelGraceMs: this.options.clientCancelGraceMs, onClientRequest, ...init }, (ended) => {
      if (this.pending.get(ended.key) === ended) this.pending.delete(ended.key);
      this.markHandled(ended.key);
      this.finishing.add(ended);
      void ended.finished.then(() => this.finishing.delete(ended));
    });
    if (!pending.isEnded) this.pending.set(pending.key, pending);
    return pending;
  }

  /** the session's ended interactions whose host answer is still on its way */
  finishingFor(sessionId: string): PendingInteraction[] {
    return [...this.finishing].filter((p) => p.sessionId === sessionId);
  }

  forSession(sessionId: string): PendingInteraction[] {
    return [...this.pending.values()].filter((p) => p.sessionId === sessionId);
  }

  /** client requests (permission, elicitation) still open, of pending and of just-ended interactions */
  clientRequests(): number {
    return this.awaitingClient.size;
  }

  count(sessionId?: string): number {
    if (sessionId === undefined) return this.pending.size;
    let n = 0;
    for (const p of this.pending.values()) if (p.sessionId === sessionId) n += 1;
    return n;
  }
}
