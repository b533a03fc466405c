/**
 * A release with the legacy stream read through V4 (ZCODE_ACP_READ_PATH=v4, docs/zcode-host.md
 * §16.1): provider header requests are not V4 (§6.4) and such a host hands them to the session's
 * legacy stream only, so the bridge listens there for them beside the conversation. Each request
 * reaches its session and is answered exactly once; the turn stops with PROVIDER_HEADERS_UNSUPPORTED.
 */
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import { V4_READ_EVENT, V4_READ_METHODS } from "../../../fixtures/sim-releases.js";
import { e2e, forSession } from "../../support/e2e-harness.js";
import { writeManifest } from "../../support/tamper.js";

const t = e2e();

describe("e2e: provider headers on a legacy line read through V4 (ZCODE_ACP_READ_PATH=v4)", () => {
  it("a header request reaches its session and is answered once; the turn stops with PROVIDER_HEADERS_UNSUPPORTED", async (context) => {
    const sim = t.sim();
    // the legacy lines with V4 input (3.12.3 on); the V4 read calls allowed beside the legacy stream
    if (sim.line !== "zcode-task-v2") return context.skip();
    const manifest = structuredClone(sim.manifest);
    manifest.protocol.allowlist.agent = [...manifest.protocol.allowlist.agent, ...V4_READ_METHODS];
    manifest.protocol.events.agent = [...(manifest.protocol.events.agent ?? []), V4_READ_EVENT];
    const file = await writeManifest(dirname(sim.root), "read-path-v4.json", manifest);
    const client = await t.start({ env: { ZCODE_ACP_MANIFEST: file, ZCODE_ACP_READ_PATH: "v4" } });
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());

    const error = await client.prompt(sessionId, "sim:provider-headers").catch((e: { message?: string; data?: { code?: string } }) => e);
    expect(error).toMatchObject({ code: -32603, data: { code: "PROVIDER_HEADERS_UNSUPPORTED" } });
    // the next prompt travels the same ordered channel: every earlier call is in the host's log once it ended
    await expect(client.prompt(sessionId, "next")).resolves.toMatchObject({ stopReason: "end_turn" });
    const answers = forSession(await t.calls("respondProviderRuntimeHeaders"), sessionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.params).toMatchObject({ response: { headersApplied: false } });
    expect(await t.stops(sessionId)).toHaveLength(1);
    // read through V4: the conversation subscription; the legacy stream only for the header requests (no snapshot)
    expect(forSession(await t.calls("subscribeConversationV4"), sessionId)).toHaveLength(1);
    const log = await sim.readCallLog();
    const legacy = log.filter(
      (e) => e.kind === "listen" && e.event === "onDynamicSessionEvent" && (e.arg as { sessionId?: string })?.sessionId === sessionId,
    );
    expect(legacy).toHaveLength(1);
    expect(legacy[0]!.arg).toMatchObject({ includeSnapshot: false });
    expect(client.text(sessionId)).toContain("next");
    client.expectValid();
  });
});
