/**
 * A --manifest directory through the built CLI (src/manifest/load-manifests.ts): a symlinked
 * file in it is refused, naming the file, without following the link; a file that is not JSON
 * is refused without quoting any of its bytes, on stdout or stderr, in `check` and in ACP mode.
 */
import { copyFile, mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { runCli, type CliRun } from "../../support/cli-process.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";

const SECRET = "TOPSECRET-4f1c9a:root:x:0:0";

let sim: SimInstall;
let outside: string;
beforeAll(async () => {
  sim = await createSimulatedInstall();
  outside = join(dirname(sim.root), "outside-secret.txt");
  await writeFile(outside, `${SECRET}\nmore secret lines\n`);
});
afterAll(async () => {
  await sim?.cleanup();
});

/** a --manifest directory: the simulated install's valid manifest plus `extra` */
async function manifestDir(extra: (dir: string) => Promise<void>): Promise<string> {
  const dir = await mkdtemp(join(dirname(sim.root), "manifests-"));
  await copyFile(sim.env.ZCODE_ACP_MANIFEST!, join(dir, "a-sim.json"));
  await extra(dir);
  return dir;
}

async function check(dir: string): Promise<CliRun> {
  const env = { ...sim.env, ZCODE_ACP_MANIFEST: dir };
  for (const json of [false, true]) {
    const result = await runCli(["check", ...(json ? ["--json"] : [])], { env });
    if (json || result.code === 0) return result;
    // the text form must not leak either
    expect(`${result.stdout}${result.stderr}`).not.toContain("TOPSECRET");
  }
  throw new Error("unreachable");
}

async function acpError(dir: string): Promise<{ error: any; stderr: string; stdout: string }> {
  const client = RawAcpClient.start({ env: { ...sim.env, ZCODE_ACP_MANIFEST: dir } });
  await client.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const ws = await mkdtemp(join(dirname(sim.root), "ws-"));
  const response = await client.request("session/new", { cwd: ws, mcpServers: [] });
  await client.close();
  const stdout = client.transcript.lines
    .filter((l) => l.from === "agent")
    .map((l) => l.raw)
    .join("\n");
  return { error: response.error, stderr: client.stderr, stdout };
}

describe("--manifest directory hardening", () => {
  it("refuses a symlinked file in the directory, naming it, without reading what it points to", async () => {
    const dir = await manifestDir((d) => symlink(outside, join(d, "b-link.json")));
    const result = await check(dir);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain(join(dir, "b-link.json"));
    expect(result.stdout + result.stderr).toMatch(/symbolic link/);
    expect(result.stdout + result.stderr).not.toContain("TOPSECRET");
    const acp = await acpError(dir);
    expect(acp.error.message).toContain("b-link.json");
    expect(acp.stdout + acp.stderr).not.toContain("TOPSECRET");
  });

  it("refuses a file that is not JSON without quoting its bytes", async () => {
    const dir = await manifestDir(async (d) => {
      await writeFile(join(d, "b-broken.json"), `${SECRET}\n`);
    });
    const result = await check(dir);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toMatch(/b-broken\.json.*not valid JSON/);
    expect(result.stdout + result.stderr).not.toContain("TOPSECRET");
    const acp = await acpError(dir);
    expect(acp.error.message).toMatch(/not valid JSON/);
    expect(acp.stdout + acp.stderr).not.toContain("TOPSECRET");
  });

  it("refuses a symlinked directory entry that points to a directory too", async () => {
    const dir = await manifestDir(async (d) => {
      const target = join(dirname(sim.root), "elsewhere");
      await mkdir(target, { recursive: true });
      await symlink(target, join(d, "c-dir.json"));
    });
    const result = await check(dir);
    expect(result.code).toBe(2);
    expect(result.stdout + result.stderr).toContain("c-dir.json");
  });
});
