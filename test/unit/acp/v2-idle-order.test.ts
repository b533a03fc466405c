/**
 * ACP v2 reports the session's state as an aggregate (adr/0028): `idle` only when no prompt of
 * the session runs. Review 2026-12-07 #13: a prompt cancelled on the wire (a `session/cancel`
 * read after its request, before its handler ran: `cancelledOnWire`) sent `idle` right after its
 * receipt, while the session's other prompt still ran. The interleaving is played in process and
 * without timing: the SDK's v2 client app connected to our v2 agent app, a fake host behind it
 * whose turn ends only when the test says so, and a wire tracker that reports the next prompt as
 * cancelled on the wire (what the transport's tracker says when the cancel line was read between
 * the prompt's line and its handler).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { afterAll, describe, expect, it } from "vitest";
import { createZcodeAgentV2 } from "../../../src/acp/v2/agent-v2.js";
import type { InteractionTracker } from "../../../src/acp/wire-order.js";
import { silentLogger } from "../../../src/log/logger.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { FakeHost } from "../../support/fake-host.js";
import { StubBroker } from "../../support/stub-broker.js";
import { until } from "../../support/until.js";

const W = realpathSync(mkdtempSync(join(tmpdir(), "acp-v2-idle-")));
afterAll(() => rmSync(W, { recursive: true, force: true }));

/** the transport's wire tracker, reduced to what the prompt handler asks: the next prompt was cancelled on the wire */
class CancelNextPrompt implements InteractionTracker {
  armed = false;
  track<P extends object>(_kind: unknown, params: P): P {
    return params;
  }
  ended(): void {}
  cancelledOnWire(): boolean {
    const cancelled = this.armed;
    this.armed = false;
    return cancelled;
  }
}

describe("ACP v2: idle only when no prompt of the session runs (review #13)", () => {
  it("a prompt cancelled on the wire while another prompt runs sends no idle; the running prompt's end does", async () => {
    const host = new FakeHost();
    const tracker = new CancelNextPrompt();
    const agent = createZcodeAgentV2({
      native: new CurrentLineApi(host),
      logger: silentLogger,
      createBroker: () => new StubBroker(),
      cancelGraceMs: 1000,
      mergeDeltas: true,
      defaultCwd: process.cwd(),
      tracker,
    });
    /** the state_updates the client got, and what else happened, in order */
    const seen: string[] = [];
    const connection = acp
      .client({ name: "in-process" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        const update = params.update as { sessionUpdate: string; state?: string; stopReason?: string };
        if (update.sessionUpdate === "state_update") seen.push(`${update.state}${update.stopReason ? ` ${update.stopReason}` : ""}`);
      })
      .connect(agent.app);
    const client = connection.agent;
    try {
      await client.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "in-process", version: "0.0.0" },
        capabilities: {},
      });
      const { sessionId } = await client.request(acp.methods.agent.session.new, { cwd: W, mcpServers: [] });
      // the first prompt's turn runs until the test ends it
      host.script.onPrompt = (s) => void s.startTurn();
      host.script.onStop = () => undefined; // ZCode's stop is slow: the turn ends when the test says so
      await client.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "a" }] });
      await until(() => seen.includes("running") && host.session(sessionId).currentTurnId !== undefined, {
        what: "the first turn running",
      });

      // the client's session/cancel is read after the second prompt's line, before its handler ran
      tracker.armed = true;
      agent.cancelSession(sessionId);
      const receipt = await client.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "b" }] });
      expect(receipt.messageId).toEqual(expect.any(String));
      expect(tracker.armed, "the second prompt's handler asked the tracker").toBe(false);
      // the receipt is out and written (in process: reported a turn of the event loop later); the
      // first prompt's stop went out, its turn has not ended: the session still runs
      await until(() => host.operations.some((op) => op.operation === "cancelGeneration"), { what: "the first turn's stop" });
      // the receipt's write is reported a turn of the event loop later (in process, agent-connection.ts
      // `afterWrite`), and a state_update sent then reaches the client in the next: two turns, no timer
      await turns(2);
      expect(seen, "no idle while the first prompt's turn runs").toEqual(["running"]);

      // ZCode ends the stopped turn: now the session is idle, once
      host.session(sessionId).complete("cancelled");
      await until(() => seen.some((state) => state.startsWith("idle")), { what: "the idle after the first turn's end" });
      expect(seen).toEqual(["running", "idle cancelled"]);
    } finally {
      connection.close();
      await agent.shutdown();
    }
  });
});

/** let `n` turns of the event loop pass (what runs on setImmediate in this process) */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}
