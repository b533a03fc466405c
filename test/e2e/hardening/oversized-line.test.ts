/**
 * A line over the ACP message limit (the SDK's DEFAULT_MAX_MESSAGE_BYTES) through the built
 * CLI: answered with a JSON-RPC error that names the limit, skipped up to its newline, and the
 * connection keeps serving (src/acp/incoming-messages.ts). It used to end the connection
 * silently with exit 0.
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DEFAULT_MAX_MESSAGE_BYTES } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";

let sim: SimInstall;
beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterAll(async () => {
  await sim?.cleanup();
});

const LIMIT_TEXT = `${DEFAULT_MAX_MESSAGE_BYTES} bytes (32 MiB)`;

describe("a line over the ACP message limit", () => {
  it("answers the request with -32602 naming the limit and keeps serving the session", async () => {
    const client = RawAcpClient.start({ env: sim.env });
    const sessionId = await client.openSession(await mkdtemp(join(dirname(sim.root), "ws-")));
    const huge = client.requestLine("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "y".repeat(DEFAULT_MAX_MESSAGE_BYTES) }],
    });
    // the oversized line and a normal one right behind it, in one write
    const after = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: "still here" }] });
    await client.writeBytes(`${JSON.stringify(huge.line)}\n${JSON.stringify(after.line)}\n`);
    const refused = await client.response(huge.id, 20_000);
    expect(refused.error).toMatchObject({ code: -32602, data: { code: "MESSAGE_TOO_LARGE", limitBytes: DEFAULT_MAX_MESSAGE_BYTES } });
    expect(refused.error.message).toContain(LIMIT_TEXT);
    expect((await client.response(after.id, 20_000)).result).toMatchObject({ stopReason: "end_turn" });
    expect(client.stderr).not.toMatch(/stdin closed/);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });

  it("answers a line without a readable id with id null, and the next request is served", async () => {
    const client = RawAcpClient.start({ env: sim.env });
    await client.writeBytes(`${"z".repeat(DEFAULT_MAX_MESSAGE_BYTES + 10)}\n`);
    const refused = await client.waitForAgent((m) => m.id === null && m.error !== undefined, "the error for the oversized line", 20_000);
    expect(refused.error).toMatchObject({ code: -32600, data: { code: "MESSAGE_TOO_LARGE" } });
    expect(refused.error.message).toContain(LIMIT_TEXT);
    const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(init.result.protocolVersion).toBe(1);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });
});
