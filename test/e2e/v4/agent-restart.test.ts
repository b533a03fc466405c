/**
 * ZCode's agent runtime restarts (review 2026-12-07 #7; zcode-v4.md §3.2): the session is no longer
 * live in it and its V4 subscriptions are gone without an end frame (the simulator's
 * `sim:agent-restart`). The next prompt is refused "no such session", the bridge resumes the session,
 * subscribes again and sends once more: the prompt is answered with its own turn's text. On the
 * legacy read path the host's session listeners survive; the prompt is answered the same way.
 */
import { describe, expect, it } from "vitest";
import { e2e, forSession } from "../../support/e2e-harness.js";

const t = e2e();

describe("e2e: after ZCode's agent runtime restarted", () => {
  it("the next prompt resumes the session, subscribes again before it is resent, and is answered", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await expect(client.prompt(sessionId, "sim:agent-restart")).resolves.toMatchObject({ stopReason: "end_turn" });
    // the runtime restarts as the next input reaches it (before ZCode decides it)
    await expect(client.prompt(sessionId, "sim:reasoning")).resolves.toMatchObject({ stopReason: "end_turn" });
    expect((await t.sim().readCallLog()).filter((e) => e.kind === "fault" && e.fault === "agent-restart")).toHaveLength(1);
    expect(client.text(sessionId)).toContain("Here is the considered answer.");
    expect(forSession(await t.calls("resumeSession"), sessionId)).toHaveLength(1);
    client.expectValid();
  });
});
