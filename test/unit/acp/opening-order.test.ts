/**
 * The opening updates of a session are written only after its session/new response was flushed
 * (adr/0017): our agent app over our stdout writer, on a stdout whose writes are flushed late.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { AnyMessage } from "@agentclientprotocol/sdk";
import { afterAll, describe, expect, it } from "vitest";
import { createZcodeAgent } from "../../../src/acp/agent-app.js";
import { stdoutMessages } from "../../../src/cli/stdout-messages.js";
import { silentLogger } from "../../../src/log/logger.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { FakeHost } from "../../support/fake-host.js";
import { StubBroker } from "../../support/stub-broker.js";
import { until } from "../../support/until.js";

const W = realpathSync(mkdtempSync(join(tmpdir(), "acp-opening-")));
afterAll(() => rmSync(W, { recursive: true, force: true }));

const nameOf = (chunk: Buffer | string): string => {
  const message = JSON.parse(chunk.toString()) as Record<string, any>;
  return message.method === "session/update" ? `update:${message.params.update.sessionUpdate}` : `response:${message.id}`;
};

/** A stdout that takes every write at once (logged when handed over) but flushes each only `delayMs` later. */
function slowStdout(delayMs: number, events: string[]): Writable {
  const out = new Writable({
    highWaterMark: 1 << 24,
    write(chunk: Buffer, _encoding, callback) {
      setTimeout(() => {
        events.push(`flushed ${nameOf(chunk)}`);
        callback();
      }, delayMs);
    },
  });
  const write = out.write.bind(out) as (chunk: string, callback?: (error?: Error | null) => void) => boolean;
  out.write = ((chunk: string, ...rest: unknown[]) => {
    events.push(`write ${nameOf(chunk)}`);
    return write(chunk, ...(rest as [((error?: Error | null) => void)?]));
  }) as typeof out.write;
  return out;
}

describe("the opening updates of session/new", () => {
  it("are written after the response was flushed, not right behind it", async () => {
    const events: string[] = [];
    const agent = createZcodeAgent({
      native: new CurrentLineApi(new FakeHost()),
      logger: silentLogger,
      createBroker: () => new StubBroker(),
      cancelGraceMs: 1000,
      mergeDeltas: true,
      defaultCwd: W,
      reportsWrites: true,
    });
    let input!: ReadableStreamDefaultController<AnyMessage>;
    const readable = new ReadableStream<AnyMessage>({ start: (controller) => void (input = controller) });
    const writable = stdoutMessages(slowStdout(30, events), { responseWritten: (message) => agent.responseWritten?.(message) });
    const connection = agent.app.connect({ readable, writable });
    input.enqueue({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    await until(() => events.includes("flushed response:1"));
    input.enqueue({ jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: W, mcpServers: [] } });
    await until(() => events.includes("write update:available_commands_update"), { timeoutMs: 5000 });
    const opening = events.filter((e) => e.endsWith("response:2") || e.endsWith("available_commands_update"));
    expect(opening.slice(0, 3)).toEqual(["write response:2", "flushed response:2", "write update:available_commands_update"]);
    input.close();
    await connection.closed.catch(() => undefined);
    await agent.shutdown();
  });
});
