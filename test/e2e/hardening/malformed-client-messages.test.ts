/**
 * Malformed client messages through the built CLI (adr/0019): what the transport reads itself —
 * `$/cancel_request`, `session/cancel`, `initialize`, `session/prompt`, answers to our requests —
 * never ends the connection. A notification with missing or wrong-typed params is ignored
 * (logged at debug), a request with them gets -32602 naming the field, and the next request is
 * answered. Before adr/0019 the garbage `$/cancel_request` made the stdin reader throw: every
 * later request went unanswered and the process exited 1 at EOF.
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { stopsFor } from "../../support/bridge-process.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";
import { answersFor } from "../answers.js";

let sim: SimInstall;
beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterAll(async () => {
  await sim?.cleanup();
});

const workspace = (): Promise<string> => mkdtemp(join(dirname(sim.root), "ws-"));
/** debug records let a test see that the transport, not the SDK, dropped a notification */
const debugEnv = (): Record<string, string> => ({ ...sim.env, ZCODE_ACP_LOG_LEVEL: "debug" });
/** the transport's debug records of dropped notifications of `method` */
const ignored = (stderr: string, method: string): number =>
  stderr.split("\n").filter((line) => line.includes('"client message ignored"') && line.includes(`"method":"${method}"`)).length;
/** raw lines the transcript would refuse to record (they are not valid ACP): written as bytes */
const rawLines = (...lines: unknown[]): string => lines.map((l) => `${typeof l === "string" ? l : JSON.stringify(l)}\n`).join("");

describe("a malformed $/cancel_request", () => {
  it('{"params":"garbage"} is ignored: the next request is answered and EOF exits 0', async () => {
    const client = RawAcpClient.start({ env: debugEnv() });
    const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    expect(init.result.protocolVersion).toBe(1);
    await client.writeBytes(rawLines({ jsonrpc: "2.0", method: "$/cancel_request", params: "garbage" }));
    const opened = await client.request("session/new", { cwd: await workspace(), mcpServers: [] });
    expect(opened.result.sessionId).toEqual(expect.any(String));
    expect(client.stderr).not.toContain("reading stdin failed");
    expect(ignored(client.stderr, "$/cancel_request")).toBe(1);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });

  it("missing, wrong-typed and array params, also written together with a prompt in one write, leave the prompt running to its end", async () => {
    const client = RawAcpClient.start({ env: debugEnv() });
    const sessionId = await client.openSession(await workspace());
    const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
    await client.writeBytes(
      rawLines(
        prompt.line,
        { jsonrpc: "2.0", method: "$/cancel_request" },
        { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: { id: prompt.id } } },
        { jsonrpc: "2.0", method: "$/cancel_request", params: [prompt.id] },
        { jsonrpc: "2.0", method: "$/cancel_request", params: null },
      ),
    );
    expect((await client.response(prompt.id)).result).toMatchObject({ stopReason: "end_turn" });
    expect(ignored(client.stderr, "$/cancel_request")).toBe(4);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });
});

describe("malformed session/cancel notifications", () => {
  it("are ignored: the running prompt is not cancelled by them, a well-formed cancel (with an unknown extra field) still is", async () => {
    const client = RawAcpClient.start({ env: debugEnv() });
    const sessionId = await client.openSession(await workspace());
    const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:permission" }] });
    await client.write([prompt.line]);
    await client.waitForAgent((m) => m.method === "session/request_permission", "the permission request");
    await client.writeBytes(
      rawLines(
        { jsonrpc: "2.0", method: "session/cancel" },
        { jsonrpc: "2.0", method: "session/cancel", params: "garbage" },
        { jsonrpc: "2.0", method: "session/cancel", params: [sessionId] },
        { jsonrpc: "2.0", method: "session/cancel", params: { sessionId: 42 } },
        { jsonrpc: "2.0", method: "session/cancel", params: { session: sessionId } },
      ),
    );
    // the connection goes on: a request after them is answered, and nothing was cancelled
    const listed = await client.request("session/list", {});
    expect(listed.result.sessions).toEqual(expect.any(Array));
    expect(stopsFor(await sim.readCallLog(), sessionId)).toHaveLength(0);
    expect(client.transcript.agentMessages().some((m) => m.id === prompt.id)).toBe(false);
    // dropped by the transport (debug), never handed to the SDK (which printed "Error handling notification")
    expect(ignored(client.stderr, "session/cancel")).toBe(5);
    expect(client.stderr).not.toContain("Error handling notification");
    // unknown fields are ignored, as ACP requires: this cancel is applied
    await client.writeBytes(rawLines({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId, extra: true } }));
    expect((await client.response(prompt.id)).result).toMatchObject({ stopReason: "cancelled" });
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });
});

describe("malformed requests the transport reads", () => {
  it("get -32602 naming the field, and the connection goes on", async () => {
    const client = RawAcpClient.start({ env: sim.env });
    // a refused initialize first (the early answer's path), then a good one
    await client.writeBytes(rawLines({ jsonrpc: "2.0", id: "bad-init", method: "initialize", params: { protocolVersion: "one" } }));
    const refusedInit = await client.waitForAgent((m) => m.id === "bad-init", "the refused initialize");
    expect(refusedInit.error).toMatchObject({ code: -32602 });
    expect(refusedInit.error.message).toContain("protocolVersion");
    const sessionId = await client.openSession(await workspace());
    await client.writeBytes(
      rawLines(
        { jsonrpc: "2.0", id: "p1", method: "session/prompt", params: "garbage" },
        { jsonrpc: "2.0", id: "p2", method: "session/prompt", params: { sessionId: 7, prompt: [] } },
        { jsonrpc: "2.0", id: "p3", method: "session/prompt", params: { sessionId, prompt: "hello" } },
        { jsonrpc: "2.0", id: "p4", method: 42 },
      ),
    );
    const answers = await Promise.all(["p1", "p2", "p3", "p4"].map((id) => client.waitForAgent((m) => m.id === id, `the answer to ${id}`)));
    expect(answers.map((a) => a.error.code)).toEqual([-32602, -32602, -32602, -32600]);
    expect(answers[0].error.message).toContain("params must be an object");
    expect(answers[1].error.message).toContain("params.sessionId must be a string");
    expect(answers[2].error.message).toContain("params.prompt must be an array");
    const done = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(done.result).toMatchObject({ stopReason: "end_turn" });
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });

  it("a malformed answer to a permission request denies (never allows) and the turn goes on", async () => {
    const client = RawAcpClient.start({ env: sim.env });
    const sessionId = await client.openSession(await workspace());
    const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:permission" }] });
    await client.write([prompt.line]);
    const asked = await client.waitForAgent((m) => m.method === "session/request_permission", "the permission request");
    await client.writeBytes(
      rawLines({ jsonrpc: "2.0", id: asked.id, result: { outcome: { outcome: "selected", optionId: "allow" } }, error: 1 }),
    );
    expect((await client.response(prompt.id)).result).toMatchObject({ stopReason: expect.any(String) });
    const answers = answersFor(await sim.readCallLog(), "respondPermission", sessionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.optionId).toMatch(/deny/);
    expect(await client.close()).toEqual({ code: 0, signal: null });
  });
});
