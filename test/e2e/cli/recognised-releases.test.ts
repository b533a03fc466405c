/**
 * Recognised 3.14 releases and honest pinning through the built CLI (docs/runtime-contract.md §7,
 * adr/0020): a simulated 3.14.4 whose host entry matches a first-use manifest (the simulator writes
 * it for its own bytes) passes `check` with no `onboard`, runs a session, and has its RPC module
 * pinned on first use (0600 in 0700, with the date); a module changed afterwards is refused naming
 * the pin file. The RPC module is found by its exports: a companion chunk that only names the RPC
 * classes changes nothing, two modules whose exports hold the roles are ambiguous. `check` never
 * runs an unpinned CLI, and a FIFO given as --manifest is refused at once.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, SIM_RELEASES, type SimInstall } from "../../../fixtures/sim-install.js";
import type { Assessment } from "../../../src/compat/types.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { CLI_PATH, runCli } from "../../support/cli-process.js";
import { editMember, flipOneByte, sha256, writeManifest } from "../../support/tamper.js";

const installs: SimInstall[] = [];
const clients: AcpTestClient[] = [];
async function make(release: "3.11.2" | "3.12.3" | "3.14.4" | "3.14.5"): Promise<SimInstall> {
  const install = await createSimulatedInstall({ release });
  installs.push(install);
  return install;
}
const cli = (sim: SimInstall, args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(args, { env: { ...sim.env, ZCODE_ACP_CACHE_DIR: join(sim.configDir, "..", "cache"), ...env } });
const pinFile = (sim: SimInstall) => join(sim.configDir, "pins", `${sim.manifest.artifact.id}.rpc-module.json`);
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(() => {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await Promise.all(installs.map((i) => i.cleanup()));
});

describe("a recognised 3.14.4 (host entry pinned, RPC module pinned on first use)", () => {
  it("check passes with no onboard and says what is pinned how; a session pins the RPC module; a later change is refused naming the pin file", async () => {
    const sim = await make("3.14.4");
    expect(sim.manifest.artifact.rpcModule).toEqual({ pin: "first-use" });
    const flavour = SIM_RELEASES["3.14.4"];

    const before = await cli(sim, ["check"]);
    expect(before.code).toBe(0);
    expect(before.stdout).toContain("ZCode install check: supported");
    expect(before.stdout).toContain("host entry (out/host/index.js): pinned by the given manifest");
    expect(before.stdout).toContain(`RPC module (${flavour.rpcModule}): will be pinned on first use`);
    expect(before.stdout).toContain("executable: not pinned");
    expect(before.stdout).toContain("agent CLI (glm/zcode.cjs): not pinned");
    expect(existsSync(pinFile(sim))).toBe(false); // check only reports; the bridge's use pins

    const client = await AcpTestClient.start({ env: { ...sim.env } });
    clients.push(client);
    await client.initialize();
    const workspace = await mkdtemp(join(dirname(sim.root), "ws-"));
    const { sessionId } = await client.newSession(workspace);
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    client.expectValid();
    await client.close();

    const file = pinFile(sim);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(file))).mode & 0o777).toBe(0o700);
    const pin = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    expect(pin).toMatchObject({
      kind: "rpc-module-first-use",
      manifest: sim.manifest.artifact.id,
      appVersion: "3.14.4",
      hostIndex: { path: "out/host/index.js", sha256: sim.manifest.artifact.hostIndex.sha256 },
      rpcModule: { path: flavour.rpcModule, sha256: sim.rpcModuleSha256 },
    });
    expect(String(pin.pinnedAt).slice(0, 10)).toBe(today());

    const after = await cli(sim, ["check", "--json"]);
    expect(after.code).toBe(0);
    const report = JSON.parse(after.stdout) as Assessment;
    expect(report.pinning).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ what: "host entry", how: "pinned by the given manifest" }),
        expect.objectContaining({ what: "RPC module", path: flavour.rpcModule, how: "pinned on first use", on: today(), record: file }),
        expect.objectContaining({ what: "executable", how: "not pinned" }),
      ]),
    );
    expect(report.rpc).toMatchObject({ path: flavour.rpcModule, sha256: sim.rpcModuleSha256, foundBy: "pinned path" });

    // replaced afterwards: refused by check and by the bridge, naming the pin file (as SSH does with a host key)
    await editMember(sim, flavour.rpcModule, flipOneByte);
    const refused = await cli(sim, ["check"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`changed since it was pinned on first use on ${today()}`);
    expect(refused.stdout).toContain(file);
    const bridge = await AcpTestClient.start({ env: { ...sim.env } });
    clients.push(bridge);
    await bridge.initialize();
    await expect(bridge.newSession(workspace)).rejects.toMatchObject({
      data: { code: "UNSUPPORTED_ZCODE" },
      message: expect.stringContaining(file),
    });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual(pin); // the pin stays as it was
  });

  it("two modules whose exports both hold the RPC roles are refused as ambiguous (nothing is pinned)", async () => {
    const sim = await make("3.14.4");
    const flavour = SIM_RELEASES["3.14.4"];
    const twin = "out/host/chunk-TWIN0001.js";
    await writeFile(join(sim.appArchive, twin), await readFile(join(sim.appArchive, flavour.rpcModule), "utf8"));
    const m = structuredClone(sim.manifest);
    m.artifact.hostIndex.sha256 = await editMember(sim, "out/host/index.js", (t) => `import "./chunk-TWIN0001.js";\n${t}`);
    await writeManifest(dirname(sim.manifestPath), "manifest.json", m);
    const run = await cli(sim, ["check"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /The RPC module is ambiguous: the exports of out\/host\/chunk-(LL2TIAQ2|TWIN0001)\.js and .* all hold the RPC roles/,
    );
    expect(existsSync(pinFile(sim))).toBe(false);
  });
});

describe("the RPC module is found by its exports, not by names in a chunk's text", () => {
  it("the pinned 3.12.3 with its companion chunk (names both classes, holds no role) is supported, with no search", async () => {
    const sim = await make("3.12.3");
    const companion = await readFile(join(sim.appArchive, SIM_RELEASES["3.12.3"].companion!.path), "utf8");
    expect(companion).toContain("MessagePortProtocol");
    expect(companion).toContain("ChannelClient");
    expect(await readFile(join(sim.appArchive, "out/host/index.js"), "utf8")).toContain("./chunk-3CQYXRMM.js");
    const run = await cli(sim, ["check", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Assessment;
    expect(report.rpc).toMatchObject({ path: SIM_RELEASES["3.12.3"].rpcModule, foundBy: "pinned path" });
    expect(report.pinning).toEqual(
      expect.arrayContaining([expect.objectContaining({ what: "RPC module", how: "pinned by the given manifest" })]),
    );
  });

  it("onboard on 3.14.5 (a companion chunk names both classes) finds the one module whose exports hold the roles", async () => {
    const sim = await make("3.14.5");
    expect(await readFile(join(sim.appArchive, SIM_RELEASES["3.14.5"].companion!.path), "utf8")).toContain("ChannelClient");
    const run = await cli(sim, ["onboard", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ outcome: "candidate", rpcModule: { path: SIM_RELEASES["3.14.5"].rpcModule } });
  });
});

describe("check runs no install code of an unpinned CLI", () => {
  it.each([
    ["its SHA-256 is pinned: the version is the manifest's", true],
    ["its SHA-256 is not pinned: the version its file declares", false],
  ])("a CLI that would write a marker when run is never run (%s)", async (_what, pinCli) => {
    const sim = await make("3.11.2");
    const marker = join(dirname(sim.root), "cli-was-run");
    const script = [
      '"use strict";',
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "run");`,
      'const version = "0.16.5";',
      "process.stdout.write(`zcode ${version}\\n`);",
      "",
    ].join("\n");
    await writeFile(join(sim.resourcesDir, "glm", "zcode.cjs"), script);
    if (pinCli)
      await writeManifest(dirname(sim.manifestPath), "manifest.json", {
        ...sim.manifest,
        artifact: { ...sim.manifest.artifact, cliSha256: sha256(script) },
      });
    const run = await cli(sim, ["check", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as Assessment;
    expect(report).toMatchObject({
      cliVersion: "0.16.5",
      cliVersionFrom: pinCli ? "pinned CLI SHA-256" : "CLI file text",
      cliIntegrity: pinCli ? "verified" : "modified",
    });
    expect(existsSync(marker)).toBe(false);
    // the warm-up after initialize assesses the same way: still never run
    const client = await AcpTestClient.start({ env: { ...sim.env } });
    clients.push(client);
    await client.initialize();
    const workspace = await mkdtemp(join(dirname(sim.root), "ws-"));
    await client.newSession(workspace);
    expect(existsSync(marker)).toBe(false);
  });
});

describe("--manifest naming a non-regular file", () => {
  it("a FIFO is refused at once (exit 2), as the path of --manifest and inside a manifest directory", async () => {
    const sim = await make("3.11.2");
    const dir = await mkdtemp(join(dirname(sim.root), "fifo-"));
    const fifo = join(dir, "manifest.json");
    execFileSync("mkfifo", [fifo]);
    const started = Date.now();
    const direct = await cli(sim, ["check", "--manifest", fifo]);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain(`Cannot read manifest ${fifo}: it is a FIFO (named pipe), not a regular file`);
    const inDir = await cli(sim, ["check", "--manifest", dir]);
    expect(inDir.code).toBe(2);
    expect(inDir.stderr).toContain("a FIFO (named pipe), not a regular file");
    const device = await cli(sim, ["check", "--manifest", "/dev/null"]);
    expect(device.code).toBe(2);
    expect(device.stderr).toContain("a character device, not a regular file");
    expect(Date.now() - started).toBeLessThan(20_000);
    await rm(dir, { recursive: true, force: true });
  });
});
