/**
 * One ACP prompt turn: its native turn id (bound when ZCode's `turn.started` carries its input), its cancel
 * state, the turn-scoped abort signal handed to interactions, and the promise the ACP
 * `session/prompt` handler awaits. Settles exactly once.
 */
import type { StopReason } from "@agentclientprotocol/sdk";
import type { BridgeError } from "../util/errors.js";
import type { TurnOutcome } from "./stop-reason.js";
import type { PromptUsage } from "./prompt-usage.js";

export interface TurnResult {
  stopReason: StopReason;
  /** the session's token totals at the end of a completed turn */
  usage?: PromptUsage;
}

let nextTurnNumber = 1;

export class ActiveTurn {
  /** local number for logs */
  readonly number = nextTurnNumber++;
  /** the native turn id, once known */
  turnId: string | undefined;
  /** the id ZCode gave the prompt's input (the V4 command id; `turn.started` carries it), once acknowledged */
  inputId: string | undefined;
  /** its input was handed to ZCode: a cancel now needs ZCode's stop */
  sendIssued = false;
  cancelRequested = false;
  /** a session/prompt request awaits it (a steering text that runs as a turn of its own has none) */
  awaited = false;
  /** how the turn ended, once settled */
  private outcome: TurnOutcome | undefined;
  /** token totals to report with the answer (set before `deliver`) */
  usage: PromptUsage | undefined;
  private readonly abort = new AbortController();
  private graceTimer: NodeJS.Timeout | undefined;
  private resolveResult!: (value: TurnResult) => void;
  private rejectResult!: (error: BridgeError) => void;
  readonly result: Promise<TurnResult>;

  constructor() {
    this.result = new Promise((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    // the prompt handler always awaits `result`; avoid an unhandled rejection before it does
    this.result.catch(() => undefined);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get settled(): boolean {
    return this.outcome !== undefined;
  }

  /** Record the outcome (first one wins) and abort the turn signal. Returns false if already settled. */
  settle(outcome: TurnOutcome): boolean {
    if (this.outcome) return false;
    this.outcome = outcome;
    this.clearGraceTimer();
    if (!this.abort.signal.aborted) this.abort.abort("turn-end");
    return true;
  }

  /** Hand the recorded outcome to the waiting prompt handler; returns what it answers (the result, or the error). */
  deliver(): unknown {
    const outcome = this.outcome;
    if (!outcome) return undefined;
    if ("error" in outcome) {
      this.rejectResult(outcome.error);
      return outcome.error;
    }
    const result: TurnResult = this.usage ? { stopReason: outcome.stopReason, usage: this.usage } : { stopReason: outcome.stopReason };
    this.resolveResult(result);
    return result;
  }

  abortSignal(reason: string): void {
    if (!this.abort.signal.aborted) this.abort.abort(reason);
  }

  startGraceTimer(ms: number, onExpire: () => void): void {
    this.clearGraceTimer();
    this.graceTimer = setTimeout(onExpire, ms);
    this.graceTimer.unref?.();
  }

  private clearGraceTimer(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
  }
}
