/**
 * The built CLI's log file is private (adr/0021): created 0600, a symbolic link refused at start
 * with exit 2 and a clear reason (in ACP mode, check and onboard), nothing written through it; a
 * FIFO at the path is refused at once (exit 2), never waited on.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { runCli } from "../../support/cli-process.js";

let sim: SimInstall;
let dir: string;
beforeAll(async () => {
  sim = await createSimulatedInstall();
  dir = await mkdtemp(join(dirname(sim.root), "logs-"));
});
afterAll(async () => {
  await sim?.cleanup();
});

describe.runIf(process.platform !== "win32")("--log-file is private", () => {
  it("a new log file is created with mode 0600 (ACP mode and check)", async () => {
    const acpLog = join(dir, "acp.log");
    const acp = await runCli(["--log-file", acpLog], { env: sim.env, input: "" });
    expect(acp.code).toBe(0);
    expect(statSync(acpLog).mode & 0o777).toBe(0o600);
    expect(readFileSync(acpLog, "utf8")).toContain("zcode-acp starting");
    const checkLog = join(dir, "check.log");
    const check = await runCli(["check", "--log-file", checkLog, "--log-level", "debug"], { env: sim.env });
    expect(check.code).toBe(0);
    expect(statSync(checkLog).mode & 0o777).toBe(0o600);
  });

  it("a symbolic link as the log path is refused at start: exit 2, the reason on stderr, the target untouched", async () => {
    const target = join(dir, "victim.txt");
    await writeFile(target, "untouched\n");
    const link = join(dir, "link.log");
    await symlink(target, link);
    for (const [args, env] of [
      [["--log-file", link], {}],
      [[], { ZCODE_ACP_LOG_FILE: link }],
      [["check", "--log-file", link], {}],
      [["onboard", "--log-file", link], {}],
    ] as Array<[string[], Record<string, string>]>) {
      const run = await runCli(args, { env: { ...sim.env, ...env } });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain(`zcode-acp: The log file ${link} (--log-file / ZCODE_ACP_LOG_FILE) is a symbolic link`);
      expect(run.stdout).toBe("");
    }
    expect(readFileSync(target, "utf8")).toBe("untouched\n");
  });

  it("a FIFO as the log path is refused at once with exit 2 (start-up never waits for a reader)", async () => {
    const fifo = join(dir, "pipe.log");
    execFileSync("mkfifo", [fifo]);
    for (const args of [
      ["--log-file", fifo],
      ["check", "--log-file", fifo],
    ]) {
      // the old blocking open never returned: runCli would reject after its timeout
      const run = await runCli(args, { env: sim.env, input: "", timeoutMs: 10_000 });
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).toContain(
        `zcode-acp: The log file ${fifo} (--log-file / ZCODE_ACP_LOG_FILE) is a FIFO (named pipe), not a regular file`,
      );
      expect(run.stdout).toBe("");
    }
  });
});
