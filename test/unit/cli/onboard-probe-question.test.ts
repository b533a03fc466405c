/**
 * `onboard --probe` asks before it runs anything (docs/runtime-contract.md §6): in-process, with a
 * person's answer on stdin, against a simulated 3.16.2 no manifest covers. "n" starts nothing; "y"
 * starts the host and writes the report; neither pins the build.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { PassThrough, Readable } from "node:stream";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { resolveConfig } from "../../../src/cli/config.js";
import { runOnboardCommand } from "../../../src/cli/onboard-command.js";

let sim: SimInstall;
let out: string;
beforeAll(async () => {
  sim = await createSimulatedInstall({ release: "3.14.5", appVersion: "3.16.2", cliVersion: "0.17.0" });
  out = await mkdtemp(join(tmpdir(), "zcode-acp-probe-"));
});
afterAll(async () => {
  await sim.cleanup();
  await rm(out, { recursive: true, force: true });
});

async function probe(answer: string, file: string): Promise<{ code: number; stdout: string }> {
  const env = { ...process.env, ...sim.env, ZCODE_ACP_LOG_LEVEL: "error" };
  const stdout = new PassThrough();
  let text = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  const code = await runOnboardCommand(resolveConfig(["onboard", "--probe", "--report", file], env), {
    stdout,
    stderr: new PassThrough(),
    env,
    stdin: Readable.from([answer]),
    interactive: true,
  });
  return { code, stdout: text };
}

const hostCalls = async (): Promise<string[]> =>
  (await sim.readCallLog().catch(() => [])).filter((e) => e.kind === "call").map((e) => e.method ?? "");

describe("onboard --probe in a terminal", () => {
  it("n: nothing is started, no report, exit 1", async () => {
    const file = join(out, "no.json");
    const run = await probe("n\n", file);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("Start the host of ZCode 3.16.2 to probe it? [y/N] ");
    expect(run.stdout).toContain("Nothing was started.");
    expect(await hostCalls()).toEqual([]);
    expect(await readdir(out)).toEqual([]);
  });

  it("y: the host is started, the report written, nothing pinned", async () => {
    const file = join(out, "yes.json");
    const run = await probe("y\n", file);
    expect(run.code).toBe(0);
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ probe: { start: { status: "ok" }, hello: { protocolVersion: 3 } } });
    expect(await hostCalls()).toContain("helloConversationV4");
    expect(await readdir(join(sim.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => [])).toEqual([]);
  });
});
