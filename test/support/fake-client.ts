/**
 * The one in-memory ACP client (`ClientPort`) of the unit tests. It records every session/update
 * and the order of everything it saw. Permission requests and form elicitations are refused at
 * once by default (the session engine's tests expect none); with `requests: "hold"` (the
 * interaction broker's tests) each one is recorded and waits for the test to answer it, or is
 * answered by `autoPermission` / `autoElicitation`.
 */
import type {
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { ClientPort } from "../../src/session/client-port.js";

/** a client that advertises form elicitations */
export const FORM_CAPABLE: ClientCapabilities = { elicitation: { form: {} } };
/** a client that advertises no elicitation at all */
export const NO_ELICITATION: ClientCapabilities = {};

export interface FakeClientOptions {
  /** what the client advertises (default: nothing) */
  capabilities?: ClientCapabilities;
  /** "refuse" (default): a permission request or elicitation fails at once; "hold": it waits for the test */
  requests?: "refuse" | "hold";
}

export interface Asked<P, R> {
  params: P;
  signal: AbortSignal;
  resolve(response: R): void;
  reject(error: unknown): void;
  settled: boolean;
}

export class FakeClient implements ClientPort {
  capabilities: ClientCapabilities;
  readonly notifications: SessionNotification[] = [];
  readonly permissions: Array<Asked<RequestPermissionRequest, RequestPermissionResponse>> = [];
  readonly elicitations: Array<Asked<CreateElicitationRequest, CreateElicitationResponse>> = [];
  /** order of everything the client saw: "update:<kind>" (pushed by the test's context), "permission", "elicitation" */
  readonly order: string[] = [];
  autoPermission: ((params: RequestPermissionRequest) => RequestPermissionResponse | Error) | undefined;
  autoElicitation: ((params: CreateElicitationRequest) => CreateElicitationResponse | Error) | undefined;
  private readonly requests: "refuse" | "hold";
  private waiters: Array<{ test: (n: SessionNotification) => boolean; resolve: (n: SessionNotification) => void }> = [];

  constructor(options: FakeClientOptions = {}) {
    this.capabilities = options.capabilities ?? {};
    this.requests = options.requests ?? "refuse";
  }

  async sessionUpdate(notification: SessionNotification): Promise<void> {
    this.notifications.push(structuredClone(notification));
    this.waiters = this.waiters.filter((w) => (w.test(notification) ? (w.resolve(notification), false) : true));
  }

  requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    if (this.requests === "refuse") return Promise.reject(new Error("FakeClient: no permission requests expected"));
    this.order.push("permission");
    return this.ask(this.permissions, params, signal, this.autoPermission);
  }

  createElicitation(params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    if (this.requests === "refuse") return Promise.reject(new Error("FakeClient: no elicitations expected"));
    this.order.push("elicitation");
    return this.ask(this.elicitations, params, signal, this.autoElicitation);
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

  private ask<P, R>(list: Array<Asked<P, R>>, params: P, signal: AbortSignal, auto: ((params: P) => R | Error) | undefined): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const entry: Asked<P, R> = {
        params,
        signal,
        settled: false,
        resolve: (r) => {
          if (entry.settled) return;
          entry.settled = true;
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          if (entry.settled) return;
          entry.settled = true;
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      const onAbort = (): void => entry.reject(new Error("request cancelled ($/cancel_request)"));
      if (signal.aborted) {
        entry.reject(new Error("aborted before sending"));
        return;
      }
      signal.addEventListener("abort", onAbort);
      list.push(entry);
      if (auto) {
        const answer = auto(params);
        if (answer instanceof Error) entry.reject(answer);
        else entry.resolve(answer);
      }
    });
  }
}
