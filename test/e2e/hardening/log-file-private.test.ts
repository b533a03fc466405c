/**
 * The built CLI's log file is private (adr/0021): created 0600, a symbolic link refused at start
 * with exit 2 and a clear reason (in ACP mode, check and onboard), nothing written through it.
 */
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
});
