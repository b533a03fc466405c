/**
 * The bridge's stdout writer for ACP messages (src/cli/stdout-messages.ts): the same bytes as the
 * SDK's ndJsonStream, one shared writer for every getWriter(), backpressure from a reader that
 * stops reading, and failure (never a hang) when stdout closes or errs while a write waits.
 */
import { PassThrough, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { stdoutMessages } from "../../../src/cli/stdout-messages.js";

/** A Writable that keeps what it gets and completes each write only when told to. */
class SlowSink extends Writable {
  readonly chunks: string[] = [];
  private callbacks: Array<() => void> = [];
  constructor() {
    super({ highWaterMark: 64, decodeStrings: false });
  }
  override _write(chunk: string, _encoding: string, callback: () => void): void {
    this.chunks.push(String(chunk));
    this.callbacks.push(callback);
  }
  release(): void {
    for (const callback of this.callbacks.splice(0)) callback();
  }
}

const message = (i: number): acp.AnyMessage => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `chunk ${i} ✓` } } },
});

describe("stdout message writer", () => {
  it("writes JSON.stringify(message) + newline, through one shared writer", async () => {
    const out = new PassThrough();
    let text = "";
    out.setEncoding("utf8").on("data", (d: string) => (text += d));
    const stream = stdoutMessages(out);
    const writer = stream.getWriter();
    expect(stream.getWriter()).toBe(writer);
    for (let i = 0; i < 3; i++) await writer.write(message(i));
    writer.releaseLock();
    expect(text).toBe([0, 1, 2].map((i) => `${JSON.stringify(message(i))}\n`).join(""));
  });

  it("holds a write until the reader drains, then goes on", async () => {
    const out = new SlowSink();
    const writer = stdoutMessages(out).getWriter();
    let first = false;
    const pending = writer.write(message(0)).then(() => (first = true)); // over the 64-byte high-water mark: waits for drain
    await new Promise((resolve) => setImmediate(resolve));
    expect(first).toBe(false);
    expect(writer.desiredSize).toBe(0);
    const ready = writer.ready;
    out.release();
    await pending;
    await ready;
    const second = writer.write(message(1));
    await new Promise((resolve) => setImmediate(resolve));
    out.release();
    await second;
    expect(out.chunks.map((c) => JSON.parse(c).params.update.content.text)).toEqual(["chunk 0 ✓", "chunk 1 ✓"]);
  });

  it("fails a waiting write when stdout closes, and refuses writes afterwards", async () => {
    const out = new SlowSink();
    const writer = stdoutMessages(out).getWriter();
    const waiting = writer.write(message(0));
    out.destroy();
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(writer.write(message(1))).rejects.toThrow(/closed/);
  });

  it("carries a whole SDK agent ↔ client exchange", async () => {
    const toClient = new PassThrough();
    const toAgent = new PassThrough();
    const { Readable } = await import("node:stream");
    const agentStream = acp.ndJsonStream(Writable.toWeb(toClient), Readable.toWeb(toAgent) as ReadableStream<Uint8Array>);
    const updates: string[] = [];
    acp
      .agent({ name: "t" })
      .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
      .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "s1" }))
      .onRequest(acp.methods.agent.session.prompt, async ({ client }) => {
        for (let i = 0; i < 50; i++)
          await client.notify(acp.methods.client.session.update, {
            sessionId: "s1",
            update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${i},` } },
          });
        return { stopReason: "end_turn" };
      })
      .connect({ readable: agentStream.readable, writable: stdoutMessages(toClient) });
    await acp
      .client({ name: "c" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === "agent_message_chunk" && params.update.content.type === "text")
          updates.push(params.update.content.text);
      })
      .connectWith(acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(toClient) as ReadableStream<Uint8Array>), async (agent) => {
        await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
        const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
        await expect(
          agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] }),
        ).resolves.toMatchObject({ stopReason: "end_turn" });
      });
    expect(updates.join("")).toBe(Array.from({ length: 50 }, (_, i) => `${i},`).join(""));
  });
});
