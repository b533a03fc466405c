/**
 * A `ClientPort` that records every session/update (for engine unit tests), and a stub
 * `InteractionBroker` that records what it was given.
 */
import type { ClientCapabilities, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ClientPort } from "../../src/session/client-port.js";
import type { InteractionBroker, InteractionContext, WithdrawReason } from "../../src/session/interactions/types.js";

export class RecordingClient implements ClientPort {
  capabilities: ClientCapabilities = {};
  readonly notifications: SessionNotification[] = [];
  private waiters: Array<{ test: (n: SessionNotification) => boolean; resolve: (n: SessionNotification) => void }> = [];

  async sessionUpdate(notification: SessionNotification): Promise<void> {
    this.notifications.push(structuredClone(notification));
    this.waiters = this.waiters.filter((w) => (w.test(notification) ? (w.resolve(notification), false) : true));
  }

  async requestPermission(): Promise<never> {
    throw new Error("RecordingClient: no permission requests expected");
  }

  async createElicitation(): Promise<never> {
    throw new Error("RecordingClient: no elicitations expected");
  }

  updates(sessionId?: string): SessionUpdate[] {
    return this.notifications.filter((n) => !sessionId || n.sessionId === sessionId).map((n) => n.update);
  }

  kinds(sessionId?: string): string[] {
    return this.updates(sessionId).map((u) => u.sessionUpdate);
  }

  /** Resolves with the first recorded or future notification matching `test`. */
  waitFor(test: (n: SessionNotification) => boolean): Promise<SessionNotification> {
    const found = this.notifications.find(test);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  clear(): void {
    this.notifications.length = 0;
  }
}

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
