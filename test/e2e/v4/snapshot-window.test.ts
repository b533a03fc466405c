/**
 * A snapshot in the middle of a long turn (review 2026-12-07 #1): ZCode's wire snapshot carries
 * only the conversation's last 60 rows, so a slow subscriber's unsolicited online snapshot during a
 * turn of 70 tool calls leaves the turn's header out. The bridge still sees the turn end: the prompt
 * is answered, every tool's result is told (docs/zcode-host.md §16, src/native/v4-read/row-store.ts
 * `replace`).
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import { V3 } from "../answers.js";

const t = e2e();
const READS = 70;
/** ZCode's snapshotTailWindowRows (zcode-v4.md §3.5) */
const WINDOW_ROWS = 60;

describe.runIf(V3)("e2e (V4): a snapshot in the middle of a long turn", () => {
  it(`a ${READS}-tool turn whose header left the snapshot's window is answered, every tool result told`, async () => {
    // the simulator's 65th online frame of the host run goes out as an online snapshot
    const client = await t.start({ simProfile: { v4UnsolicitedSnapshotAtFrame: 65 } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, `sim:many-reads n=${READS}`)).resolves.toMatchObject({ stopReason: "end_turn" });
    // the snapshot came in the middle of the turn, with more rows than its window holds
    const log = await t.sim().readCallLog();
    const snapshots = log.filter((e) => e.kind === "fault" && e.fault === "v4-unsolicited-snapshot") as Array<{ totalRows?: number }>;
    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]!.totalRows).toBeGreaterThan(WINDOW_ROWS);
    expect(snapshots[0]!.totalRows).toBeLessThan(READS + 2);
    const updates = client.updates(sessionId);
    const done = new Set(
      updates.filter((u: any) => u.sessionUpdate === "tool_call_update" && u.status === "completed").map((u: any) => u.toolCallId),
    );
    expect(done.size).toBe(READS);
    expect(client.text(sessionId)).toContain(`Read ${READS} files.`);
    // the session goes on
    await expect(client.prompt(sessionId, "still here")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
  }, 120_000);
});
