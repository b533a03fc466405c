/**
 * ACP v2's prompt scope. 1. The session's state is an aggregate (adr/0028): `idle` only when no
 * prompt of the session runs. Review 2026-12-07 #13: a prompt cancelled on the wire (a `session/cancel`
 * read after its request, before its handler ran: `cancelledOnWire`) sent `idle` right after its
 * receipt, while the session's other prompt still ran. The interleaving is played in process and
 * without timing: the SDK's v2 client app connected to our v2 agent app, a fake host behind it
 * whose turn ends only when the test says so, and a wire tracker that reports the next prompt as
 * cancelled on the wire (what the transport's tracker says when the cancel line was read between
 * the prompt's line and its handler). 2. `$/cancel_request` of a prompt whose receipt is not out
 * yet cancels that prompt only (adr/0036, review #12; v2 had no prompt scope and cancelled the
 * session): played through the transport's own wire order (`wireOrderFor`) and a transport of
 * our own around the v2 agent, which holds the prompt's line from the agent until the test lets it go.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { afterAll, describe, expect, it } from "vitest";
import { createZcodeAgentV2 } from "../../../src/acp/v2/agent-v2.js";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { readClientMessage } from "../../../src/acp/client-messages.js";
import { wireOrderFor, type InteractionTracker } from "../../../src/acp/wire-order.js";
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

describe("ACP v2: $/cancel_request of one prompt (adr/0036, review #12)", () => {
  it("read before the prompt's handler ran: that prompt does not run, the session's running turn goes on unstopped", async () => {
    const host = new FakeHost();
    // the agent is bound below; the wire order reads it only when a cancel is read
    const wire = wireOrderFor(() => agent, silentLogger);
    const agent = createZcodeAgentV2({
      native: new CurrentLineApi(host),
      logger: silentLogger,
      createBroker: () => new StubBroker(),
      cancelGraceMs: 1000,
      mergeDeltas: true,
      defaultCwd: process.cwd(),
      tracker: wire,
      reportsWrites: true,
    });
    // the transport: every line read goes through the wire order, then to the SDK; every line written is reported
    let toAgent!: ReadableStreamDefaultController<AnyMessage>;
    const readable = new ReadableStream<AnyMessage>({ start: (controller) => void (toAgent = controller) });
    const written: Array<Record<string, any>> = [];
    const writable = new WritableStream<AnyMessage>({
      write(message) {
        const out = wire.outgoing(message);
        written.push(out as Record<string, any>);
        agent.responseWritten(out);
      },
    });
    const connection = agent.connect({ readable, writable });
    /** the transport reads a line: the wire order sees it now; the SDK gets it when the returned function is called */
    const read = async (message: Record<string, unknown>): Promise<() => void> => {
      const verdict = readClientMessage(message);
      if (!verdict.ok) throw new Error(verdict.reason);
      const forAgent = await wire.incoming(verdict.read);
      return () => toAgent.enqueue(forAgent as AnyMessage);
    };
    const answer = (id: number) => until(() => written.find((m) => m.id === id && !("method" in m)), { what: `the answer to ${id}` });
    const states = (sessionId: string): string[] =>
      written
        .filter(
          (m) => m.method === "session/update" && m.params.sessionId === sessionId && m.params.update.sessionUpdate === "state_update",
        )
        .map((m) => `${m.params.update.state}${m.params.update.stopReason ? ` ${m.params.update.stopReason}` : ""}`);
    try {
      (
        await read({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: 2, info: { name: "t", version: "0" }, capabilities: {} },
        })
      )();
      await answer(1);
      (await read({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: W, mcpServers: [] } }))();
      const sessionId = (await answer(2)).result.sessionId as string;
      host.script.onPrompt = (s) => void s.startTurn();
      (await read({ jsonrpc: "2.0", id: 3, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "a" }] } }))();
      await answer(3);
      await until(() => host.session(sessionId).currentTurnId !== undefined, { what: "the first turn running" });

      // the second prompt is read; its $/cancel_request is read before its handler runs
      const second = await read({
        jsonrpc: "2.0",
        id: 4,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "b" }] },
      });
      const cancel = await read({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 4 } });
      expect(
        host.operations.filter((op) => op.operation === "cancelGeneration"),
        "the running turn is not stopped",
      ).toEqual([]);
      second();
      cancel();
      const receipt = await answer(4);
      expect(receipt.result?.messageId ?? receipt.error).toBeDefined();
      expect(host.callsOf("sendPrompt"), "the cancelled prompt is never sent").toHaveLength(1);
      expect(host.operations.filter((op) => op.operation === "cancelGeneration")).toEqual([]);
      expect(states(sessionId), "no idle while the first turn runs").toEqual(["running"]);

      // the first turn ends by itself
      host.session(sessionId).complete();
      await until(() => states(sessionId).length > 1, { what: "the idle after the first turn" });
      expect(states(sessionId)).toEqual(["running", "idle end_turn"]);
    } finally {
      connection.close();
      await agent.shutdown();
    }
  });
});
