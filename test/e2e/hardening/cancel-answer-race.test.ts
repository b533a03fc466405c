/**
 * Wire order decides between `session/cancel` and the client's answer to a pending interaction
 * (adr/0006): once the cancel is read, every pending interaction of the session is answered to
 * the host with a real deny / decline exactly once and a later allow is dropped; an allow read
 * before the cancel is kept. Exact bytes through the built CLI, then the simulated host's call
 * log shows what ZCode received. One bridge (and host) per client profile, shared by the file's
 * tests: each test races in a session of its own, and the race is per session (CI time, adr/0037).
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type CallLogEntry, type SimInstall } from "../../../fixtures/sim-install.js";
import { stopsFor } from "../../support/bridge-process.js";
import { answersFor, V3 } from "../answers.js";
import { RawAcpClient, cancelLine, resultLine, type RawLine } from "../../support/raw-acp-client.js";

interface Scenario {
  name: string;
  prompt: string;
  capabilities: Record<string, unknown>;
  /** the agent → client request that asks */
  ask: string;
  /** the client's approving answer to that request */
  approve(request: any): RawLine;
  /** the host method that receives the answer, and whether an answer approved */
  native: "respondPermission" | "respondElicitation";
  approved(params: Record<string, unknown>): boolean;
}

const allowOnce = (request: any): RawLine =>
  resultLine(request.id, {
    outcome: { outcome: "selected", optionId: request.params.options.find((o: any) => o.kind === "allow_once").optionId },
  });

const SCENARIOS: Scenario[] = [
  {
    name: "a permission",
    prompt: "sim:permission",
    capabilities: {},
    ask: "session/request_permission",
    approve: allowOnce,
    native: "respondPermission",
    approved: (p) => String(p.optionId).startsWith("allow"),
  },
  {
    name: "an ExitPlanMode plan approval",
    prompt: "sim:plan-permission",
    capabilities: {},
    ask: "session/request_permission",
    approve: allowOnce,
    native: "respondPermission",
    approved: (p) => p.optionId === "allow-plan",
  },
  {
    name: "an ExitPlanMode plan approval asked as a form",
    prompt: "sim:plan-permission",
    capabilities: { elicitation: { form: {} } },
    ask: "elicitation/create",
    approve: (request) => resultLine(request.id, { action: "accept", content: { decision: "allow-plan" } }),
    native: "respondPermission",
    approved: (p) => p.optionId === "allow-plan",
  },
  {
    name: "a plan_approval input",
    prompt: "sim:plan-userinput",
    capabilities: { elicitation: { form: {} } },
    ask: "elicitation/create",
    approve: (request) => resultLine(request.id, { action: "accept", content: { answer_0: "approve" } }),
    native: "respondElicitation",
    approved: (p) => p.action === "accept",
  },
];

let sim: SimInstall;
/** the bridges, one per client profile (capabilities are per connection), by their capabilities */
const bridges = new Map<string, Promise<RawAcpClient>>();
beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterAll(async () => {
  try {
    // every bridge exits 0 once its stdin closes, whatever the races left behind
    for (const bridge of bridges.values()) expect(await (await bridge).close()).toEqual({ code: 0, signal: null });
  } finally {
    await sim?.cleanup();
  }
});

/** the file's bridge for this client profile, initialized once */
function bridgeFor(capabilities: Record<string, unknown>): Promise<RawAcpClient> {
  const key = JSON.stringify(capabilities);
  let bridge = bridges.get(key);
  if (bridge === undefined) {
    bridge = (async () => {
      const client = RawAcpClient.start({ env: sim.env });
      const init = await client.request("initialize", { protocolVersion: 1, clientCapabilities: capabilities });
      if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
      return client;
    })();
    bridges.set(key, bridge);
  }
  return bridge;
}

/** a session of its own, whose prompt is waiting on the interaction; returns the ask */
async function pendingInteraction(scenario: Scenario) {
  const client = await bridgeFor(scenario.capabilities);
  const workspace = await mkdtemp(join(dirname(sim.root), "ws-"));
  const opened = await client.request("session/new", { cwd: workspace, mcpServers: [] });
  if (opened.error) throw new Error(`session/new failed: ${JSON.stringify(opened.error)}`);
  const sessionId = opened.result.sessionId as string;
  const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: scenario.prompt }] });
  await client.write([prompt.line]);
  const ask = await client.waitForAgent((m) => m.method === scenario.ask && m.params?.sessionId === sessionId, scenario.ask);
  return { client, sessionId, promptId: prompt.id, ask };
}

/** After the cancelled prompt: one more prompt on the same ordered host channel, so every earlier call is in the log. */
async function settle(client: RawAcpClient, sessionId: string): Promise<void> {
  const next = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "after the race" }] });
  expect(next.result).toMatchObject({ stopReason: "end_turn" });
}

async function nativeAnswers(scenario: Scenario, sessionId: string): Promise<Array<Record<string, unknown>>> {
  return answersFor(await sim.readCallLog(), scenario.native, sessionId);
}

/** every line so far valid and every request of the client answered (the bridge's exit is checked after the file) */
function finish(client: RawAcpClient): void {
  expect(client.transcript.problems).toEqual([]);
  expect(client.transcript.unanswered("client")).toEqual([]);
}

describe("session/cancel read before the client's answer", () => {
  for (const scenario of SCENARIOS) {
    for (const writes of ["one write", "two writes"] as const) {
      it(`${scenario.name}: cancel then allow in ${writes} → cancelled, the host gets one real refusal and never the allow`, async () => {
        const { client, sessionId, promptId, ask } = await pendingInteraction(scenario);
        if (writes === "one write") await client.write([cancelLine(sessionId), scenario.approve(ask)]);
        else {
          await client.write([cancelLine(sessionId)]);
          await client.write([scenario.approve(ask)]);
        }
        expect((await client.response(promptId)).result).toMatchObject({ stopReason: "cancelled" });
        await settle(client, sessionId);
        const answers = await nativeAnswers(scenario, sessionId);
        expect(answers).toHaveLength(1);
        expect(scenario.approved(answers[0]!)).toBe(false);
        if (scenario.native === "respondPermission") expect(answers[0]!.optionId).toMatch(/deny/);
        else expect(["decline", "cancel"]).toContain(answers[0]!.action);
        expect(stopsFor(await sim.readCallLog(), sessionId)).toHaveLength(1);
        finish(client);
      });
    }
  }
});

describe("the client's answer read before session/cancel", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: allow then cancel in one write → the host gets the allow, once, and no refusal`, async () => {
      const { client, sessionId, promptId, ask } = await pendingInteraction(scenario);
      await client.write([scenario.approve(ask), cancelLine(sessionId)]);
      expect((await client.response(promptId)).result).toMatchObject({ stopReason: "cancelled" });
      await settle(client, sessionId);
      const answers = await nativeAnswers(scenario, sessionId);
      expect(answers).toHaveLength(1);
      expect(scenario.approved(answers[0]!)).toBe(true);
      // the allow reached the host before the cancel took effect
      const log = await sim.readCallLog();
      const ofSession = (e: CallLogEntry): boolean => {
        const p = e.params as Record<string, unknown>;
        return p?.sessionId === sessionId || p?.taskId === sessionId;
      };
      // zcode-task-v3 answers by the V4 resolveInteraction command
      const answered = (e: CallLogEntry, method: string): boolean =>
        V3
          ? e.method === "sendConversationCommandV4" &&
            (e.params as { envelope?: { type?: string; sessionId?: string } }).envelope?.type === "resolveInteraction" &&
            (e.params as { envelope?: { sessionId?: string } }).envelope?.sessionId === sessionId
          : e.method === method && ofSession(e);
      const seqOf = (method: string): number => log.find((e) => e.kind === "call" && answered(e, method))!.seq;
      const stopSeq = log.find(
        (e) =>
          e.kind === "call" &&
          (e.method === "stopGeneration" ||
            (e.method === "sendConversationCommandV4" && (e.params as { envelope?: { type?: string } }).envelope?.type === "stop")) &&
          (ofSession(e) || (e.params as { envelope?: { sessionId?: string } }).envelope?.sessionId === sessionId),
      )!.seq;
      expect(seqOf(scenario.native)).toBeLessThan(stopSeq);
      finish(client);
    });
  }
});

describe("$/cancel_request of the prompt read before the client's answer", () => {
  it("a permission: $/cancel_request then allow in one write → cancelled, one deny, never the allow", async () => {
    const scenario = SCENARIOS[0]!;
    const { client, sessionId, promptId, ask } = await pendingInteraction(scenario);
    await client.write([{ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: promptId } }, scenario.approve(ask)]);
    expect((await client.response(promptId)).result).toMatchObject({ stopReason: "cancelled" });
    await settle(client, sessionId);
    const answers = await nativeAnswers(scenario, sessionId);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.optionId).toMatch(/deny/);
    finish(client);
  });
});
