/**
 * A person's first run of the bin: `zcode-acp help` is the help; started bare in a terminal
 * (a pseudo-terminal from util-linux `script`) it says on stderr that it speaks ACP and is started
 * by an editor, then ends at Ctrl-D; started by an editor (pipes) it says nothing of the kind.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_PATH, runCli } from "../../support/cli-process.js";
import { until } from "../../support/until.js";

const SCRIPT = "/usr/bin/script";
const hasPty = process.platform === "linux" && existsSync(SCRIPT);
const HINT = "zcode-acp speaks ACP (JSON-RPC) on stdin/stdout; start it from an editor — see `zcode-acp --help`.";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});
const home = async (): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-first-run-"));
  dirs.push(dir);
  return dir;
};

describe("zcode-acp's first run", () => {
  it("`zcode-acp help` prints the help, as --help does", async () => {
    const [help, flag] = await Promise.all([runCli(["help"]), runCli(["--help"])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("zcode-acp check [options]");
    expect(help.stdout).toBe(flag.stdout);
  });

  it("started by an editor (pipes), it gives no terminal hint", async () => {
    const dir = await home();
    const run = await runCli([], { env: { HOME: dir, ZCODE_ACP_ZCODE_INSTALL: join(dir, "ZCode") } });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).not.toContain("speaks ACP");
  });

  it.runIf(hasPty)("started bare in a terminal, it says what it is on stderr and ends at Ctrl-D", async () => {
    const dir = await home();
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_PATH)}`;
    const child = spawn(SCRIPT, ["-qec", command, "/dev/null"], {
      env: { ...process.env, HOME: dir, ZCODE_ACP_ZCODE_INSTALL: join(dir, "ZCode") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      await until(() => output.includes(HINT), { timeoutMs: 15_000, intervalMs: 50, what: "the terminal hint" });
      child.stdin.write("\x04"); // Ctrl-D: end of input
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
