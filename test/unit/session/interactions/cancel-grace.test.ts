/**
 * `$/cancel_request` only for client requests still unanswered (pending.ts): after the client's
 * own `session/cancel` (withdraw reason "cancel") the host is answered at once, and the client's
 * open request gets `clientCancelGraceMs` to be answered by the client itself before it is
 * cancelled. Every other end (turn end, close, disconnect, host exit) cancels it at once.
 * Timers are faked (setTimeout only), so the grace is stepped through, not waited for.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { CLIENT_CANCEL_GRACE_MS, createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { until } from "../../../support/until.js";
import { BASH_REQUEST, makeContext, settle, TURNS } from "./support/context.js";

const GRACE = 5_000;
const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: GRACE });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function askedPermission() {
  const t = makeContext();
  const b = broker();
  b.handlePermission(BASH_REQUEST, t.ctx);
  await until(() => t.client.permissions.length === 1, TURNS);
  return { t, b, asked: t.client.permissions[0]! };
}

describe("the client request after the client's own cancel", () => {
  it("defaults to a grace of a few seconds", () => {
    expect(CLIENT_CANCEL_GRACE_MS).toBeGreaterThanOrEqual(1_000);
    expect(CLIENT_CANCEL_GRACE_MS).toBeLessThanOrEqual(5_000);
  });

  it("the host gets its deny at once; the client's own answer closes the request: no $/cancel_request", async () => {
    const { t, b, asked } = await askedPermission();
    await b.withdrawAll("ses_1", "cancel");
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "deny", workspacePath: "/w" }]);
    expect(b.pendingCount()).toBe(0);
    expect(b.clientRequestCount()).toBe(1);
    expect(asked.signal.aborted).toBe(false);
    asked.resolve({ outcome: { outcome: "cancelled" } });
    await until(() => b.clientRequestCount() === 0, { ...TURNS, what: "the client request closed" });
    vi.advanceTimersByTime(GRACE * 2);
    await settle();
    expect(asked.signal.aborted).toBe(false);
    expect(t.host.permissionAnswers()).toHaveLength(1);
  });

  it("a late allow from the client is dropped, never forwarded", async () => {
    const { t, b, asked } = await askedPermission();
    await b.withdrawAll("ses_1", "cancel");
    asked.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await until(() => b.clientRequestCount() === 0, TURNS);
    await settle();
    expect(t.host.permissionAnswers().map((a) => a.optionId)).toEqual(["deny"]);
    expect(asked.signal.aborted).toBe(false);
  });

  it("a client that does not answer gets $/cancel_request when the grace is over, not before", async () => {
    const { t, b, asked } = await askedPermission();
    await b.withdrawAll("ses_1", "cancel");
    vi.advanceTimersByTime(GRACE - 1);
    expect(asked.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(asked.signal.aborted).toBe(true);
    await settle();
    expect(b.clientRequestCount()).toBe(0);
    expect(t.host.permissionAnswers()).toHaveLength(1);
  });

  it("the same holds for a form elicitation (questions)", async () => {
    const t = makeContext({ capabilities: { elicitation: { form: {} } } });
    const b = broker();
    b.handleUserInput(
      {
        requestId: "q_1",
        sessionId: "ses_1",
        toolName: "AskUserQuestion",
        questions: [{ question: "Which runner?", header: "Runner", options: [{ value: "vitest", label: "Vitest" }] }],
      },
      t.ctx,
    );
    await until(() => t.client.elicitations.length === 1, TURNS);
    await b.withdrawAll("ses_1", "cancel");
    expect(t.host.elicitationAnswers().map((a) => a.action)).toEqual(["cancel"]);
    expect(t.client.elicitations[0]!.signal.aborted).toBe(false);
    vi.advanceTimersByTime(GRACE);
    expect(t.client.elicitations[0]!.signal.aborted).toBe(true);
  });
});

describe("every other end cancels the client request at once", () => {
  it.each(["turn-end", "close", "disconnect", "host-exit"] as const)("withdrawAll(%s)", async (reason) => {
    const { b, asked } = await askedPermission();
    await b.withdrawAll("ses_1", reason);
    expect(asked.signal.aborted).toBe(true);
    await settle();
    expect(b.clientRequestCount()).toBe(0);
  });

  it("the turn signal aborting (ZCode ended the turn)", async () => {
    const { t, b, asked } = await askedPermission();
    t.turn.abort();
    await until(() => asked.signal.aborted, { ...TURNS, what: "the client request cancelled" });
    expect(b.clientRequestCount()).toBe(0);
  });
});
