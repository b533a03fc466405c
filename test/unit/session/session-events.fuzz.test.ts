/**
 * Fuzz of the whole event path of one session (router, validation, translation, turn binding,
 * terminal handling) with the in-memory fake host: a prompt turn made of random events (valid
 * deltas and tool events, unknown and malformed events, foreign turns, seq regressions, raw junk,
 * duplicate terminals). Every prompt settles (a stop reason or a BridgeError, nothing else), every
 * update sent to the client is valid against the ACP schema, and the next ordinary prompt works.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BridgeError } from "../../../src/util/errors.js";
import { checkUpdateKeys, validateDefinition } from "../../support/acp-schema.js";
import type { FakeSession } from "../../support/fake-host.js";
import { openSession, setup, updatesWritten } from "./harness.js";

type Step = (s: FakeSession) => void;

const id = fc.constantFrom("c1", "c2", "c3");
const text = fc.string({ maxLength: 6 });
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(text, fc.constantFrom("m1", "m2")).map(
      ([t, m]): Step =>
        (s) =>
          s.text(t, m),
    ),
  },
  {
    weight: 2,
    arbitrary: text.map(
      (t): Step =>
        (s) =>
          s.event("model.streaming", { kind: "reasoning_delta", assistantMessageId: "m1", delta: t }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom("tool_input_start", "tool_input_delta", "tool_input_end", "tool_call"), id).map(
      ([kind, toolCallId]): Step =>
        (s) =>
          s.event("model.streaming", {
            kind,
            assistantMessageId: "m1",
            toolCallId,
            toolName: "Bash",
            delta: '{"c',
            input: { command: "ls" },
          }),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom("scheduled", "started", "progress", "result", "error", "batch"), id).map(
      ([kind, toolCallId]): Step =>
        (s) =>
          s.event("tool.updated", {
            kind,
            toolCallId,
            toolName: "Bash",
            input: { command: "ls" },
            result: { success: true, content: "ok" },
            error: { message: "no" },
            toolCallIds: [toolCallId],
            stdoutTail: "x",
          }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("turn.mystery", "part.delta", "session.updated").map(
      (type): Step =>
        (s) =>
          s.event(type, { note: 1 }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.jsonValue({ maxDepth: 2 }).map(
      (payload): Step =>
        (s) =>
          s.event("model.streaming", { kind: "text_delta", delta: payload }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Step>((s) => s.event("model.streaming", { kind: "text_delta", delta: "old" }, { seq: Math.max(0, s.seq - 1) })),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Step>((s) => s.event("model.streaming", { kind: "text_delta", delta: "foreign" }, { turnId: "turn-other" })),
  },
  {
    weight: 1,
    arbitrary: fc.jsonValue({ maxDepth: 2 }).map(
      (junk): Step =>
        (s) =>
          s.raw(junk),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("success", "cancelled", "error_max_turns", "weird").map(
      (r): Step =>
        (s) =>
          s.event("turn.completed", { resultType: r }),
    ),
  },
  { weight: 1, arbitrary: fc.constant<Step>((s) => s.event("turn.failed", { error: { message: "model failed" } })) },
);

describe("session event path fuzz", () => {
  it("random turns: the prompt settles with a stop reason or a BridgeError, updates are schema-valid, the session recovers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const h = setup({ cancelGraceMs: 50 });
        const { opened, engine } = await openSession(h);
        h.host.script.onPrompt = (s) => {
          s.startTurn();
          for (const run of steps) run(s);
          if (s.currentTurnId) s.complete();
        };
        const outcome = await engine.prompt([{ type: "text", text: "fuzz" }]).then(
          (response) => ({ response }),
          (error: unknown) => ({ error }),
        );
        if ("error" in outcome) expect(outcome.error).toBeInstanceOf(BridgeError);
        else expect(["end_turn", "cancelled", "max_turn_requests"]).toContain(outcome.response.stopReason);
        // the next ordinary prompt works
        h.host.script.onPrompt = (s) => {
          s.startTurn();
          s.text("still here", "m9");
          s.complete();
        };
        await expect(engine.prompt([{ type: "text", text: "next" }])).resolves.toMatchObject({ stopReason: "end_turn" });
        await updatesWritten(h);
        for (const notification of h.client.notifications) {
          expect(validateDefinition("SessionNotification", notification)).toEqual([]);
          expect(checkUpdateKeys(notification.update as unknown as Record<string, unknown>)).toEqual([]);
          expect(notification.sessionId).toBe(opened.sessionId);
        }
      }),
      { numRuns: 120 },
    );
  });
});
