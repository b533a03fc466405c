/**
 * V4 subagents as ZCode's source has them (zcode-3.15.1-source.md §2.4): the projection says a
 * parent's `subagent` row as `subagent.updated` (ZCode's statuses, the cancellable background work),
 * never derives a child from a `toolCall` row, and takes a child's interaction origin from
 * `payload.origin`; the follower (subagent-conversations.ts) opens one child conversation per
 * running child, passes its tools on in ZCode's mirror shape, and closes it at the row's end.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { openConversation } from "../../../../src/native/v4-read/conversation-reader.js";
import { MAX_FOLLOWED, SubagentConversations } from "../../../../src/native/v4-read/subagent-conversations.js";
import { silentLogger } from "../../../../src/log/logger.js";
import type { HostEventSink } from "../../../../src/host/types.js";
import { complete, deltas, logical, resetRows, row, SESSION, snapshot, snapshotPayload } from "./frames.js";
import { StubHost } from "./stub-host.js";

const REF = { workspacePath: "/w", sessionId: SESSION };
type Ev = { type: string; event?: { type: string; seq: number; turnId?: string; payload: Record<string, any> }; [k: string]: any };

async function running(zone: Record<string, unknown> = {}) {
  const host = new StubHost();
  const events: Ev[] = [];
  await openConversation(
    REF,
    { onEvent: (e) => void events.push(e as Ev), onEnd: () => {} },
    { host, logger: silentLogger, startSeq: 0, onSeq: () => {}, normalise: (e) => e, now: () => 5 },
  );
  host.frame(complete(1, logical(0, 10, snapshotPayload(snapshot(10, zone))), "initial"));
  let seq = 10;
  let ordinal = 1;
  const send = (...list: unknown[]) => {
    host.frame(complete(++ordinal, logical(seq, seq + 1, deltas(...list))));
    seq += 1;
  };
  const inner = () => events.filter((e) => e.type === "session.event").map((e) => [e.event!.type, e.event!.payload] as const);
  return { host, events, send, inner };
}

describe("V4 projection of subagents", () => {
  beforeEach(() => resetRows());

  it("a subagent row is said as subagent.updated once it names its child, again only when it changes; `completed` is not ZCode's", async () => {
    const { send, inner } = await running();
    const sub = row("subagent", { parentToolCallId: "a1", subagentType: "explore", status: "running", summaryText: "" });
    send({ op: "row.appended", row: sub });
    expect(inner()).toEqual([]);
    send({ op: "row.upserted", row: { ...sub, childSessionId: "child1" } });
    send({ op: "row.upserted", row: { ...sub, childSessionId: "child1" } });
    send({ op: "row.upserted", row: { ...sub, childSessionId: "child1", status: "completed" } });
    send({ op: "row.upserted", row: { ...sub, childSessionId: "child1", status: "success", summaryText: "Found 3" } });
    expect(inner()).toEqual([
      ["subagent.updated", { childSessionId: "child1", status: "running", parentToolCallId: "a1", subagentType: "explore" }],
      [
        "subagent.updated",
        { childSessionId: "child1", status: "success", parentToolCallId: "a1", subagentType: "explore", summaryText: "Found 3" },
      ],
    ]);
  });

  it("a backgrounded child's work listed cancellable (and running) gives its workId", async () => {
    const work = { workId: "w1", kind: "subagent", title: "t", status: "running", startedAt: 1, cancellable: true, anchorRowId: null };
    const { send, inner } = await running({ backgroundWorks: [work] });
    const sub = row("subagent", { subagentType: "general", status: "running", childSessionId: "c1", backgrounded: true, workId: "w1" });
    send({ op: "row.appended", row: sub });
    send(
      { op: "state.updated", patch: { backgroundWorks: [{ ...work, cancellable: false }] } },
      { op: "row.upserted", row: { ...sub, summaryText: "x" } },
    );
    expect(inner().map(([, payload]) => payload.cancellableWorkId)).toEqual(["w1", undefined]);
    expect(inner()[0]![1]).toMatchObject({ backgrounded: true });
  });

  it("a toolCall row is the parent's own tool: ZCode's rows have no parentToolCallId, nothing is derived from one", async () => {
    const { send, inner } = await running();
    send({ op: "row.appended", row: row("toolCall", { toolCallId: "c1", toolName: "Read", status: "running", parentToolCallId: "p1" }) });
    expect(inner()).toEqual([
      ["tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Read" }],
      ["tool.updated", { kind: "started", toolCallId: "c1", toolName: "Read" }],
    ]);
  });

  it("a child's permission takes ZCode's payload.origin as given (its schema's keys), and the parent turn from it", async () => {
    const rig = await running();
    const origin = {
      kind: "subagent",
      agentId: "agent_1",
      agentType: "explore",
      childSessionId: "child1",
      parentSessionId: SESSION,
      parentToolCallId: "a1",
      parentTurnId: "T9",
      secret: "not ZCode's key",
    };
    const interaction = {
      interactionId: "i1",
      kind: "permission",
      anchorRowId: null,
      createdAt: 1,
      payload: { kind: "permission", toolCallId: "ct1", toolName: "Bash", summary: "Run", detail: {}, options: [], origin },
    };
    rig.send({ op: "state.updated", patch: { pendingInteractions: [interaction] } });
    const request = rig.events.find((e) => e.type === "permission.request")!.request;
    const { secret: _dropped, ...kept } = origin;
    expect(request).toMatchObject({ requestId: "i1", toolCallId: "ct1", turnId: "T9", origin: kept });
    expect(request.origin).not.toHaveProperty("secret");
  });
});

describe("following a subagent's own conversation", () => {
  function rig() {
    const opened: Array<{ ref: { sessionId: string }; sink: HostEventSink; disposed: boolean }> = [];
    const delivered: any[] = [];
    const follower = new SubagentConversations(REF, {
      logger: silentLogger,
      open: async (ref, sink) => {
        const entry = { ref, sink, disposed: false };
        opened.push(entry);
        return { id: `s${opened.length}`, incarnation: 1, dispose: async () => void (entry.disposed = true) };
      },
      deliver: (events) => void delivered.push(...events),
    });
    const updated = (payload: Record<string, unknown>, turnId = "T1") => ({
      type: "session.event",
      event: { type: "subagent.updated", turnId, payload },
    });
    return { follower, opened, delivered, updated };
  }
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("opens the child's conversation while it runs, passes its tools on as ZCode's mirror, closes it at the row's end", async () => {
    const { follower, opened, delivered, updated } = rig();
    follower.observe([updated({ childSessionId: "c1", status: "running", parentToolCallId: "a1", subagentType: "explore" })]);
    follower.observe([updated({ childSessionId: "c1", status: "running", parentToolCallId: "a1", subagentType: "explore" })]);
    expect(opened.map((o) => o.ref)).toEqual([{ workspacePath: "/w", sessionId: "c1" }]);
    await settle();
    const sink = opened[0]!.sink;
    void sink.onEvent({ type: "snapshot", snapshot: {} });
    void sink.onEvent({ type: "session.event", event: { type: "turn.started", sessionId: "c1", payload: {} } });
    void sink.onEvent({
      type: "session.event",
      event: { type: "tool.updated", sessionId: "c1", timestamp: 3, payload: { kind: "scheduled", toolCallId: "r1", toolName: "Read" } },
    });
    void sink.onEvent({ type: "permission.request", request: { requestId: "x" } });
    expect(delivered).toEqual([
      {
        type: "session.event",
        event: {
          eventId: "",
          sessionId: SESSION,
          seq: 0,
          timestamp: 3,
          deliveryKind: "desktop-continuous",
          type: "tool.updated",
          turnId: "T1",
          payload: {
            kind: "scheduled",
            toolCallId: "tool_subagent_c1_r1",
            childToolCallId: "r1",
            toolName: "Read",
            source: "subagent",
            childSessionId: "c1",
            parentToolCallId: "a1",
            agentType: "explore",
          },
        },
      },
    ]);
    follower.observe([updated({ childSessionId: "c1", status: "success" })]);
    await settle();
    expect(opened[0]!.disposed).toBe(true);
    expect(follower.size).toBe(0);
    // an ended child is not followed again, and its late events go nowhere
    follower.observe([updated({ childSessionId: "c1", status: "running" })]);
    void sink.onEvent({ type: "session.event", event: { type: "tool.updated", payload: { kind: "started", toolCallId: "r1" } } });
    expect(opened).toHaveLength(1);
    expect(delivered).toHaveLength(1);
  });

  it(`follows at most ${MAX_FOLLOWED} children at once; the parent's end closes them all`, async () => {
    const { follower, opened, updated } = rig();
    follower.observe(Array.from({ length: MAX_FOLLOWED + 2 }, (_, i) => updated({ childSessionId: `c${i}`, status: "running" })));
    expect(opened).toHaveLength(MAX_FOLLOWED);
    await follower.dispose();
    expect(opened.every((o) => o.disposed)).toBe(true);
    follower.observe([updated({ childSessionId: "late", status: "running" })]);
    expect(opened).toHaveLength(MAX_FOLLOWED);
  });

  it("a child that ended before its subscription answered is closed once it is open", async () => {
    const opened: Array<{ disposed: boolean }> = [];
    let answer!: () => void;
    const follower = new SubagentConversations(REF, {
      logger: silentLogger,
      open: () =>
        new Promise((resolve) => {
          const entry = { disposed: false };
          opened.push(entry);
          answer = () => resolve({ id: "s", incarnation: 1, dispose: async () => void (entry.disposed = true) });
        }),
      deliver: () => {},
    });
    const ev = (status: string) => ({
      type: "session.event",
      event: { type: "subagent.updated", payload: { childSessionId: "c1", status } },
    });
    follower.observe([ev("running")]);
    follower.observe([ev("cancelled")]);
    answer();
    await settle();
    expect(opened[0]!.disposed).toBe(true);
  });
});
