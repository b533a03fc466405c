/**
 * `zcode-acp onboard` run by a person (adr/0021): in a terminal (a pseudo-terminal from util-linux
 * `script`) it shows the review and asks; "y" pins the build, "n" writes nothing. Without a
 * terminal it behaves as before (the report, the hint about --accept, nothing written): the
 * onboarding tests in ./onboard-cli.test.ts run without one.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { CLI_PATH } from "../../support/cli-process.js";

const SCRIPT = "/usr/bin/script";
const hasPty = process.platform === "linux" && existsSync(SCRIPT);

/** Runs `zcode-acp onboard` on a pseudo-terminal; types `answer` once the question is shown. */
function onboardInTerminal(env: Record<string, string>, answer: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)} onboard`;
    const child = spawn(SCRIPT, ["-qec", command, "/dev/null"], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    let answered = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`onboard in a terminal did not finish; output so far:\n${output}`));
    }, 25_000);
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      output += text;
      if (!answered && output.includes("[y/N] ")) {
        answered = true;
        child.stdin.write(answer);
      }
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.once("exit", (code) => {
      clearTimeout(timer);
      child.stdin.end();
      resolve({ code, output });
    });
  });
}

describe.runIf(hasPty)("zcode-acp onboard in a terminal", () => {
  let sim: SimInstall;
  beforeEach(async () => {
    sim = await createSimulatedInstall({ release: "3.14.5" });
  });
  afterEach(async () => {
    await sim?.cleanup();
  });
  const stored = () => readdir(join(sim.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => [] as string[]);

  it("shows the review, asks, and pins the build on y", async () => {
    const { code, output } = await onboardInTerminal(sim.env, "y\r");
    expect(code).toBe(0);
    expect(output).toMatch(/ZCode onboarding: candidate found/);
    expect(output).toMatch(/WARNING: zcode-acp has NOT verified this ZCode build/);
    expect(output).toContain("Pin ZCode 3.14.5 (CLI 0.16.9) in your local manifest store, so that zcode-acp drives it from now on? [y/N] ");
    expect(output).not.toContain("Run `zcode-acp onboard --accept` to pin this build");
    expect(output).toMatch(/Accepted: written to .*zcode-3\.14\.5\.local\.json/);
    expect(await stored()).toEqual(["zcode-3.14.5.local.json"]);
  });

  it("writes nothing on n, and exits 1 (for terminal auth: the build is still not usable)", async () => {
    const { code, output } = await onboardInTerminal(sim.env, "n\r");
    expect(code).toBe(1);
    expect(output).toContain("[y/N] ");
    expect(output).toContain("Nothing was written.");
    expect(await stored()).toEqual([]);
  });
});
