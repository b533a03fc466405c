/**
 * ZCode's compaction parts as ACP `compaction_update`s (docs/zcode-host.md §5.11, docs/acp.md
 * §2.11): the live `part.upserted` and the replayed part give the same update, valid against the
 * SDK's stable schema, and only for a client that advertised `session.compaction`.
 */
import { describe, expect, it } from "vitest";
import { compactionUpdate, clientSurface, StreamTranslator } from "../../../src/session/stream-translator.js";
import { replayMessages } from "../../../src/session/history-replay.js";
import { silentLogger } from "../../../src/log/logger.js";
import { validateDefinition } from "../../support/acp-schema.js";

const logger = silentLogger;
const valid = (update: unknown) => validateDefinition("SessionNotification", { sessionId: "s", update });
const ON = clientSurface({ session: { compaction: {} } });
const OFF = clientSurface({});

describe("compaction parts", () => {
  it("running → in_progress without a summary; completed → completed with the summary as one text block", () => {
    const running = compactionUpdate({ type: "compaction", partId: "p1", status: "running" });
    expect(running).toEqual({ sessionUpdate: "compaction_update", compactionId: "p1", status: "in_progress" });
    const done = compactionUpdate({ type: "compaction", id: "p1", status: "completed", summary: "so far" });
    expect(done).toEqual({
      sessionUpdate: "compaction_update",
      compactionId: "p1",
      status: "completed",
      summary: [{ type: "text", text: "so far" }],
    });
    const failed = compactionUpdate({ type: "compaction", partId: "p2", status: "error", error: "model down" });
    expect(failed).toMatchObject({ status: "failed", error: "model down" });
    for (const update of [running, done, failed]) expect(valid(update)).toEqual([]);
  });

  it("an unknown status is passed on as ZCode's own (`_zcode_…`), never rounded to completed; a part without an id is refused", () => {
    const odd = compactionUpdate({ type: "compaction", partId: "p1", status: "paused" });
    expect(odd).toMatchObject({ status: "_zcode_paused" });
    expect(valid(odd)).toEqual([]);
    expect(() => compactionUpdate({ type: "compaction", status: "running" })).toThrow(
      expect.objectContaining({ code: "NATIVE_PROTOCOL_ERROR" }),
    );
  });

  it("live: only a compaction part, only for a client with session.compaction", () => {
    const translator = new StreamTranslator("/w", logger);
    const part = { type: "compaction", partId: "p1", status: "running" };
    expect(translator.partUpserted({ part }, ON)).toHaveLength(1);
    expect(translator.partUpserted({ part }, OFF)).toEqual([]);
    expect(translator.partUpserted({ part: { type: "text", partId: "t1", text: "x" } }, ON)).toEqual([]);
    expect(translator.partUpserted({}, ON)).toEqual([]);
  });

  it("replay: the stored part in its place for a client with the capability, nothing otherwise", () => {
    const messages = [
      { info: { role: "user", messageId: "u1" }, parts: [{ type: "text", text: "hi" }] },
      {
        info: { role: "assistant", messageId: "a1" },
        parts: [
          { type: "compaction", id: "p1", summary: "so far" },
          { type: "text", text: "ok" },
        ],
      },
    ] as never;
    expect(replayMessages(messages, "/w", logger, { compaction: true, planOps: false }).map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "compaction_update",
      "agent_message_chunk",
    ]);
    expect(replayMessages(messages, "/w", logger).map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "agent_message_chunk"]);
  });
});
