/**
 * The host does not inherit the editor's Node and Electron preload variables (adr/0021): with
 * NODE_OPTIONS=--require <a script that writes a marker> in the bridge's environment, the bridge
 * itself runs the script (it is Node too: this shows the variable is live), but neither the host
 * process nor the short check runs (the CLI version query) ever do. A provider-config override
 * from the environment is logged with its path.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { runCli } from "../../support/cli-process.js";

interface Mark {
  pid: number;
  electronRunAsNode: string | null;
  argv: string[];
}

let sim: SimInstall;
let dir: string;
beforeAll(async () => {
  sim = await createSimulatedInstall();
  dir = await mkdtemp(join(dirname(sim.root), "preload-"));
});
afterAll(async () => {
  await sim?.cleanup();
});

async function preload(name: string): Promise<{ env: Record<string, string>; marks: () => Promise<Mark[]> }> {
  const marker = join(dir, `${name}.jsonl`);
  const script = join(dir, `${name}.cjs`);
  await writeFile(
    script,
    `require("node:fs").appendFileSync(${JSON.stringify(marker)}, JSON.stringify({ pid: process.pid, ` +
      `electronRunAsNode: process.env.ELECTRON_RUN_AS_NODE ?? null, argv: process.argv.slice(1) }) + "\\n");\n`,
  );
  const marks = async (): Promise<Mark[]> =>
    (await readFile(marker, "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Mark);
  return { env: { NODE_OPTIONS: `--require ${JSON.stringify(script)}`, ELECTRON_ENABLE_LOGGING: "1", NODE_PATH: dir }, marks };
}

describe("the host's environment", () => {
  it("NODE_OPTIONS=--require … reaches the bridge but not the host it launches; the override of the provider config is logged", async () => {
    const { env, marks } = await preload("acp");
    const providerConfig = join(dir, "my-provider-config.json");
    const client = await AcpTestClient.start({
      env: { ...sim.env, ...env, ZCODE_PERSONAL_PROVIDER_CONFIG_FILE: providerConfig, ZCODE_ACP_LOG_LEVEL: "info" },
    });
    await client.initialize();
    const { sessionId } = await client.newSession(await mkdtemp(join(dir, "ws-")));
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
    await client.close();
    const found = await marks();
    expect(found.map((m) => m.pid)).toEqual([client.child.pid]); // the bridge only
    expect(found.every((m) => m.electronRunAsNode === null)).toBe(true);
    // the host did run (the call log of the simulated host), and the log names what was kept away
    expect((await sim.readCallLog()).some((e) => e.kind === "call")).toBe(true);
    expect(client.stderr).toMatch(
      /"msg":"variables of the editor's environment kept from the host","scope":"[^"]*","fields":\{"names":\["ELECTRON_ENABLE_LOGGING","NODE_OPTIONS","NODE_PATH"\]\}/,
    );
    expect(client.stderr).toContain("provider config overridden from the environment");
    expect(client.stderr).toContain(providerConfig);
  });

  it("check's child runs of the executable do not get it either (a cold cache: the CLI version is queried)", async () => {
    const { env, marks } = await preload("check");
    const run = await runCli(["check", "--json"], { env: { ...sim.env, ...env, ZCODE_ACP_CACHE_DIR: join(dir, "cold-cache") } });
    expect(run.code).toBe(0);
    const found = await marks();
    expect(found.length).toBe(1); // the check process itself
    expect(found[0]!.electronRunAsNode).toBeNull();
  });
});
