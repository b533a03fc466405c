/**
 * Properties of the session/update queue that merges text deltas while the client is behind
 * (src/session/update-coalescer.ts): whatever the timing of the client's writes, the client
 * receives the same updates in the same order, with each message's text unchanged; only
 * neighbouring plain text chunks of one kind and one message are merged; nothing is merged when
 * the client keeps up; every caller's promise settles with the write that carried its update.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { UpdateCoalescer } from "../../../src/session/update-coalescer.js";

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const textChunk = fc
  .record({
    sessionUpdate: fc.constantFrom("agent_message_chunk" as const, "agent_thought_chunk" as const),
    content: fc.record({ type: fc.constant("text" as const), text: fc.string({ maxLength: 12 }) }),
    messageId: fc.constantFrom("m1", "m2", undefined),
  })
  .map((u) => (u.messageId === undefined ? { sessionUpdate: u.sessionUpdate, content: u.content } : u) as SessionUpdate);

const otherUpdate: fc.Arbitrary<SessionUpdate> = fc.oneof(
  fc.record({
    sessionUpdate: fc.constant("tool_call" as const),
    toolCallId: fc.constantFrom("c1", "c2"),
    title: fc.string({ maxLength: 5 }),
  }),
  fc.record({
    sessionUpdate: fc.constant("agent_message_chunk" as const),
    content: fc.record({ type: fc.constant("text" as const), text: fc.string({ maxLength: 5 }) }),
    _meta: fc.constant({ k: 1 }),
  }),
  fc.constant({ sessionUpdate: "agent_message_chunk" as const, content: { type: "image" as const, data: "AA==", mimeType: "image/png" } }),
  fc.constant({ sessionUpdate: "user_message_chunk" as const, content: { type: "text" as const, text: "u" } }),
);

type Op = { push: SessionUpdate } | { settle: "ok" | "fail" };
const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.oneof({ weight: 4, arbitrary: textChunk }, otherUpdate).map((u) => ({ push: u })) },
    { weight: 3, arbitrary: fc.constantFrom<Op>({ settle: "ok" }, { settle: "fail" }) },
  ),
  { maxLength: 60 },
);

function isPlainText(u: SessionUpdate): boolean {
  if (u.sessionUpdate !== "agent_message_chunk" && u.sessionUpdate !== "agent_thought_chunk") return false;
  const keys = Object.keys(u).filter((k) => k !== "sessionUpdate" && k !== "content" && k !== "messageId");
  return keys.length === 0 && u.content.type === "text" && Object.keys(u.content).length === 2;
}

/** Merge neighbouring plain text chunks of one kind and message: what a client reassembles. */
function normalize(updates: readonly SessionUpdate[]): unknown[] {
  const out: any[] = [];
  for (const u of updates) {
    const last = out[out.length - 1];
    if (isPlainText(u) && last?.plain && last.kind === u.sessionUpdate && last.messageId === (u as any).messageId)
      last.text += (u as any).content.text;
    else if (isPlainText(u))
      out.push({ plain: true, kind: u.sessionUpdate, messageId: (u as any).messageId, text: (u as any).content.text });
    else out.push(u);
  }
  return out;
}

interface Harness {
  queue: UpdateCoalescer;
  sent: SessionUpdate[];
  pending: Array<{ update: SessionUpdate; resolve(): void; reject(e: Error): void }>;
}

function harness(maxMergedChars = 20, merge = true): Harness {
  const sent: SessionUpdate[] = [];
  const pending: Harness["pending"] = [];
  const queue = new UpdateCoalescer({
    send: (update) =>
      new Promise<void>((resolve, reject) => {
        sent.push(update);
        pending.push({ update, resolve, reject });
      }),
    maxMergedChars,
    merge,
    highWaterChars: 600,
    lowWaterChars: 300,
  });
  return { queue, sent, pending };
}

describe("UpdateCoalescer properties", () => {
  it("the client gets the same updates in the same order, with every message's text unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(ops, fc.boolean(), async (script, openLate) => {
        const h = harness();
        if (!openLate) h.queue.open();
        const pushed: SessionUpdate[] = [];
        const settled: Array<"ok" | "fail" | undefined> = [];
        const promises: Promise<void>[] = [];
        for (const op of script) {
          if ("push" in op) {
            const index = pushed.length;
            pushed.push(op.push);
            settled.push(undefined);
            const p = h.queue.push(op.push);
            promises.push(p);
            p.then(
              () => (settled[index] = "ok"),
              () => (settled[index] = "fail"),
            );
          } else {
            h.queue.open();
            const next = h.pending.shift();
            if (op.settle === "ok") next?.resolve();
            else next?.reject(new Error("client gone"));
          }
          await flush();
        }
        h.queue.open();
        while (h.pending.length > 0 || h.queue.queued > 0) {
          h.pending.shift()?.resolve();
          await flush();
        }
        await h.queue.drain();
        await flush();
        expect(normalize(h.sent)).toEqual(normalize(pushed));
        // merges never exceed the cap unless one delta alone does
        for (const u of h.sent) if (isPlainText(u)) expect((u as any).content.text.length <= 20 || pushed.some((p) => p === u)).toBe(true);
        // every caller's promise settled
        expect(settled.every((s) => s !== undefined)).toBe(true);
        // non-text updates are passed through as they are
        for (const u of pushed) if (!isPlainText(u)) expect(h.sent).toContain(u);
      }),
      { numRuns: 200 },
    );
  });

  it("merges nothing while the client keeps up: each update is written alone, unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(textChunk, otherUpdate), { maxLength: 30 }), async (updates) => {
        const h = harness();
        h.queue.open();
        for (const u of updates) {
          const written = h.queue.push(u);
          await flush();
          h.pending.shift()?.resolve();
          await written;
        }
        expect(h.sent).toHaveLength(updates.length);
        h.sent.forEach((u, i) => expect(u).toBe(updates[i]));
        expect(h.queue.merged).toBe(0);
      }),
      { numRuns: 100 },
    );
  });

  it("a burst behind a slow write becomes a few notifications with the same text, promises settled per write", async () => {
    const h = harness(64 * 1024);
    h.queue.open();
    const first = h.queue.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" }, messageId: "m" });
    const rest = Array.from({ length: 1000 }, (_, i) =>
      h.queue.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i},` }, messageId: "m" }),
    );
    const tool = h.queue.push({ sessionUpdate: "tool_call", toolCallId: "c", title: "t" });
    const after = h.queue.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "z" }, messageId: "m" });
    await flush();
    expect(h.sent).toHaveLength(1); // only the first is being written
    let restDone = false;
    void Promise.all(rest).then(() => (restDone = true));
    h.pending.shift()!.resolve();
    await first;
    await flush();
    expect(restDone).toBe(false);
    h.pending.shift()!.resolve();
    await Promise.all(rest);
    while (h.pending.length > 0) {
      h.pending.shift()!.resolve();
      await flush();
    }
    await Promise.all([tool, after]);
    expect(h.sent.map((u) => u.sessionUpdate)).toEqual(["agent_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"]);
    expect((h.sent[1] as any).content.text).toBe(Array.from({ length: 1000 }, (_, i) => `${i},`).join(""));
    expect(h.queue.merged).toBe(999);
  });

  it("post (no promise) and push interleave in order; with merging off every update is written alone", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.oneof(textChunk, otherUpdate), fc.boolean()), { maxLength: 40 }),
        fc.boolean(),
        async (items, merge) => {
          const h = harness(1000, merge);
          h.queue.open();
          const promises: Promise<void>[] = [];
          for (const [update, usePost] of items) {
            if (usePost) h.queue.post(update);
            else promises.push(h.queue.push(update));
          }
          while (h.pending.length > 0 || h.queue.queued > 0) {
            h.pending.shift()?.resolve();
            await flush();
          }
          await Promise.all(promises);
          const pushed = items.map(([u]) => u);
          expect(normalize(h.sent)).toEqual(normalize(pushed));
          if (!merge) {
            expect(h.sent).toHaveLength(pushed.length);
            h.sent.forEach((u, i) => expect(u).toBe(pushed[i]));
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("drain waits for open() and for what was queued before it", async () => {
    const h = harness();
    let early = false;
    void h.queue.drain().then(() => (early = true));
    const a = h.queue.push({ sessionUpdate: "tool_call", toolCallId: "c", title: "t" });
    let drained = false;
    void h.queue.drain().then(() => (drained = true));
    await flush();
    expect(early).toBe(false); // not open yet
    h.queue.open();
    await flush();
    expect(early).toBe(true); // nothing was queued before it
    expect(drained).toBe(false); // `a` is still being written
    h.pending.shift()!.reject(new Error("gone"));
    await expect(a).rejects.toThrow("gone");
    await flush();
    expect(drained).toBe(true); // a failed write still counts as done
  });

  it("pressure: a promise above the high-water mark, settled at the low-water mark", async () => {
    const h = harness(64 * 1024);
    h.queue.open();
    expect(h.queue.pressure()).toBeUndefined();
    for (let i = 0; i < 4; i++) void h.queue.push({ sessionUpdate: "tool_call", toolCallId: `c${i}`, title: "x".repeat(10) });
    expect(h.queue.backlogChars).toBeGreaterThan(600);
    const pressure = h.queue.pressure();
    expect(pressure).toBeInstanceOf(Promise);
    expect(h.queue.pressure()).toBe(pressure);
    let relieved = false;
    void pressure!.then(() => (relieved = true));
    await flush();
    h.pending.shift()!.resolve(); // 3 queued × 256 = 768 > 300
    await flush();
    expect(relieved).toBe(false);
    h.pending.shift()!.resolve();
    await flush();
    h.pending.shift()!.resolve(); // 1 queued: 256 ≤ 300
    await flush();
    expect(relieved).toBe(true);
    expect(h.queue.pressure()).toBeUndefined();
  });
});
