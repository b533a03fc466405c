/**
 * The end of input through the built CLI (adr/0036): every request read before stdin closed is
 * answered — finished, or refused with a clear error — then the sessions close and the process
 * exits. (Before, the SDK closed the connection at the end of input and dropped what it still
 * handled: `initialize` + `session/new`, then EOF, answered `initialize` only.)
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

function start(): RawCli {
  const cli = RawCli.start({ ...sim.env });
  started.push(cli);
  return cli;
}

const workspace = (): Promise<string> => mkdtemp(join(dirname(sim.root), "ws-"));
const INIT = requestLine(0, "initialize", INITIALIZE_PARAMS);

/** the answers the agent wrote, by request id */
function answers(cli: RawCli): Map<unknown, any> {
  const byId = new Map<unknown, any>();
  for (const line of cli.agentLines())
    if (line.message && !("method" in line.message) && "id" in line.message) byId.set(line.message.id, line.message);
  return byId;
}

describe("e2e: the end of input", () => {
  it("answers initialize and session/new read before stdin closed, then exits", async () => {
    const cli = start();
    await cli.write(INIT + requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }));
    const exit = await cli.close(60_000);
    expect(exit.code).toBe(0);
    const got = answers(cli);
    expect(got.get(0)?.result?.protocolVersion).toBe(1);
    // the end of input does not wait for a host start (adr/0019): session/new is refused, with a word why
    const opened = got.get(1);
    if (opened?.result) expect(opened.result.sessionId).toMatch(/^ses_/);
    else expect(opened?.error?.message, "session/new answered with a result or a clear error").toMatch(/\w{3,}.*\w{3,}/);
    expect(cli.transcript.problems).toEqual([]);
  });

  it("answers initialize + session/new + a prompt piped at once (three answers), then exits", async () => {
    const cli = start();
    await cli.write(
      INIT +
        requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }) +
        // a pipe cannot know the new session's id: this prompt names one that does not exist
        requestLine(2, "session/prompt", { sessionId: "ses_0000000000000000", prompt: [{ type: "text", text: "piped" }] }),
    );
    const exit = await cli.close(60_000);
    expect(exit.code).toBe(0);
    const got = answers(cli);
    expect([...got.keys()].sort()).toEqual([0, 1, 2]);
    const opened = got.get(1);
    if (opened?.result) expect(opened.result.sessionId).toMatch(/^ses_/);
    else expect(opened?.error?.message, "session/new answered with a result or a clear error").toMatch(/\w{3,}.*\w{3,}/);
    expect(got.get(2)?.error?.data?.code).toBe("SESSION_NOT_FOUND");
    expect(cli.transcript.problems).toEqual([]);
  });

  it("lets a prompt that runs when stdin closes finish its turn: its updates, then its answer, then the exit", async () => {
    const cli = start();
    await cli.write(INIT + requestLine(1, "session/new", { cwd: await workspace(), mcpServers: [] }));
    const sessionId = (await cli.answer(1, 30_000)).message.result.sessionId as string;
    await cli.write(requestLine(2, "session/prompt", { sessionId, prompt: [{ type: "text", text: "last words" }] }));
    const exit = await cli.close(60_000);
    expect(exit.code).toBe(0);
    const got = answers(cli);
    expect(got.get(2), cli.stderr.slice(-2000)).toMatchObject({ result: { stopReason: "end_turn" } });
    const lines = cli.agentLines().map((line) => line.message);
    const answerAt = lines.findIndex((m) => m?.id === 2 && !("method" in m));
    const textAt = lines.findIndex((m) => m?.method === "session/update" && m.params.update.sessionUpdate === "agent_message_chunk");
    expect(textAt).toBeGreaterThanOrEqual(0);
    expect(textAt).toBeLessThan(answerAt);
    expect(cli.transcript.problems).toEqual([]);
  });

  it("answers the initialize after a garbage first line, then exits", async () => {
    const cli = start();
    await cli.write(`not json\n${INIT}`);
    const exit = await cli.close(60_000);
    expect(exit.code).toBe(0);
    const got = answers(cli);
    expect(got.get(null)?.error?.code).toBe(-32700);
    expect(got.get(0)?.result?.protocolVersion).toBe(1);
  });
});
