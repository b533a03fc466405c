/**
 * The interaction broker's unit tests: a context builder around the shared fake host (answering
 * every call with null) and fake client (holding every request for the test), waits, and the
 * host requests the tests replay. Waits are `until` (test/support/until.ts) with `TURNS`.
 */
import type { ClientCapabilities, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { silentLogger } from "../../../../../src/log/logger.js";
import { TaskV1Api } from "../../../../../src/native/zcode-task-v1/api.js";
import type { InteractionContext } from "../../../../../src/session/interactions/types.js";
import type { BridgeError } from "../../../../../src/util/errors.js";
import { FakeClient, FORM_CAPABLE } from "../../../../support/fake-client.js";
import { FakeHost } from "../../../../support/fake-host.js";
import type { UntilOptions } from "../../../../support/until.js";

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
  const host = options.host ?? new FakeHost({ calls: "null", incarnation: 1 });
  const client = options.client ?? new FakeClient({ capabilities: options.capabilities ?? FORM_CAPABLE, requests: "hold" });
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

/**
 * The interaction tests' bound on a wait (`until(check, TURNS)`): 2000 turns of the event loop, a
 * count rather than a time (the grace tests fake setTimeout; the broker needs only the loop to turn).
 */
export const TURNS = { checks: 2000 } as const satisfies UntilOptions;

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
