/**
 * The reader never goes deaf (review 2026-12-07 #4): while a resync's recovery frame is awaited, a
 * fault that may have been that frame asks once more, then ends the subscription, and the whole
 * wait is bounded (RECOVERY_WAIT_MS). And one frame listener per workspace (#5): however many
 * sessions of a workspace are read, each frame crosses the channel once; before a subscribe answer
 * only the frames of the reader's own topic are held, bounded in bytes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { EARLY_BYTES_KEPT, openConversation, RECOVERY_WAIT_MS } from "../../../../src/native/v4-read/conversation-reader.js";
import { frameListeners } from "../../../../src/native/v4-read/frame-listener.js";
import { BridgeError } from "../../../../src/util/errors.js";
import { complete, deltas, fragments, logical, resetRows, row, snapshot, snapshotPayload } from "./frames.js";
import { StubHost } from "./stub-host.js";

type Ev = { type: string; event?: { type: string; payload: Record<string, any> } };

async function open(host: StubHost, sessionId = "S1") {
  const events: Ev[] = [];
  const ends: Array<BridgeError | null> = [];
  const subscription = await openConversation(
    { workspacePath: "/w", sessionId },
    { onEvent: (e) => void events.push(e as Ev), onEnd: (e) => void ends.push(e) },
    { host, logger: silentLogger, startSeq: 0, onSeq: () => undefined, normalise: (e) => e },
  );
  const inner = () => events.filter((e) => e.type === "session.event").map((e) => e.event!.type);
  return { events, ends, inner, subscription };
}

/** a frame of another session's subscription (its own topic and id) */
function of(sessionId: string, frame: Record<string, unknown>): Record<string, unknown> {
  const subscriptionId = `sub-${sessionId}`;
  const topic = `conversation/${sessionId}`;
  const inner = frame.frame as Record<string, unknown> | undefined;
  return { ...frame, topic, subscriptionId, ...(inner ? { frame: { ...inner, topic, subscriptionId } } : {}) };
}

describe("V4 reader: the wait for a recovery frame", () => {
  beforeEach(() => resetRows());
  afterEach(() => vi.useRealTimers());

  it("a recovery frame that fails its checksum ends the subscription (not deaf to every later frame)", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    host.frame(complete(2, logical(12, 13, deltas()))); // a gap: resync asked
    expect(host.callsOf("resyncConversationV4")).toHaveLength(1);
    for (const part of fragments(3, logical(10, 13, deltas()), 2, { deliveryKind: "recovery", badChecksum: true })) host.frame(part);
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    expect(r.ends[0]!.message).toMatch(/recovery frame is unusable/);
    await Promise.resolve();
    expect(host.callsOf("unsubscribeConversationV4")).toHaveLength(1);
  });

  it("a fault that may have been the recovery's asks again once; a second one ends the subscription", async () => {
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    host.frame(complete(2, logical(12, 13, deltas())));
    expect(host.callsOf("resyncConversationV4")).toHaveLength(1);
    // a live frame's fault changes nothing while the recovery is awaited
    for (const part of fragments(3, logical(13, 14, deltas()), 2, { badChecksum: true })) host.frame(part);
    expect(host.callsOf("resyncConversationV4")).toHaveLength(1);
    expect(r.ends).toEqual([]);
    // a wire frame the assembler cannot read at all (no delivery kind known): asked again
    host.frame({ ...complete(4, logical(13, 14, deltas()), "recovery"), wireVersion: 99 });
    expect(host.callsOf("resyncConversationV4")).toHaveLength(2);
    expect(r.ends).toEqual([]);
    host.frame({ ...complete(5, logical(13, 14, deltas()), "recovery"), wireVersion: 99 });
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
  });

  it("a recovery that never comes ends the subscription after RECOVERY_WAIT_MS with a timeout; one that comes in time is read on", async () => {
    vi.useFakeTimers();
    const host = new StubHost();
    const r = await open(host);
    host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    host.frame(complete(2, logical(12, 13, deltas())));
    await vi.advanceTimersByTimeAsync(RECOVERY_WAIT_MS - 1000);
    expect(r.ends).toEqual([]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "HOST_TIMEOUT" });
    expect(r.ends[0]!.message).toMatch(/recovery frame/);
    expect(host.callsOf("unsubscribeConversationV4")).toHaveLength(1);

    const other = new StubHost();
    const o = await open(other);
    other.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial"));
    other.frame(complete(2, logical(12, 13, deltas())));
    const header = row("turnHeader", { state: "running" });
    other.frame(complete(3, logical(10, 13, deltas({ op: "row.appended", row: header })), "recovery"));
    await vi.advanceTimersByTimeAsync(RECOVERY_WAIT_MS * 2);
    expect(o.ends).toEqual([]);
    expect(o.inner()).toEqual(["turn.started"]);
  });
});

describe("V4 reader: one frame listener per workspace", () => {
  beforeEach(() => resetRows());

  function sessionsHost(): StubHost {
    const host = new StubHost();
    host.handlers.set("subscribeConversationV4", (params) => ({
      ack: { subscriptionId: `sub-${String(params.sessionId)}`, mode: "snapshot", logEpoch: "E1" },
    }));
    return host;
  }

  it("five sessions of one workspace share one listener: each frame crosses once and reaches its own reader", async () => {
    const host = sessionsHost();
    const sessions = ["S1", "S2", "S3", "S4", "S5"];
    const readers = await Promise.all(sessions.map((id) => open(host, id)));
    expect(host.listeners).toHaveLength(1);
    expect(frameListeners(host)).toMatchObject({ workspaces: 1, readers: 5 });
    for (const id of sessions) host.frame(of(id, complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial")));
    const header = row("turnHeader", { state: "running" });
    host.frame(of("S3", complete(2, logical(10, 11, deltas({ op: "row.appended", row: header }))))); // one frame of S3
    // 6 frames were sent; each crossed the channel once (a listener per session: 5 times)
    expect(host.deliveries).toBe(6);
    expect(readers.map((r) => r.inner())).toEqual([[], [], ["turn.started"], [], []]);
    // the last reader to leave drops the listener
    for (const r of readers.slice(0, 4)) await r.subscription.dispose();
    expect(host.listeners[0]!.open).toBe(true);
    await readers[4]!.subscription.dispose();
    expect(host.listeners[0]!.open).toBe(false);
    expect(frameListeners(host)).toMatchObject({ workspaces: 0, readers: 0 });
    // a later subscription opens a new one
    await open(host, "S6");
    expect(host.listeners).toHaveLength(2);
  });

  it("before its answer a reader holds only its own topic's frames; a neighbour's busy stream cannot end it", async () => {
    const host = sessionsHost();
    const busy = await open(host, "S1");
    host.frame(of("S1", complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial")));
    const text = row("assistantText", { turnId: "T1", text: "", state: "streaming", assistantResponseId: "m" });
    host.frame(of("S1", complete(2, logical(10, 11, deltas({ op: "row.appended", row: text })))));
    // S2 subscribes; while its answer is on its way, S1 streams 2000 frames and S2's own snapshot comes
    host.handlers.set("subscribeConversationV4", (params) => {
      for (let i = 0; i < 2000; i++) {
        host.frame(
          of("S1", complete(3 + i, logical(11 + i, 12 + i, deltas({ op: "row.delta", rowId: text.rowId, path: "text", append: "x" })))),
        );
      }
      host.frame(of("S2", complete(1, logical(0, 5, snapshotPayload(snapshot(5))), "initial")));
      return { ack: { subscriptionId: `sub-${String(params.sessionId)}`, mode: "snapshot", logEpoch: "E1" } };
    });
    const quiet = await open(host, "S2");
    expect(quiet.ends).toEqual([]);
    expect(quiet.events.map((e) => e.type)).toEqual(["snapshot"]);
    expect(busy.ends).toEqual([]);
    expect(busy.inner().length).toBeGreaterThan(0);
  });

  it("the early frames of its own topic are bounded in bytes", async () => {
    const host = sessionsHost();
    const big = "y".repeat(1024 * 1024);
    host.handlers.set("subscribeConversationV4", () => {
      for (let i = 0; i < EARLY_BYTES_KEPT / big.length + 2; i++) {
        host.frame(of("S1", complete(1 + i, logical(0, 10, snapshotPayload(snapshot(10, { meta: { title: big } }))), "initial")));
      }
      return { ack: { subscriptionId: "sub-S1", mode: "snapshot", logEpoch: "E1" } };
    });
    const r = await open(host, "S1");
    expect(r.ends).toHaveLength(1);
    expect(r.ends[0]).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    expect(r.ends[0]!.message).toMatch(/before its subscribe answer/);
    await Promise.resolve();
    expect(host.callsOf("unsubscribeConversationV4")).toEqual([{ workspacePath: "/w", subscriptionId: "sub-S1" }]);
  });

  it("a channel overflow replaces the listener and every reader resynchronises from its held position; a host exit ends them", async () => {
    const host = sessionsHost();
    const a = await open(host, "S1");
    const b = await open(host, "S2");
    host.frame(of("S1", complete(1, logical(0, 10, snapshotPayload(snapshot(10))), "initial")));
    host.frame(of("S2", complete(1, logical(0, 7, snapshotPayload(snapshot(7))), "initial")));
    host.endListeners(new BridgeError("CHANNEL_OVERFLOW", "the bridge is not reading host events fast enough"));
    await vi.waitFor(() => expect(host.callsOf("resyncConversationV4")).toHaveLength(2));
    expect(host.listeners).toHaveLength(2);
    expect(host.listeners[1]!.open).toBe(true);
    expect(host.callsOf("resyncConversationV4")).toEqual([
      { workspacePath: "/w", subscriptionId: "sub-S1", base: { logEpoch: "E1", seq: 10 } },
      { workspacePath: "/w", subscriptionId: "sub-S2", base: { logEpoch: "E1", seq: 7 } },
    ]);
    expect([a.ends, b.ends]).toEqual([[], []]);
    // the recovery comes through the new listener
    const header = row("turnHeader", { state: "running" });
    host.frame(of("S1", complete(2, logical(10, 11, deltas({ op: "row.appended", row: header })), "recovery")));
    expect(a.inner()).toEqual(["turn.started"]);
    host.endListeners(new BridgeError("HOST_EXITED", "The ZCode host stopped."));
    expect(a.ends.map((e) => e?.code)).toEqual(["HOST_EXITED"]);
    expect(b.ends.map((e) => e?.code)).toEqual(["HOST_EXITED"]);
    expect(frameListeners(host).workspaces).toBe(0);
  });
});
