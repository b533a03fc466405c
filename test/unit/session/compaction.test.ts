/**
 * ZCode's compactions as ACP `compaction_update`s (src/session/compaction.ts; docs/zcode-host.md
 * §5.11, docs/acp.md §2.11): the three part shapes ZCode's source has (the V4 marker as the
 * projection passes it on, the legacy `compaction` part, the legacy `context_compaction` timeline
 * part), both status vocabularies, noop hidden or closed, no summary text claimed; the live
 * `part.upserted` and the replayed part give the same update, valid against the SDK's schema, and
 * only for a client that advertised `session.compaction`. The model-only summary message is not replayed.
 */
import { describe, expect, it } from "vitest";
import { clientSurface, StreamTranslator } from "../../../src/session/stream-translator.js";
import { COMPACTION_STATUS, compactionStopped, compactionUpdate, CompactionTracker } from "../../../src/session/compaction.js";
import { modelOnly, replayMessages } from "../../../src/session/history-replay.js";
import { silentLogger } from "../../../src/log/logger.js";
import { validateDefinition } from "../../support/acp-schema.js";

const logger = silentLogger;
const valid = (update: unknown) => validateDefinition("SessionNotification", { sessionId: "s", update });
const ON = clientSurface({ session: { compaction: {} } });
const OFF = clientSurface({});

/** the part the V4 projection makes of a `timelineMarker` row (projection.ts compactionPart) */
const marker = (status: string, extra: Record<string, unknown> = {}) => ({
  type: "compaction",
  partId: "cmp_1",
  status,
  origin: "manual",
  ...extra,
});
/** ZCode's legacy `timeline` part of a compaction (zcodeTimelinePartSchema) */
const timeline = (status: string, extra: Record<string, unknown> = {}) => ({
  type: "timeline",
  partId: "prt_1",
  timelineType: "context_compaction",
  display: "separator",
  operationId: "cmp_1",
  trigger: "auto",
  status,
  ...extra,
});

describe("compaction statuses", () => {
  it("maps both of ZCode's vocabularies the way ZCode's own V4 projection does (mapCompactMarkerStatus), then to ACP", () => {
    expect(COMPACTION_STATUS).toMatchObject({
      running: "in_progress",
      success: "completed",
      failed: "failed",
      cancelled: "cancelled",
      noop: "noop",
      started: "in_progress",
      retrying: "in_progress",
      completed: "completed",
      skipped: "noop",
      interrupted: "cancelled",
    });
  });

  it("V4 marker: running → in_progress, success → completed with the token counts and summary reference in _meta, never a summary", () => {
    const running = compactionUpdate(marker("running", { tokensBefore: 9000 }));
    expect(running).toEqual({
      sessionUpdate: "compaction_update",
      compactionId: "cmp_1",
      status: "in_progress",
      _meta: { zcode: { status: "running", origin: "manual", tokensBefore: 9000 } },
    });
    const done = compactionUpdate(marker("success", { tokensBefore: 9000, tokensAfter: 2000, summaryRef: "msg_9" }));
    expect(done).toEqual({
      sessionUpdate: "compaction_update",
      compactionId: "cmp_1",
      status: "completed",
      _meta: { zcode: { status: "success", origin: "manual", tokensBefore: 9000, tokensAfter: 2000, summaryRef: "msg_9" } },
    });
    expect(compactionUpdate(marker("failed"))).toMatchObject({ status: "failed" });
    expect(compactionUpdate(marker("cancelled"))).toMatchObject({ status: "cancelled" });
    for (const update of [running, done]) expect(valid(update)).toEqual([]);
  });

  it("ZCode's `success` and `noop` never go out as `_zcode_…`; noop (nothing compacted) is not replayed", () => {
    expect(compactionUpdate(marker("success"))).toMatchObject({ status: "completed" });
    expect(compactionUpdate(marker("noop"))).toBeUndefined();
    expect(compactionUpdate(timeline("skipped"))).toBeUndefined();
  });

  it("legacy timeline part: started/retrying → in_progress, completed, interrupted → cancelled, failed with its reason; id = operationId", () => {
    expect(compactionUpdate(timeline("started"))).toMatchObject({ compactionId: "cmp_1", status: "in_progress" });
    expect(compactionUpdate(timeline("retrying"))).toMatchObject({ status: "in_progress" });
    const done = compactionUpdate(
      timeline("completed", {
        preCompactTokenCount: 8000,
        postCompactTokenCount: 2500,
        truePostCompactTokenCount: 2400,
        summaryMessageId: "m",
      }),
    );
    expect(done).toMatchObject({
      status: "completed",
      _meta: { zcode: { status: "completed", origin: "auto", tokensBefore: 8000, tokensAfter: 2400, summaryRef: "m" } },
    });
    expect(compactionUpdate(timeline("interrupted"))).toMatchObject({ status: "cancelled" });
    const failed = compactionUpdate(timeline("failed", { reason: "api_error" }));
    expect(failed).toMatchObject({ status: "failed", error: "api_error" });
    for (const update of [done, failed]) expect(valid(update)).toEqual([]);
  });

  it("legacy compaction part: lifecycle in metadata; the summary message's own compaction metadata (no status, no summary id) is no compaction", () => {
    const part = {
      type: "compaction",
      partId: "p1",
      auto: false,
      metadata: { operationId: "cmp_2", timelineStatus: "completed", trigger: "manual" },
    };
    expect(compactionUpdate(part)).toMatchObject({ compactionId: "cmp_2", status: "completed", _meta: { zcode: { origin: "manual" } } });
    expect(compactionUpdate({ type: "compaction", partId: "p2", auto: true })).toBeUndefined();
    // a stored part with a summary id and no status is a finished compaction
    expect(compactionUpdate({ type: "compaction", partId: "p3", auto: true, summaryMessageId: "m" })).toMatchObject({
      compactionId: "p3",
      status: "completed",
    });
  });

  it("an unknown status is passed on as ZCode's own (`_zcode_…`); a compaction without any id is refused", () => {
    const odd = compactionUpdate(marker("paused"));
    expect(odd).toMatchObject({ status: "_zcode_paused" });
    expect(valid(odd)).toEqual([]);
    expect(() => compactionUpdate({ type: "compaction", status: "running" })).toThrow(
      expect.objectContaining({ code: "NATIVE_PROTOCOL_ERROR" }),
    );
  });
});

describe("live compactions", () => {
  it("a noop after a shown in_progress closes it completed (noop in _meta); a noop never shown stays hidden", () => {
    const tracker = new CompactionTracker();
    expect(tracker.updates(marker("running")).map((u: any) => u.status)).toEqual(["in_progress"]);
    const closed = tracker.updates(marker("noop"));
    expect(closed).toEqual([
      {
        sessionUpdate: "compaction_update",
        compactionId: "cmp_1",
        status: "completed",
        _meta: { zcode: { status: "noop", origin: "manual" } },
      },
    ]);
    expect(valid(closed[0])).toEqual([]);
    expect(tracker.updates(marker("noop", { partId: "cmp_2" }))).toEqual([]);
    expect(tracker.updates(timeline("skipped", { operationId: "cmp_3" }))).toEqual([]);
  });

  it("only a compaction part, only for a client with session.compaction; other marker kinds and parts say nothing", () => {
    const translator = new StreamTranslator("/w", logger);
    expect(translator.partUpserted({ part: marker("running") }, ON)).toHaveLength(1);
    expect(translator.partUpserted({ part: timeline("started") }, ON)).toHaveLength(1);
    expect(translator.partUpserted({ part: marker("running") }, OFF)).toEqual([]);
    expect(translator.partUpserted({ part: { type: "text", partId: "t1", text: "x" } }, ON)).toEqual([]);
    expect(translator.partUpserted({ part: { type: "timeline", partId: "t2", timelineType: "session_fork" } }, ON)).toEqual([]);
    expect(translator.partUpserted({}, ON)).toEqual([]);
  });

  it("a compaction that failed or was stopped is reported (ZCode holds its queue after it)", () => {
    expect(compactionStopped(marker("failed"))).toBe("failed");
    expect(compactionStopped(timeline("interrupted"))).toBe("cancelled");
    expect(compactionStopped(marker("success"))).toBeUndefined();
    expect(compactionStopped({ type: "compaction", status: "failed" })).toBeUndefined(); // no id: not addressable
  });
});

describe("replay", () => {
  const messages = [
    { info: { role: "user", messageId: "u1" }, parts: [{ type: "text", text: "hi" }] },
    {
      info: { role: "assistant", messageId: "a1" },
      parts: [timeline("completed", { summaryMessageId: "sum" }), { type: "text", text: "ok" }],
    },
    // the summary ZCode keeps for the model only
    {
      info: {
        role: "user",
        messageId: "sum",
        visibility: "model-only",
        semantics: {
          origin: "agent_runtime",
          kind: "compact_summary",
          uiVisibility: "hidden",
          providerVisibility: "visible",
          transcriptVisibility: "hidden",
        },
      },
      parts: [{ type: "text", text: "SUMMARY TEXT" }],
    },
  ] as never;

  it("the stored compaction in its place for a client with the capability, nothing otherwise; the model-only summary never", () => {
    const withCompaction = replayMessages(messages, "/w", logger, { compaction: true, planOps: false });
    expect(withCompaction.map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "compaction_update", "agent_message_chunk"]);
    expect(JSON.stringify(withCompaction)).not.toContain("SUMMARY TEXT");
    expect(replayMessages(messages, "/w", logger).map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "agent_message_chunk"]);
  });

  it("model-only: visibility model-only, or semantics.uiVisibility hidden / debug", () => {
    expect(modelOnly({ role: "user", visibility: "model-only" })).toBe(true);
    expect(modelOnly({ role: "user", semantics: { uiVisibility: "hidden" } })).toBe(true);
    expect(modelOnly({ role: "user", semantics: { uiVisibility: "debug" } })).toBe(true);
    expect(modelOnly({ role: "user", visibility: "user-visible", semantics: { uiVisibility: "visible" } })).toBe(false);
    expect(modelOnly({ role: "assistant" })).toBe(false);
  });
});
