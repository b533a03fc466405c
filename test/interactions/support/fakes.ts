/**
 * Fakes for the interaction broker's unit tests: a HostClient that records operate/call, a
 * ClientPort with scriptable answers and capability profiles, and a context builder.
 */
import type {
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type { HostClient, HostSubscription, SemanticOperation, ServiceName } from "../../../src/host/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import type { ClientPort } from "../../../src/session/client-port.js";
import { TaskV1Api } from "../../../src/native/zcode-task-v1/api.js";
import type { InteractionContext } from "../../../src/session/interactions/types.js";
import { BridgeError } from "../../../src/util/errors.js";

export interface HostRecord {
  kind: "operate" | "call";
  name: string;
  sessionId?: string;
  params: Record<string, unknown>;
  incarnation: number;
}

export class FakeHost implements HostClient {
  incarnation = 1;
  readonly records: HostRecord[] = [];
  readonly exitListeners = new Set<(info: { incarnation: number; error: BridgeError }) => void>();
  /** make operate fail (or return something) */
  operateResult: (operation: SemanticOperation) => Promise<unknown> = () => Promise.resolve(true);

  async call<T>(service: ServiceName, method: string, params: Record<string, unknown>): Promise<T> {
    this.records.push({ kind: "call", name: `${service}.${method}`, params, incarnation: this.incarnation });
    return null as T;
  }

  /** the release line the fake host plays */
  lineId = "zcode-task-v1";

  async protocolId(): Promise<string> {
    return this.lineId;
  }

  async operate<T>(operation: SemanticOperation, sessionId: string, params: Record<string, unknown>): Promise<T> {
    this.records.push({ kind: "operate", name: operation, sessionId, params, incarnation: this.incarnation });
    return (await this.operateResult(operation)) as T;
  }

  subscribe(): Promise<HostSubscription> {
    return Promise.reject(new Error("not used"));
  }

  onExit(listener: (info: { incarnation: number; error: BridgeError }) => void): { dispose(): void } {
    this.exitListeners.add(listener);
    return { dispose: () => void this.exitListeners.delete(listener) };
  }

  async close(): Promise<void> {}

  /** the host process exits; the next launch will be incarnation + 1 */
  exit(): void {
    const info = { incarnation: this.incarnation, error: new BridgeError("HOST_EXITED", "host exited") };
    for (const l of [...this.exitListeners]) l(info);
  }

  permissionAnswers(): Array<Record<string, unknown>> {
    return this.records.filter((r) => r.name === "respondPermission").map((r) => r.params);
  }

  elicitationAnswers(): Array<Record<string, unknown>> {
    return this.records.filter((r) => r.name === "respondStructuredInput").map((r) => r.params);
  }
}

export interface Asked<P, R> {
  params: P;
  signal: AbortSignal;
  resolve(response: R): void;
  reject(error: unknown): void;
  settled: boolean;
}

export const FORM_CAPABLE: ClientCapabilities = { elicitation: { form: {} } };
export const NO_ELICITATION: ClientCapabilities = {};

export class FakeClient implements ClientPort {
  readonly permissions: Array<Asked<RequestPermissionRequest, RequestPermissionResponse>> = [];
  readonly elicitations: Array<Asked<CreateElicitationRequest, CreateElicitationResponse>> = [];
  readonly notifications: SessionNotification[] = [];
  /** order of everything the client saw: "update:<kind>", "permission", "elicitation" */
  readonly order: string[] = [];
  autoPermission: ((params: RequestPermissionRequest) => RequestPermissionResponse | Error) | undefined;
  autoElicitation: ((params: CreateElicitationRequest) => CreateElicitationResponse | Error) | undefined;

  constructor(readonly capabilities: ClientCapabilities = FORM_CAPABLE) {}

  async sessionUpdate(notification: SessionNotification): Promise<void> {
    this.notifications.push(notification);
  }

  requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    this.order.push("permission");
    return this.ask(this.permissions, params, signal, this.autoPermission);
  }

  createElicitation(params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    this.order.push("elicitation");
    return this.ask(this.elicitations, params, signal, this.autoElicitation);
  }

  private ask<P, R>(
    list: Array<Asked<P, R>>,
    params: P,
    signal: AbortSignal,
    auto: ((params: P) => R | Error) | undefined,
  ): Promise<R> {
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

export interface TestContext {
  ctx: InteractionContext;
  host: FakeHost;
  client: FakeClient;
  turn: AbortController;
  failures: BridgeError[];
  updates: SessionUpdate[];
  known: Map<string, Partial<ToolCallUpdate>>;
}

export function makeContext(
  options: { host?: FakeHost; client?: FakeClient; sessionId?: string; turnId?: string; capabilities?: ClientCapabilities } = {},
): TestContext {
  const host = options.host ?? new FakeHost();
  const client = options.client ?? new FakeClient(options.capabilities ?? FORM_CAPABLE);
  const turn = new AbortController();
  const failures: BridgeError[] = [];
  const updates: SessionUpdate[] = [];
  const known = new Map<string, Partial<ToolCallUpdate>>();
  const sessionId = options.sessionId ?? "ses_1";
  const ctx: InteractionContext = {
    sessionId,
    workspacePath: "/w",
    turnId: options.turnId ?? "turn_1",
    incarnation: host.incarnation,
    native: new TaskV1Api(host),
    client,
    logger: silentLogger,
    signal: turn.signal,
    async update(update) {
      updates.push(update);
      client.order.push(`update:${update.sessionUpdate}`);
      await client.sessionUpdate({ sessionId, update });
    },
    failTurn(error) {
      failures.push(error);
    },
    describeToolCall(toolCallId) {
      return known.get(toolCallId);
    },
  };
  return { ctx, host, client, turn, failures, updates, known };
}

/** wait until `predicate` holds, yielding to the event loop between checks (no fixed sleeps) */
export async function until(predicate: () => boolean, what = "condition", maxTicks = 2000): Promise<void> {
  for (let i = 0; i < maxTicks; i += 1) {
    if (predicate()) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** let every queued microtask and immediate run (used to assert that nothing more happens) */
export async function settle(ticks = 20): Promise<void> {
  for (let i = 0; i < ticks; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

export const BASH_REQUEST = {
  requestId: "perm_7",
  sessionId: "ses_1",
  turnId: "turn_1",
  toolCallId: "call_42",
  toolName: "Bash",
  reason: "Run shell command",
  riskLevel: "high",
  input: { command: "npm test" },
  options: [
    { optionId: "allow_once", kind: "allow_once", name: "Allow once", response: { decision: "allow" } },
    {
      optionId: "allow_always",
      kind: "allow_always",
      name: "Always allow",
      response: {
        decision: "allow",
        permissionUpdates: [{ type: "addRules", behavior: "allow", rules: [{ toolName: "Bash", ruleContent: "npm test" }] }],
      },
    },
    { optionId: "deny", kind: "deny_once", name: "Deny", response: { decision: "deny" } },
  ],
};

export const PLAN_PERMISSION = {
  requestId: "permission-plan",
  sessionId: "ses_1",
  turnId: "turn_1",
  toolCallId: "exit-plan-tool",
  toolName: "ExitPlanMode",
  reason: "Approve the plan",
  riskLevel: "medium",
  input: { plan: "# Proposed plan\n\n1. Change it" },
  options: [
    { optionId: "allow-plan", kind: "allow_once", name: "Approve", response: { decision: "allow" } },
    { optionId: "deny-plan", kind: "reject_once", name: "Reject", response: { decision: "deny" } },
  ],
};

export const PLAN_USER_INPUT = {
  requestId: "user-input-plan",
  sessionId: "ses_1",
  turnId: "turn_1",
  toolCallId: "exit-plan-tool",
  toolName: "ExitPlanMode",
  prompt: "Review this implementation plan.",
  questions: [
    {
      question: "Review this implementation plan.",
      header: "Plan",
      options: [{ value: "approve", label: "Approve", description: "Exit plan mode and start implementation." }],
    },
  ],
  input: { plan: "# Proposed plan\n\n1. Change it" },
  schema: { interaction: "plan_approval" },
};

export const QUESTIONS = {
  requestId: "q_1",
  sessionId: "ses_1",
  turnId: "turn_1",
  toolCallId: "call_9",
  toolName: "AskUserQuestion",
  prompt: "A few choices before I start",
  questions: [
    {
      question: "Which test runner?",
      header: "Runner",
      options: [
        { value: "vitest", label: "Vitest" },
        { value: "node", label: "node:test", description: "No dependency" },
      ],
    },
    {
      question: "Which files should I test?",
      header: "Files",
      multiSelect: true,
      options: [
        { value: "auth", label: "auth.test.ts" },
        { value: "user", label: "user.test.ts" },
        { value: "db", label: "db.test.ts" },
      ],
    },
  ],
};
