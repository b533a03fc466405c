/**
 * The turn boundary in the update queue (src/session/update-coalescer.ts `barrier`, adr/0036):
 * what is posted behind it waits until it is lifted, `barrier.post` goes in front of it, `passed`
 * resolves once everything in front was written, and what waits behind a barrier does not hold
 * back the host channel (`pressure`).
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { UpdateCoalescer } from "../../../src/session/update-coalescer.js";

const chunk = (text: string): SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function queue(options: { highWaterChars?: number; lowWaterChars?: number } = {}) {
  const written: string[] = [];
  const updates = new UpdateCoalescer({
    send: async (update) =>
      void written.push(update.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : "?"),
    merge: false,
    ...options,
  });
  updates.open();
  return { updates, written };
}

describe("the update queue's turn boundary", () => {
  it("writes the ended turn's final updates in front of the boundary and the next turn's only after the lift", async () => {
    const { updates, written } = queue();
    updates.post(chunk("a1"));
    const boundary = updates.barrier();
    updates.post(chunk("b1")); // the next turn
    boundary.post(chunk("a-usage")); // the ended turn's own, posted later
    await boundary.passed();
    expect(written).toEqual(["a1", "a-usage"]);
    await flush();
    expect(written).toEqual(["a1", "a-usage"]);
    boundary.lift();
    await updates.drain();
    expect(written).toEqual(["a1", "a-usage", "b1"]);
  });

  it("keeps two boundaries in order: the second turn's answer waits for the first boundary too", async () => {
    const { updates, written } = queue();
    const first = updates.barrier();
    updates.post(chunk("b1"));
    const second = updates.barrier();
    second.post(chunk("b-usage"));
    updates.post(chunk("c1"));
    let secondPassed = false;
    void second.passed().then(() => (secondPassed = true));
    await flush();
    expect(secondPassed).toBe(false);
    first.lift();
    await second.passed();
    expect(written).toEqual(["b1", "b-usage"]);
    second.lift();
    await updates.drain();
    expect(written).toEqual(["b1", "b-usage", "c1"]);
  });

  it("does not hold back the host channel for what waits behind a boundary", () => {
    const { updates } = queue({ highWaterChars: 1000, lowWaterChars: 100 });
    const boundary = updates.barrier();
    for (let i = 0; i < 20; i++) updates.post(chunk("x".repeat(200)));
    expect(updates.pressure()).toBeUndefined();
    boundary.lift();
    expect(updates.pressure()).toBeInstanceOf(Promise);
  });

  it("once the answer is handed out, what waits behind waits for the client, and holds back the host channel again", async () => {
    const { updates } = queue({ highWaterChars: 1000, lowWaterChars: 100 });
    const first = updates.barrier();
    for (let i = 0; i < 20; i++) updates.post(chunk("x".repeat(200)));
    const second = updates.barrier(); // a later turn ended too, its answer not handed out yet
    for (let i = 0; i < 20; i++) updates.post(chunk("y".repeat(200)));
    expect(updates.pressure()).toBeUndefined();
    // the first answer is out (a client that stops reading stdout never lets it be written):
    // the first turn's followers now count; the second's still wait for us
    first.answered();
    const relief = updates.pressure();
    expect(relief).toBeInstanceOf(Promise);
    first.lift();
    second.answered();
    second.lift();
    await updates.drain();
    await relief;
    expect(updates.pressure()).toBeUndefined();
  });

  it("counts only the part behind the first unanswered boundary as held", () => {
    const { updates } = queue({ highWaterChars: 1000, lowWaterChars: 100 });
    const first = updates.barrier();
    first.answered();
    for (let i = 0; i < 2; i++) updates.post(chunk("x".repeat(200))); // 2 × 456 counted, below the mark
    const second = updates.barrier();
    for (let i = 0; i < 20; i++) updates.post(chunk("y".repeat(200))); // held for the second answer
    expect(updates.pressure()).toBeUndefined();
    second.post(chunk("z".repeat(200))); // in front of the second boundary: counted
    expect(updates.pressure()).toBeInstanceOf(Promise);
  });
});
