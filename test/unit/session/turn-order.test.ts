/**
 * Regression tests of adr/0036 (review 2026-12-07 findings 2, 3, 6, 9, 10, 12), each a fixed
 * interleaving played on the ZCode model of ./turns-model.ts around the session's real turns and
 * update queue: the next turn's updates after the previous answer; `cancelled` only for what ZCode
 * will not run (or whose turn was stopped); a steering text that fails before its send ends; a
 * steered turn of its own holds nothing; no stop for a turn that was seen to end; `$/cancel_request`
 * of one prompt cancels that prompt only.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RELEASES, settle, TurnsModel } from "./turns-model.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** what the wire shows, in order: `p1:chunk`, `answer p1 end_turn`, … */
function wire(model: TurnsModel): string[] {
  return model.wire.map((entry) => (entry.kind === "update" ? `${entry.label}:${entry.what}` : `answer ${entry.label} ${entry.outcome}`));
}

/** deliver every event ZCode owes, one at a time */
async function deliverAll(model: TurnsModel): Promise<void> {
  while (model.outbox.length > 0) {
    model.deliver();
    await settle(1);
  }
}

/** p1 runs (acked, its turn shown); p2 is queued behind it (acked) */
async function runningAndQueued(model: TurnsModel): Promise<void> {
  model.prompt();
  await settle();
  model.ack();
  await settle();
  await deliverAll(model);
  model.prompt();
  await settle();
  model.ack();
  await settle();
}

describe("adr/0036: the turn boundary", () => {
  it("writes the next queued turn's first words after the previous prompt's answer, not during its usage read (#2)", async () => {
    const model = new TurnsModel("v4");
    await runningAndQueued(model);
    model.chunk();
    model.end(); // p1 ends; ZCode starts p2 at once
    model.chunk(); // p2 streams while p1's usage is being read
    await deliverAll(model);
    await settle();
    // p1's usage read has not answered: p2's chunk waits behind p1's boundary
    expect(wire(model)).toEqual(["p1:chunk", "p1:final"]);
    model.usage();
    await settle();
    expect(wire(model)).toEqual(["p1:chunk", "p1:final", "p1:usage", "answer p1 end_turn", "p2:chunk"]);
  });

  it("holds nothing after a steering text that ran as its own turn (no request awaits its answer) (#9)", async () => {
    const model = new TurnsModel("v4");
    model.steer("startNewTurn"); // idle: a turn of its own
    await settle();
    model.ack();
    await settle();
    await deliverAll(model);
    model.end();
    await deliverAll(model);
    model.usage();
    await settle();
    model.prompt();
    await settle();
    model.ack();
    await settle();
    await deliverAll(model);
    model.chunk();
    await deliverAll(model);
    await settle();
    // no timer ran (fake timers): p's chunk is out without waiting for an answer nobody writes
    expect(wire(model).filter((line) => line.startsWith("p"))).toEqual(["p2:chunk"]);
  });
});

describe("adr/0036: cancelled only when ZCode will not run it", () => {
  it("does not answer a queued prompt cancelled before it is out of ZCode's queue; started meanwhile, its turn is stopped and ends it (#3a)", async () => {
    const model = new TurnsModel("v4");
    await runningAndQueued(model);
    model.prompt(); // p3: its send is on the chain, its ack not back: the stop routine waits for it
    await settle();
    model.turns.cancel();
    await settle();
    expect(model.answers.has("p2")).toBe(false);
    model.end(); // p1 ends before the removal reaches ZCode: ZCode starts p2
    await deliverAll(model);
    model.ack(); // p3's ack: the stop routine goes on, p2's removal finds nothing
    await settle();
    await deliverAll(model);
    model.usage();
    model.usage();
    await settle();
    expect(model.calls).toContain("stop p2");
    const started = model.starts.find((start) => start.label === "p2")!;
    expect(model.answers.get("p2")).toMatchObject({ outcome: "cancelled" });
    expect(model.answers.get("p2")!.seq).toBeGreaterThan(started.seq);
    expect(model.answers.get("p3")).toMatchObject({ outcome: "cancelled" });
    expect(model.queue).toEqual([]);
  });

  it("keeps a prompt whose removal failed watched: removed again before the held queue is released, stopped if ZCode starts it (#3b)", async () => {
    const model = new TurnsModel("v4", 1_000);
    await runningAndQueued(model);
    model.failRemovals = true;
    model.turns.cancel();
    await settle();
    await deliverAll(model);
    model.usage();
    await settle();
    expect(model.calls).toEqual(["remove p2 (fails)", "stop p1"]);
    // not removed: not answered cancelled yet; the grace answers it, and it stays watched
    expect(model.answers.has("p2")).toBe(false);
    vi.advanceTimersByTime(1_000);
    await settle();
    expect(model.answers.get("p2")).toMatchObject({ outcome: "cancelled" });
    // the next send removes it again before it releases the queue ZCode holds since the stop
    model.failRemovals = false;
    model.prompt();
    await settle();
    expect(model.calls.slice(2)).toEqual(["remove p2", "release"]);
    expect(model.starts.map((start) => start.label)).not.toContain("p2");
  });

  it("ends a steering text whose operation fails before its send: the session is idle, and promptRequired is answered as such (#6)", async () => {
    const model = new TurnsModel("v4");
    await runningAndQueued(model);
    model.failNextBeforeSend = true;
    model.steer("startNewTurn");
    await settle();
    expect(model.steerings.get("s3")).toBe("error HOST_CALL_FAILED");
    expect(model.turns.inputs.waitingCount).toBe(1); // p2 only
    // the turns end: nothing of the failed text is left waiting
    model.end();
    await deliverAll(model);
    model.usage();
    await settle();
    model.end();
    await deliverAll(model);
    model.usage();
    await settle();
    expect(model.turns.busy).toBe(false);
    model.steer("promptRequired");
    await settle();
    expect(model.steerings.get("s4")).toBe("promptRequired");
    expect(model.starts.map((start) => start.label)).toEqual(["p1", "p2"]);
  });
});

describe("adr/0036: stops and cancel scope", () => {
  it("sends no stop when the turn it was for was seen to end before the stop's turn on the chain came (#10)", async () => {
    const model = new TurnsModel("v4");
    model.prompt();
    await settle();
    model.ack();
    await settle();
    await deliverAll(model);
    model.prompt(); // p2: its send waits for its ack, the chain with it
    await settle();
    model.turns.cancel();
    await settle();
    model.end(); // p1's turn ends on ZCode's side (seen), and ZCode starts p2 and then…
    await deliverAll(model);
    model.end(); // …p2 ends too; ZCode runs a turn of its own
    model.own();
    await deliverAll(model);
    model.ack(); // the stop routine's turn: nothing of ours runs any more
    await settle();
    expect(model.calls.filter((call) => call.startsWith("stop"))).toEqual([]);
    expect(model.running?.label).toBe("own");
  });

  it("$/cancel_request of a queued prompt removes that prompt only: the running turn goes on (#12)", async () => {
    const model = new TurnsModel("v4");
    await runningAndQueued(model);
    model.controls.get("p2")!.cancel();
    await settle();
    expect(model.calls).toEqual(["remove p2"]);
    expect(model.answers.get("p2")).toMatchObject({ outcome: "cancelled" });
    expect(model.answers.has("p1")).toBe(false);
    model.chunk();
    model.end();
    await deliverAll(model);
    model.usage();
    await settle();
    expect(model.answers.get("p1")).toMatchObject({ outcome: "end_turn" });
  });

  it("$/cancel_request of the running prompt stops its turn only: the queued prompt runs next (#12)", async () => {
    const model = new TurnsModel("v4");
    await runningAndQueued(model);
    model.controls.get("p1")!.cancel();
    await settle();
    expect(model.calls).toEqual(["stop p1", "release"]);
    await deliverAll(model);
    model.usage();
    await settle();
    expect(model.answers.get("p1")).toMatchObject({ outcome: "cancelled" });
    expect(model.running?.label).toBe("p2");
    expect(model.answers.has("p2")).toBe(false);
  });
});

describe("adr/0038: a queue ZCode holds, acked late", () => {
  // found by the per-release property test (write-order.property.test.ts, 3.14.4): ZCode 3.14 holds
  // what waits behind a failed turn; when the queued prompt's ack arrived after that turn's end was
  // seen, nothing started the hold's bound and the prompt was never answered
  it.each(RELEASES.filter((release) => release.holdsAfterFailure))(
    "$release: a prompt acked `queue` after the failed turn before it ended is answered at the bound, never run",
    async (release) => {
      const model = new TurnsModel(release);
      model.prompt(); // p1 runs
      await settle();
      model.ack();
      await settle();
      await deliverAll(model);
      model.prompt(); // p2 queued behind it; its ack is still on its way
      await settle();
      model.fail(); // p1 fails: ZCode holds p2
      expect(model.held).toBe(true);
      await deliverAll(model); // the failed turn's end (and, on the V4 read path, the hold) before p2's ack
      usageAll(model);
      await settle();
      model.ack();
      await settle();
      expect(model.answers.get("p1")?.outcome).toBe("error TURN_FAILED");
      expect(model.answers.has("p2")).toBe(false);
      vi.advanceTimersByTime(5 * 60_000 + 1);
      await settle(8);
      expect(model.answers.get("p2")?.outcome).toBe("error QUEUE_HELD");
      expect(model.calls).toContain("remove p2");
      expect(model.starts.map((start) => start.label)).toEqual(["p1"]);
    },
  );
});

function usageAll(model: TurnsModel): void {
  while (model.usageReads.length > 0) model.usage();
}

describe("adr/0036: a prompt answered cancelled before its send is never sent", () => {
  // found by the end-to-end write-order test (e2e-write-order.test.ts, 4.0.0): session/cancel stops
  // the running turn (ZCode's queue may be held: the next send releases it first); a prompt sent
  // then waits on the release; its $/cancel_request answered it `cancelled` at once (it never left
  // the bridge), and once the release answered, the send went out anyway and ZCode ran it
  it("$/cancel_request while the send waits for the release of ZCode's held queue: answered cancelled, not sent, not run", async () => {
    const model = new TurnsModel("v4");
    model.prompt(); // p1 runs
    await settle();
    model.ack();
    await settle();
    await deliverAll(model);
    model.turns.cancel(); // session/cancel: p1's turn is stopped
    await settle();
    await deliverAll(model);
    while (model.usageReads.length > 0) model.usage();
    await settle();
    expect(model.answers.get("p1")?.outcome).toBe("cancelled");
    model.pauseReleases = true;
    model.prompt(); // p2: its send first releases what the stop may have held
    await settle();
    expect(model.releases).toHaveLength(1);
    model.controls.get("p2")!.cancel(); // its $/cancel_request
    await settle();
    expect(model.answers.get("p2")?.outcome).toBe("cancelled");
    model.release();
    await settle(8);
    expect(model.starts.map((start) => start.label)).toEqual(["p1"]);
    expect(model.acks, "nothing was sent after the release").toHaveLength(0);
    expect(model.turns.busy).toBe(false);
  });
});
