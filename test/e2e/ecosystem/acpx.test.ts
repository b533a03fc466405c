/**
 * Real-client smoke test: acpx (a public ACP client from npm) drives the built bridge against a
 * simulated install. Every line in both directions is validated against the SDK schema.
 *
 * acpx is installed from the npm registry into a temporary directory here rather than being a
 * dev dependency: one of its dependencies lists optional per-platform packages that the registry
 * does not serve for every platform, which makes a committed lockfile unusable with `npm ci`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { CLI_PATH } from "../../support/cli-process.js";
import { Transcript } from "../../support/acp-transcript.js";
import { addQuestionScenarios } from "../../support/question-scenarios.js";

const ACPX_VERSION = "0.19.1";
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
let acpxCli: string;
const TEE = fileURLToPath(new URL("./support/tee-agent.mjs", import.meta.url));

let sim: SimInstall;
const tempDirs: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};
beforeAll(async () => {
  sim = await createSimulatedInstall();
  await addQuestionScenarios(sim); // sim:question (one single-select question)
  const dir = tempDir("zcode-acp-acpx-install-");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "acpx-smoke", version: "1.0.0", private: true }));
  await execa(NPM, ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", `acpx@${ACPX_VERSION}`], {
    cwd: dir,
    timeout: 150_000,
  });
  acpxCli = join(dir, "node_modules/acpx/dist/cli.js");
}, 180_000);
afterAll(async () => {
  await sim?.cleanup();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function problemsOfUnanswered(transcript: Transcript): void {
  for (const request of transcript.unanswered("client")) transcript.problems.push(`client request never answered: ${request}`);
  for (const request of transcript.unanswered("agent")) transcript.problems.push(`agent request never answered: ${request}`);
}

async function runAcpx(policy: "--approve-all" | "--deny-all", prompt: string) {
  const dir = tempDir("zcode-acp-acpx-");
  const agentOut = join(dir, "agent-stdout.jsonl");
  const agent = `${process.execPath} ${TEE} ${process.execPath} ${CLI_PATH}`;
  const result = await execa(process.execPath, [acpxCli, "--agent", agent, "--cwd", dir, policy, "--format", "json", "exec", prompt], {
    cwd: dir,
    env: { ...sim.env, TEE_AGENT_FILE: agentOut },
    reject: false,
    timeout: 60_000,
  });
  const transcript = new Transcript();
  const lines = readFileSync(agentOut, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { from: "client" | "agent"; raw: string });
  for (const line of lines) transcript.record(line.from, line.raw);
  const agentLines = lines.filter((l) => l.from === "agent").map((l) => l.raw);
  problemsOfUnanswered(transcript);
  return { result, agentLines, problems: transcript.problems };
}

describe("acpx smoke test", () => {
  it("approve-all: the permission is granted, the turn ends, exit 0", async () => {
    const { result, agentLines, problems } = await runAcpx("--approve-all", "sim:permission");
    expect(result.exitCode, result.stderr).toBe(0);
    expect(problems).toEqual([]);
    expect(agentLines.some((l) => l.includes('"session/request_permission"'))).toBe(true);
    expect(agentLines.some((l) => l.includes('"stopReason":"end_turn"'))).toBe(true);
    const log = await sim.readCallLog();
    const answers = log.filter((e) => e.kind === "call" && e.method === "respondPermission");
    expect(answers).toHaveLength(1);
    expect((answers[0]!.params as { optionId: string }).optionId).toMatch(/^allow/);
  });

  it("deny-all: the host gets a real deny once and acpx exits 5 (permission denied)", async () => {
    const before = (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === "respondPermission").length;
    const { result, problems } = await runAcpx("--deny-all", "sim:permission");
    expect(result.exitCode, result.stderr).toBe(5);
    expect(problems).toEqual([]);
    const answers = (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === "respondPermission").slice(before);
    expect(answers).toHaveLength(1);
    expect((answers[0]!.params as { optionId: string }).optionId).toBe("deny");
  });

  it("a question (acpx has no elicitation) is a permission: approve-all answers the first choice, deny-all declines it", async () => {
    const answers = async () => (await sim.readCallLog()).filter((e) => e.kind === "call" && e.method === "respondElicitation");
    const before = (await answers()).length;
    const approved = await runAcpx("--approve-all", "sim:question");
    expect(approved.result.exitCode, approved.result.stderr).toBe(0);
    expect(approved.problems).toEqual([]);
    expect(approved.agentLines.some((l) => l.includes('"elicitation/create"'))).toBe(false);
    const denied = await runAcpx("--deny-all", "sim:question");
    expect(denied.problems).toEqual([]);
    expect(denied.agentLines.some((l) => l.includes('"stopReason":"end_turn"'))).toBe(true);
    const [first, second] = (await answers()).slice(before).map((e) => e.params as { action: string; content?: { answer?: string } });
    expect(first).toMatchObject({ action: "accept", content: { answer: "vitest" } });
    expect(second).toMatchObject({ action: "decline" });
    expect(second).not.toHaveProperty("content");
  });
});
