/** A stub `InteractionBroker` that records what it was given (for engine and handler unit tests). */
import type { InteractionBroker, InteractionContext, WithdrawReason } from "../../src/session/interactions/types.js";

export interface BrokerCall {
  kind: "permission" | "userInput" | "providerHeaders";
  request: unknown;
  ctx: InteractionContext;
}

export class StubBroker implements InteractionBroker {
  readonly handled: BrokerCall[] = [];
  readonly withdrawals: Array<{ sessionId: string; reason: WithdrawReason }> = [];
  /** optional reaction to a request (e.g. call ctx.failTurn) */
  onRequest: ((call: BrokerCall) => void) | undefined;

  handlePermission(request: unknown, ctx: InteractionContext): void {
    this.record({ kind: "permission", request, ctx });
  }

  handleUserInput(request: unknown, ctx: InteractionContext): void {
    this.record({ kind: "userInput", request, ctx });
  }

  handleProviderHeaders(request: unknown, ctx: InteractionContext): void {
    this.record({ kind: "providerHeaders", request, ctx });
  }

  async withdrawAll(sessionId: string, reason: WithdrawReason): Promise<void> {
    this.withdrawals.push({ sessionId, reason });
  }

  pendingCount(): number {
    return 0;
  }

  clientRequestCount(): number {
    return 0;
  }

  private record(call: BrokerCall): void {
    this.handled.push(call);
    this.onRequest?.(call);
  }
}
