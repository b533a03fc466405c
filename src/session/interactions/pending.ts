/**
 * One pending interaction: a native request waiting for a human, bound to the host
 * incarnation, session, turn and request that asked it. It answers the host at most once.
 *
 * Ways it ends (whichever comes first wins, the others are no-ops):
 *  - `answer`: the client produced a valid answer → forwarded, unless the turn ended meanwhile
 *    (then it is withdrawn instead) or the host incarnation changed (then it is dropped);
 *  - `fallBack`: the client failed, declined or answered something invalid → the fallback
 *    answer (a real deny option / decline / cancel), or `ctx.failTurn` when none is safe;
 *  - `withdraw`: the engine withdrew it (cancel, close, turn end, disconnect) or the turn signal
 *    aborted → the fallback answer, never failTurn (the turn is ending anyway);
 *  - `drop`: the host that asked is gone → nothing is sent.
 * Every end tells the client port the interaction is over (the transport orders a cancel after
 * an answer it already read until then: src/acp/wire-order.ts), removes the listeners it
 * registered (turn signal, host exit) and ends the outstanding client request: at once
 * (→ `$/cancel_request`), except after the client's own `session/cancel`. Then ACP obliges the
 * client to answer its pending permissions with `cancelled` itself (docs/acp.md §4.1), and Paseo does
 * so right before it sends the cancel — its answer can reach us after the cancel. A
 * `$/cancel_request` then would name a request the client has already answered, which clients on
 * older SDKs log as "Method not found". So the client gets `clientCancelGraceMs` to answer, and
 * only a request still unanswered after that is cancelled. The host is answered at once either
 * way; a late client answer is dropped.
 */
import type { BridgeError } from "../../util/errors.js";
import { BridgeError as BridgeErrorClass, describeError } from "../../util/errors.js";
import type { InteractionContext, WithdrawReason } from "./types.js";

export type HostAnswer =
  | { method: "permission"; optionId: string }
  | { method: "elicitation"; action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> };

export type RequestFamily = "permission" | "userInput" | "providerHeaders";

export function interactionKey(family: RequestFamily, incarnation: number, sessionId: string, requestId: string): string {
  return JSON.stringify([family, incarnation, sessionId, requestId]);
}

export interface PendingInit {
  ctx: InteractionContext;
  family: RequestFamily;
  requestId: string;
  /** for logs: permission, plan-permission, plan-input, question */
  label: string;
  /** answer sent when withdrawn or when the client fails; undefined when no answer is safe */
  fallback: HostAnswer | undefined;
  /** how long a client request may stay open after the client's own cancel (0: cancel it at once) */
  clientCancelGraceMs?: number;
  /** told when the outstanding client request opens and when it is over (answered or cancelled) */
  onClientRequest?: (pending: PendingInteraction, open: boolean) => void;
}

export class PendingInteraction {
  readonly ctx: InteractionContext;
  readonly family: RequestFamily;
  readonly label: string;
  readonly sessionId: string;
  readonly turnId: string | undefined;
  readonly requestId: string;
  readonly incarnation: number;
  readonly key: string;
  readonly fallback: HostAnswer | undefined;
  /** aborts the outstanding client request; pass `clientSignal` to the ClientPort */
  private readonly clientAbort = new AbortController();
  private clientOutstanding = false;
  private clientGrace: NodeJS.Timeout | undefined;
  private readonly clientCancelGraceMs: number;
  private readonly onClientRequest: ((pending: PendingInteraction, open: boolean) => void) | undefined;
  private ended = false;
  private resolveFinished!: () => void;
  /** resolves once the interaction ended and its host answer (if any) was taken or failed */
  readonly finished: Promise<void> = new Promise((resolve) => (this.resolveFinished = resolve));
  private readonly cleanups: Array<() => void> = [];

  constructor(
    init: PendingInit,
    private readonly onEnded: (pending: PendingInteraction) => void,
  ) {
    this.ctx = init.ctx;
    this.family = init.family;
    this.label = init.label;
    this.sessionId = init.ctx.sessionId;
    this.turnId = init.ctx.turnId;
    this.requestId = init.requestId;
    this.incarnation = init.ctx.incarnation;
    this.fallback = init.fallback;
    this.clientCancelGraceMs = init.clientCancelGraceMs ?? 0;
    this.onClientRequest = init.onClientRequest;
    this.key = interactionKey(init.family, this.incarnation, this.sessionId, this.requestId);

    const onAbort = (): void => {
      // Deferred one macrotask: if the turn ended because the host exited, the host-exit path
      // (engine withdrawAll("host-exit") or host.onExit) gets to drop it first.
      const timer = setImmediate(() => void this.withdraw("turn-end"));
      this.cleanups.push(() => clearImmediate(timer));
    };
    if (init.ctx.signal.aborted) onAbort();
    else {
      init.ctx.signal.addEventListener("abort", onAbort, { once: true });
      this.cleanups.push(() => init.ctx.signal.removeEventListener("abort", onAbort));
    }
    const hostExits = init.ctx.native.onExit(({ incarnation }) => {
      if (incarnation === this.incarnation) this.drop("host exited");
    });
    this.cleanups.push(() => hostExits.dispose());
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** false once ended or once the turn is over: the client must not be asked any more */
  get shouldAsk(): boolean {
    return !this.ended && !this.ctx.signal.aborted;
  }

  /**
   * Ask the client (`request` gets the signal that ends the client request with the interaction)
   * and settle the client side of the interaction. Resolves `{ response }` with whatever the client
   * answered; undefined when there is nothing left to do: the interaction was over before asking,
   * or ended while the client answered (the late answer is dropped), or the client request failed
   * (then the fallback was applied, or the turn failed with `ifClientFails` when no fallback is safe).
   */
  async askClient<R>(request: (signal: AbortSignal) => Promise<R>, ifClientFails: BridgeError): Promise<{ response: R } | undefined> {
    if (!this.shouldAsk) return undefined;
    let response: R;
    try {
      response = await request(this.clientSignal());
    } catch (error) {
      this.clientSettled();
      if (!this.ended) await this.fallBack(`client request failed: ${describeError(error)}`, ifClientFails);
      return undefined;
    }
    this.clientSettled();
    if (this.ended) {
      this.log("debug", "late client answer dropped");
      return undefined;
    }
    return { response };
  }

  /** signal for the client request; marks the client request outstanding until `clientSettled` */
  private clientSignal(): AbortSignal {
    if (!this.clientOutstanding) {
      this.clientOutstanding = true;
      this.onClientRequest?.(this, true);
    }
    return this.clientAbort.signal;
  }

  /** the client request is over: answered, failed, or rejected after `$/cancel_request` */
  private clientSettled(): void {
    if (this.clientGrace !== undefined) {
      clearTimeout(this.clientGrace);
      this.clientGrace = undefined;
    }
    if (!this.clientOutstanding) return;
    this.clientOutstanding = false;
    this.onClientRequest?.(this, false);
  }

  /** the client produced a valid answer */
  async answer(answer: HostAnswer): Promise<void> {
    if (this.ended) {
      this.log("debug", "late client answer dropped");
      return;
    }
    if (this.ctx.signal.aborted) return this.withdraw("turn-end");
    await this.end(answer, "answered", true);
  }

  /**
   * Send `answer` and fail the turn without waiting for the host's reply: once answered, the
   * host may resume and finish the turn before its reply arrives, and the failure must win.
   * The answer's call is issued first, so the host sees it before the engine's stopGeneration.
   */
  async answerAndFailTurn(answer: HostAnswer, error: BridgeError): Promise<void> {
    const sent = this.answer(answer);
    this.ctx.failTurn(error);
    await sent;
  }

  /** the client failed, declined or answered something unusable */
  async fallBack(why: string, ifNoFallback: BridgeError): Promise<void> {
    if (this.ended) return;
    if (this.ctx.signal.aborted) return this.withdraw("turn-end");
    if (this.fallback === undefined) {
      await this.end(undefined, why, false);
      this.ctx.failTurn(ifNoFallback);
      return;
    }
    await this.end(this.fallback, why, true);
  }

  async withdraw(reason: WithdrawReason): Promise<void> {
    if (this.ended) return;
    if (reason === "host-exit") return this.drop("host exited");
    await this.end(this.fallback, `withdrawn (${reason})`, false, reason === "cancel");
  }

  drop(why: string): void {
    if (this.ended) return;
    void this.end(undefined, `dropped: ${why}`, false);
  }

  /**
   * `clientCancelled`: the client sent the cancel itself, so it answers the request on its own
   * (see the file comment); the `$/cancel_request` waits for the grace.
   */
  private async end(answer: HostAnswer | undefined, why: string, failTurnOnSendError: boolean, clientCancelled = false): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      await this.settle(answer, why, failTurnOnSendError, clientCancelled);
    } finally {
      this.resolveFinished();
    }
  }

  private async settle(answer: HostAnswer | undefined, why: string, failTurnOnSendError: boolean, clientCancelled: boolean): Promise<void> {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    // the transport orders a cancel after an answer it already read until this point (src/acp/wire-order.ts)
    this.ctx.client.interactionEnded?.(this.clientAbort.signal);
    if (this.clientOutstanding && clientCancelled && this.clientCancelGraceMs > 0) {
      // the client cancelled itself and answers on its own: `$/cancel_request` only if it does not
      this.clientGrace = setTimeout(() => {
        this.clientGrace = undefined;
        this.log("info", "client did not answer after its cancel; cancelling the request", { graceMs: this.clientCancelGraceMs });
        this.cancelClientRequest(why);
      }, this.clientCancelGraceMs);
      // the grace never keeps a closing bridge alive
      this.clientGrace.unref();
    } else {
      this.cancelClientRequest(why);
    }
    this.onEnded(this);
    if (answer === undefined) {
      this.log("info", "ended without a host answer", { why });
      return;
    }
    if (this.ctx.native.incarnation !== this.incarnation) {
      this.log("warn", "host restarted; answer dropped", { why, current: this.ctx.native.incarnation });
      return;
    }
    this.log("info", "answering host", { why, answer: describeAnswer(answer) });
    try {
      const result = await sendAnswer(this.ctx, this.requestId, answer);
      if (result === false) this.log("warn", "host did not accept the answer (unknown or already answered request)");
    } catch (error) {
      this.log("warn", "answering host failed", { error: describeError(error) });
      if (failTurnOnSendError && !this.ctx.signal.aborted) {
        this.ctx.failTurn(
          new BridgeErrorClass("HOST_CALL_FAILED", `ZCode did not take the answer to its ${this.label} request`, {
            cause: error,
          }),
        );
      }
    }
  }

  /** abort the client request (the SDK sends `$/cancel_request` for it unless its answer already arrived) */
  private cancelClientRequest(why: string): void {
    if (!this.clientOutstanding) return;
    this.clientAbort.abort(new BridgeErrorClass("INTERNAL", `interaction ended: ${why}`));
    this.clientSettled();
  }

  private log(level: "debug" | "info" | "warn", message: string, fields: Record<string, unknown> = {}): void {
    this.ctx.logger[level](`${this.label}: ${message}`, {
      sessionId: this.sessionId,
      turnId: this.turnId,
      requestId: this.requestId,
      incarnation: this.incarnation,
      ...fields,
    });
  }
}

function describeAnswer(answer: HostAnswer): string {
  return answer.method === "permission" ? `option ${answer.optionId}` : `elicitation ${answer.action}`;
}

function sendAnswer(ctx: InteractionContext, requestId: string, answer: HostAnswer): Promise<unknown> {
  const where = { workspacePath: ctx.workspacePath, sessionId: ctx.sessionId, requestId };
  if (answer.method === "permission") return ctx.native.answerPermission({ ...where, optionId: answer.optionId });
  return ctx.native.answerQuestion({
    ...where,
    answer: answer.action === "accept" ? { action: "accept", content: answer.content } : { action: answer.action },
  });
}
