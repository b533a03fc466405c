/**
 * One V4 frame listener per workspace (review 2026-12-07 #5, docs/zcode-host.md §16): ZCode's
 * `onDynamicConversationFrame` is workspace-wide, so with several sessions of one workspace open
 * each frame still crosses the channel once (the simulated host logs, per frame, how many of the
 * workspace's listeners it went to), and every session still gets its own turns.
 */
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";
import { V3 } from "../answers.js";

const t = e2e();
const SESSIONS = 4;

describe.runIf(V3)("e2e (V4): one frame listener per workspace", () => {
  it(`${SESSIONS} sessions of one workspace: each frame crosses to one listener, each session reads its own turns`, async () => {
    const client = await t.start();
    await client.initialize();
    const cwd = await t.workspace();
    const ids: string[] = [];
    for (let i = 0; i < SESSIONS; i++) ids.push((await client.newSession(cwd)).sessionId);
    const before = (await t.sim().readCallLog()).length;
    for (const [i, sessionId] of ids.entries()) {
      await expect(client.prompt(sessionId, `sim:tool-read path=f${i}.txt`)).resolves.toMatchObject({ stopReason: "end_turn" });
    }
    const frames = (await t.sim().readCallLog()).slice(before).filter((e) => e.kind === "v4-frame") as Array<{ listeners?: number }>;
    expect(frames.length).toBeGreaterThanOrEqual(SESSIONS);
    expect(new Set(frames.map((f) => f.listeners))).toEqual(new Set([1]));
    for (const sessionId of ids) {
      const reads = client.updates(sessionId).filter((u: any) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
      expect(reads).toHaveLength(1);
      expect(client.text(sessionId)).toContain("The package is called demo.");
    }
    client.expectValid();
  }, 120_000);
});
