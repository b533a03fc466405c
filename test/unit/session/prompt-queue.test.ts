/**
 * The prompts waiting behind a running turn (src/session/prompt-queue.ts): queued in ZCode with
 * `queue` delivery, taken first in first out, bounded, cancelled once each with their queue items
 * removed, and a failed send answered where the prompt is (still waiting, or already running).
 */
import { describe, expect, it } from "vitest";
import type { NativeApi, SentInput } from "../../../src/native/native-api.js";
import { MAX_QUEUED_PROMPTS, PromptQueue } from "../../../src/session/prompt-queue.js";
import type { ActiveTurn } from "../../../src/session/active-turn.js";
import { BridgeError } from "../../../src/util/errors.js";
import { silentLogger } from "../../../src/log/logger.js";

const WHERE = { workspacePath: "/w", sessionId: "s1" };
const INPUT = { content: "later", attachments: [] };

interface Sent {
  params: Record<string, unknown>;
  resolve(value: SentInput): void;
  reject(error: unknown): void;
}

function rig() {
  const sends: Sent[] = [];
  const removed: string[] = [];
  const failedRunning: Array<{ turn: ActiveTurn; error: BridgeError }> = [];
  const native = {
    sendPrompt: (params: Record<string, unknown>) => new Promise<SentInput>((resolve, reject) => sends.push({ params, resolve, reject })),
    removeQueuedInput: async (params: { queueItemId: string }) => {
      removed.push(params.queueItemId);
    },
  } as unknown as NativeApi;
  const queue = new PromptQueue({
    native,
    where: WHERE,
    logger: silentLogger,
    failRunning: (turn, error) => failedRunning.push({ turn, error }),
  });
  return { queue, sends, removed, failedRunning };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("prompt queue", () => {
  it("sends each prompt to ZCode with queue delivery and hands them out first in, first out", async () => {
    const { queue, sends } = rig();
    void queue.add(INPUT);
    void queue.add({ ...INPUT, content: "even later" });
    expect(sends.map((s) => [s.params.content, s.params.delivery])).toEqual([
      ["later", "queue"],
      ["even later", "queue"],
    ]);
    sends[0]!.resolve({ inputId: "in-1", delivery: "queue", queueItemId: "queue_in-1" });
    await flush();
    expect(queue.has("in-1")).toBe(true);
    const first = queue.next()!;
    expect(first.inputId).toBe("in-1");
    expect(first.sendIssued).toBe(true);
    expect(queue.has("in-1")).toBe(false);
    expect(queue.size).toBe(1);
  });

  it(`refuses a prompt beyond ${MAX_QUEUED_PROMPTS} waiting with SESSION_BUSY, sending nothing`, () => {
    const { queue, sends } = rig();
    for (let i = 0; i < MAX_QUEUED_PROMPTS; i++) void queue.add(INPUT);
    expect(() => queue.add(INPUT)).toThrow(
      expect.objectContaining({ code: "SESSION_BUSY", message: expect.stringMatching(/8 prompts waiting/) }),
    );
    expect(sends).toHaveLength(MAX_QUEUED_PROMPTS);
  });

  it("cancels every waiting prompt once, then removes their queue items once their sends are known", async () => {
    const { queue, sends, removed } = rig();
    const answers = [queue.add(INPUT), queue.add(INPUT)];
    sends[0]!.resolve({ inputId: "in-1", delivery: "queue", queueItemId: "queue_in-1" });
    const removals = queue.cancelAll();
    await expect(Promise.all(answers)).resolves.toEqual([{ stopReason: "cancelled" }, { stopReason: "cancelled" }]);
    expect(queue.size).toBe(0);
    await flush();
    expect(removed).toEqual(["queue_in-1"]);
    sends[1]!.resolve({ inputId: "in-2", delivery: "queue", queueItemId: "queue_in-2" });
    await removals;
    expect(removed).toEqual(["queue_in-1", "queue_in-2"]);
    await queue.cancelAll();
    expect(removed).toHaveLength(2);
  });

  it("with an error (the bridge gave up on the session's turns), answers the waiting prompts with it and still removes them", async () => {
    const { queue, sends, removed } = rig();
    const answer = queue.add(INPUT);
    sends[0]!.resolve({ inputId: "in-1", delivery: "queue", queueItemId: "queue_in-1" });
    const removals = queue.cancelAll(new BridgeError("HOST_CALL_FAILED", "the subscription ended"));
    await expect(answer).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    await removals;
    expect(removed).toEqual(["queue_in-1"]);
  });

  it("answers a failed send with its error: at once while waiting, through the engine once running", async () => {
    const { queue, sends, failedRunning } = rig();
    const waiting = queue.add(INPUT);
    void queue.add(INPUT);
    sends[0]!.reject(new BridgeError("HOST_CALL_FAILED", "refused"));
    await expect(waiting).rejects.toMatchObject({ code: "HOST_CALL_FAILED" });
    expect(queue.size).toBe(1);
    const running = queue.next()!;
    sends[1]!.reject(new BridgeError("SESSION_BUSY", "no live input"));
    await flush();
    expect(failedRunning.map((f) => [f.turn, f.error.code])).toEqual([[running, "SESSION_BUSY"]]);
  });

  it("fails every waiting prompt when the host went away", async () => {
    const { queue } = rig();
    const answers = [queue.add(INPUT), queue.add(INPUT)];
    queue.failAll(new BridgeError("HOST_EXITED", "The ZCode host stopped."));
    for (const answer of answers) await expect(answer).rejects.toMatchObject({ code: "HOST_EXITED" });
    expect(queue.size).toBe(0);
  });
});
