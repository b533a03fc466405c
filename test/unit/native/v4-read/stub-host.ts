/** A HostClient for the V4 reader's tests: records calls, answers them from handlers, holds the frame listener. */
import type { HostClient, HostEventSink, HostEventTarget, HostSubscription, ServiceName } from "../../../../src/host/types.js";
import { BridgeError } from "../../../../src/util/errors.js";
import { SUB } from "./frames.js";

export class StubHost implements HostClient {
  incarnation = 1;
  readonly calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  readonly handlers = new Map<string, (params: Record<string, unknown>) => unknown>();
  readonly allowed = new Set<string>();
  listener: HostEventSink | undefined;
  listenerTarget: HostEventTarget | undefined;
  listenerDisposed = false;
  /** every listener opened (in order), and whether it is still open */
  readonly listeners: Array<{ target: HostEventTarget; sink: HostEventSink; open: boolean }> = [];
  /** frames handed to a listener (one per listener a frame reaches) */
  deliveries = 0;
  /** frames sent from inside subscribeConversationV4, before its answer */
  early: unknown[] = [];

  constructor() {
    this.handlers.set("subscribeConversationV4", () => {
      for (const frame of this.early) void this.listener?.onEvent(frame);
      return { ack: { subscriptionId: SUB, mode: "snapshot", logEpoch: "E1" } };
    });
    for (const method of ["resyncConversationV4", "unsubscribeConversationV4", "helloConversationV4", "initializeConversationV4"]) {
      this.handlers.set(method, () => (method === "helloConversationV4" ? { kind: "hello", protocolVersion: 3 } : null));
    }
  }

  callsOf(method: string): Array<Record<string, unknown>> {
    return this.calls.filter((c) => c.method === method).map((c) => c.params);
  }

  /** a frame of the workspace: every open listener gets it, as ZCode's workspace-wide event does */
  frame(frame: unknown): void {
    for (const listener of [...this.listeners]) {
      if (!listener.open) continue;
      this.deliveries++;
      void listener.sink.onEvent(structuredClone(frame));
    }
  }

  /** the host ends every open listener (a host exit, a channel overflow) */
  endListeners(error: BridgeError | null): void {
    for (const listener of [...this.listeners]) {
      if (!listener.open) continue;
      listener.open = false;
      listener.sink.onEnd(error);
    }
  }

  async call<T = unknown>(_service: ServiceName, method: string, params: Record<string, unknown>): Promise<T> {
    this.calls.push({ method, params: structuredClone(params) });
    const handler = this.handlers.get(method);
    if (!handler) throw new BridgeError("HOST_CALL_FAILED", `Method not found: ${method}`);
    return (await handler(params)) as T;
  }
  async operate<T = unknown>(): Promise<T> {
    throw new Error("operate is not used on the V4 read path");
  }
  async protocolId(): Promise<string> {
    return "zcode-task-v3";
  }
  async history(): Promise<unknown> {
    throw new Error("no held histories on the V4 read path");
  }
  async allows(service: ServiceName, method: string): Promise<boolean> {
    return this.allowed.has(`${service}.${method}`) || this.allowed.has("*");
  }
  async subscribe(target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    this.listenerTarget = target;
    this.listener = sink;
    const entry = { target, sink, open: true };
    this.listeners.push(entry);
    return {
      id: `route-${this.listeners.length}`,
      incarnation: this.incarnation,
      dispose: async () => {
        entry.open = false;
        this.listenerDisposed = true;
      },
    };
  }
  onExit() {
    return { dispose() {} };
  }
  async close(): Promise<void> {}
}
