/**
 * The early `initialize` answer through the built CLI (src/cli/early-initialize.ts): the first
 * line is answered before the SDK loads, with the bytes the SDK path writes; every later byte
 * reaches the SDK in order; anything that is not a well-formed initialize first goes to the SDK
 * unchanged. Raw writes decide how the input is split.
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { INITIALIZE_PARAMS, RawCli, requestLine } from "../../support/raw-cli.js";

let sim: SimInstall;
const started: RawCli[] = [];

beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((cli) => cli.close()));
});
afterAll(async () => {
  await sim?.cleanup();
});

function start(env: Record<string, string> = {}): RawCli {
  const cli = RawCli.start({ ...sim.env, ...env });
  started.push(cli);
  return cli;
}

const workspace = (): Promise<string> => mkdtemp(join(dirname(sim.root), "ws-"));
const INIT = requestLine(0, "initialize", INITIALIZE_PARAMS);

/** the answer line the SDK path writes: a blank first line is not an initialize request */
async function sdkPathAnswer(): Promise<string> {
  const cli = start();
  await cli.write(`\n${INIT}`);
  return (await cli.answer(0)).raw;
}

const hostLaunches = async (): Promise<number> =>
  (await sim.readCallLog()).filter((e) => e.kind === "parent-message" && e.type === "init-local").length;

describe("e2e: initialize answered before the SDK loads", () => {
  it("answers with the SDK path's bytes, once, and the session works after it", async () => {
    const expected = await sdkPathAnswer();
    const cli = start();
    await cli.write(INIT);
    const answer = await cli.answer(0);
    expect(answer.raw).toBe(expected);
    expect(answer.message.result.protocolVersion).toBe(1);
    await cli.write(requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }));
    const created = await cli.answer(1);
    expect(created.message.result.sessionId).toMatch(/^ses_/);
    expect(cli.agentLines().filter((l) => l.message?.id === 0)).toHaveLength(1);
    expect(cli.transcript.problems).toEqual([]);
    expect(cli.transcript.unanswered("client")).toEqual([]);
  });

  it("takes an initialize split across many writes", async () => {
    const cli = start();
    const bytes = Buffer.from(INIT);
    for (let at = 0; at < bytes.length; at += 7) await cli.write(bytes.subarray(at, Math.min(bytes.length, at + 7)));
    expect((await cli.answer(0)).raw).toBe(await sdkPathAnswer());
    await cli.write(requestLine(1, "session/list", {}));
    expect((await cli.answer(1)).message.result.sessions).toEqual([]);
    expect(cli.transcript.problems).toEqual([]);
  });

  it("takes initialize and session/new in one write: both answered in order, the host starts once", async () => {
    const before = await hostLaunches();
    const cli = start();
    const cwd = await workspace();
    await cli.write(INIT + requestLine(1, "session/new", { cwd, mcpServers: [] }));
    const created = await cli.answer(1);
    const ids = cli
      .agentLines()
      .filter((l) => l.message && !("method" in l.message))
      .map((l) => l.message.id);
    expect(ids).toEqual([0, 1]);
    // ZCode keeps the session from its first prompt on (deferred persistence): prompt, then list
    const sessionId = created.message.result.sessionId as string;
    await cli.write(requestLine(3, "session/prompt", { sessionId, prompt: [{ type: "text", text: "keep" }] }));
    await cli.answer(3);
    await cli.write(requestLine(2, "session/list", { cwd }));
    const listed = await cli.answer(2);
    expect(listed.message.result.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual([created.message.result.sessionId]);
    expect(await hostLaunches()).toBe(before + 1);
    expect(cli.transcript.problems).toEqual([]);
  });

  it("leaves a first line that is another request to the SDK: refused before initialize, as before", async () => {
    const cli = start();
    await cli.write(requestLine(5, "session/list", {}) + INIT);
    const refused = await cli.answer(5);
    expect(refused.message.error.code).toBe(-32600);
    const answer = await cli.answer(0);
    expect(answer.raw).toBe(await sdkPathAnswer());
    expect(cli.agentLines().map((l) => l.message.id)).toEqual([5, 0]);
  });

  it("leaves a garbage first line to the SDK: a parse error, then initialize works", async () => {
    const cli = start();
    await cli.write("this is not json\n");
    const parseError = await cli.waitFor((m) => m.error?.code === -32700);
    expect(parseError.message.id).toBeNull();
    await cli.write(INIT);
    expect((await cli.answer(0)).message.result.agentInfo.name).toBe("zcode-acp");
    await cli.write(requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }));
    expect((await cli.answer(1)).message.result.sessionId).toMatch(/^ses_/);
  });

  it("leaves an initialize the SDK would refuse to the SDK (protocolVersion out of range)", async () => {
    const cli = start();
    await cli.write(requestLine(0, "initialize", { ...INITIALIZE_PARAMS, protocolVersion: 70000 }));
    expect((await cli.answer(0)).message.error.code).toBe(-32602);
    await cli.write(requestLine(1, "initialize", INITIALIZE_PARAMS));
    expect((await cli.answer(1)).message.result.protocolVersion).toBe(1);
  });

  it("a probe that sends only initialize and closes stdin starts no host and exits 0", async () => {
    const before = await hostLaunches();
    const cli = start();
    await cli.write(INIT);
    await cli.answer(0);
    expect(await cli.close()).toEqual({ code: 0, signal: null });
    expect(await hostLaunches()).toBe(before);
  });

  it("exits 0 on SIGTERM before the client wrote anything", async () => {
    const cli = start({ ZCODE_ACP_LOG_LEVEL: "info" });
    // the CLI listens for signals before it logs its start
    await new Promise<void>((resolve) => {
      const check = (): void => (cli.stderr.includes("zcode-acp starting") ? resolve() : void cli.child.stderr.once("data", check));
      check();
    });
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toEqual({ code: 0, signal: null });
  });

  it("an unsupported install still answers initialize early and fails session/new as before", async () => {
    const cli = start({ ZCODE_ACP_ZCODE_INSTALL: join(dirname(sim.root), "no-such-install") });
    await cli.write(INIT);
    await cli.answer(0);
    await cli.write(requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }));
    const failed = await cli.answer(1);
    expect(failed.message.error.message).toMatch(/ZCode/);
    expect(cli.transcript.problems).toEqual([]);
  });
});
