/**
 * `zcode-acp onboard` through the built CLI against a simulated ZCode 3.14.5 (a zcode-task-v2
 * build no pinned manifest covers): check refuses and points to onboard; onboard reports the
 * candidate and writes nothing; --accept writes it privately; check then verifies the install by
 * the local manifest and a whole ACP session works; a host file changed afterwards is refused again.
 */
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, SIM_RELEASES, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { runCli } from "../../support/cli-process.js";
import { nearestPinnedOfLine } from "../../support/verified-releases.js";
import { V4_INPUT_METHODS } from "../../../src/manifest/release-lines.js";

let sim: SimInstall;
const clients: AcpTestClient[] = [];

/** the CLI against this file's simulated install */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { env: { ...sim.env, ...env } });

/** edit a member of the (directory) app archive */
async function edit(o: SimInstall, member: string, change: (text: string) => string): Promise<void> {
  const file = join(o.appArchive, ...member.split("/"));
  await writeFile(file, change(await readFile(file, "utf8")));
}

async function patchMeta(o: SimInstall, fields: Record<string, string>): Promise<void> {
  const file = join(o.resourcesDir, "glm", ".node-bundle-meta.json");
  await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, "utf8")), ...fields }));
}

const storeDir = () => join(sim.env.ZCODE_ACP_CONFIG_DIR!, "manifests");
const storeFiles = async (): Promise<string[]> => readdir(storeDir()).catch(() => []);

beforeAll(async () => {
  sim = await createSimulatedInstall({ release: "3.14.5" });
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await sim.cleanup();
});

describe("onboarding a build no pinned manifest covers (simulated ZCode 3.14.5)", () => {
  it("check refuses it and names `zcode-acp onboard`", async () => {
    expect(sim.env.ZCODE_ACP_MANIFEST).toBeUndefined();
    const run = await cli(["check"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("ZCode 3.14.5 is not pinned by this zcode-acp");
    expect(run.stdout).toContain("Run `zcode-acp onboard`");
    expect(run.stdout).toContain("zcode-acp may not work with builds it has not verified");
  });

  it("onboard reports the candidate, the line and the differences, and writes nothing", async () => {
    const run = await cli(["onboard"]);
    expect(run.code).toBe(0);
    const flavour = SIM_RELEASES["3.14.5"];
    expect(run.stdout).toContain("ZCode onboarding: candidate found");
    expect(run.stdout).toContain(
      `by shape: ${flavour.rpcModule}, protocol ${flavour.exports.protocol}, client ${flavour.exports.client}, service ${flavour.exports.service}`,
    );
    expect(run.stdout).toMatch(/release line:\s+zcode-task-v2/);
    // the nearest pinned release is 3.14.4, which pins its RPC module on first use and ships the same CLI version
    const nearest = nearestPinnedOfLine("zcode-task-v2", "3.14.5").manifest.artifact;
    expect(nearest.appVersion).toBe("3.14.4");
    expect(nearest.rpcModule.pin).toBe("first-use");
    expect(run.stdout).toContain(`nearest pinned:   3.14.4 (zcode-host-3.14.4)`);
    expect(run.stdout).toContain(`RPC module ${flavour.rpcModule} (3.14.4 pins it on first use)`);
    expect(run.stdout).not.toContain("agent CLI 0.16.5 → 0.16.9");
    expect(run.stdout).toContain("WARNING: zcode-acp has NOT verified this ZCode build");
    expect(run.stdout).toContain("Nothing was written.");
    expect(await storeFiles()).toEqual([]);

    const json = JSON.parse((await cli(["onboard", "--json"])).stdout) as {
      outcome: string;
      accepted: boolean;
      candidate: { trust: string; artifact: { exports: unknown; rpcModule: { path: string } } };
    };
    expect(json).toMatchObject({
      outcome: "candidate",
      accepted: false,
      candidate: { trust: "local", artifact: { exports: flavour.exports, rpcModule: { path: flavour.rpcModule } } },
    });
    expect(await storeFiles()).toEqual([]);
  });

  it("--accept pins it privately; check verifies it as local; a whole session works; a changed host file is refused again", async () => {
    const accepted = await cli(["onboard", "--accept"]);
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain("Accepted: written to");
    const [file] = await storeFiles();
    expect(file).toBe("zcode-3.14.5.local.json");
    const path = join(storeDir(), file!);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(storeDir())).mode & 0o777).toBe(0o700);
    const manifest = JSON.parse(await readFile(path, "utf8")) as { trust: string; acceptedAt: string; acceptedBy: string };
    expect(manifest.trust).toBe("local");
    expect(manifest.acceptedBy).toMatch(/^zcode-acp \d+\.\d+\.\d+/);
    const today = new Date().toISOString().slice(0, 10);
    expect(manifest.acceptedAt.slice(0, 10)).toBe(today);

    const check = await cli(["check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(`verified by a local manifest you accepted on ${today}`);
    expect((await cli(["onboard"])).stdout).toContain("already verified by a local manifest you accepted earlier");

    // a whole ACP session: prompt, tool, permission, plan approval, cancel
    const client = await AcpTestClient.start({
      env: sim.env,
      onPermission: (params) => {
        const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0]!;
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      },
    });
    clients.push(client);
    await client.initialize();
    const workspace = await mkdtemp(join(dirname(sim.root), "ws-"));
    const { sessionId } = await client.newSession(workspace);
    await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(client.prompt(sessionId, "sim:tool-read")).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(client.prompt(sessionId, "sim:permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    await expect(client.prompt(sessionId, "sim:plan-permission")).resolves.toMatchObject({ stopReason: "end_turn" });
    const running = client.prompt(sessionId, "sim:stream-until-cancel");
    await client.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await client.cancel(sessionId);
    await expect(running).resolves.toMatchObject({ stopReason: "cancelled" });
    const calls = (await sim.readCallLog()).filter((e) => e.kind === "call").map((e) => e.method);
    expect(calls).toEqual(
      expect.arrayContaining(["getView", "readWorkspacePresentation", "respondPermission", "sendConversationCommandV4"]),
    );
    expect(calls).not.toContain("readWorkspaceState");
    client.expectValid();
    await client.close();

    // the accepted build's files change: refused like any modified install
    await writeFile(join(sim.appArchive, ...SIM_RELEASES["3.14.5"].rpcModule.split("/")), "\n// changed after acceptance\n", { flag: "a" });
    const after = await cli(["check"]);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/SHA-256 mismatch: out\/host\/chunk-/);
  });

  it("a build whose host bundle lacks a V4 input method is onboarded without V4: the review says so and prompts go through sendPrompt", async () => {
    const other = await createSimulatedInstall({ release: "3.14.5" });
    try {
      // the simulated host no longer names (nor serves) the upload abort
      await edit(other, "out/host/sim-v4.js", (t) => t.replaceAll("attachmentAbortV4", "attachmentCancelV4"));
      const run = await runCli(["onboard", "--accept"], { env: other.env });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        "V4 input left out: the host bundle does not name attachmentAbortV4; prompts go through sendPrompt, without steering or queueing",
      );
      const manifest = JSON.parse(
        await readFile(join(other.env.ZCODE_ACP_CONFIG_DIR!, "manifests", "zcode-3.14.5.local.json"), "utf8"),
      ) as {
        protocol: { allowlist: { agent: string[] } };
      };
      expect(manifest.protocol.allowlist.agent).toContain("sendPrompt");
      // no V4 input (the rows pages the pinned 3.14.4 descriptor allows may stay: read only with ZCODE_ACP_READ_PATH=v4,
      // and a fork needs the V4 commands too)
      expect(manifest.protocol.allowlist.agent.filter((m) => (V4_INPUT_METHODS as readonly string[]).includes(m))).toEqual([]);
      const client = await AcpTestClient.start({ env: other.env });
      clients.push(client);
      await client.initialize();
      const { sessionId } = await client.newSession(await mkdtemp(join(dirname(other.root), "ws-")));
      await expect(client.prompt(sessionId, "hello")).resolves.toMatchObject({ stopReason: "end_turn" });
      const calls = (await other.readCallLog()).filter((e) => e.kind === "call").map((e) => e.method);
      expect(calls).toContain("sendPrompt");
      expect(calls.filter((m) => m?.endsWith("V4"))).toEqual([]);
      client.expectValid();
      await client.close();
    } finally {
      await other.cleanup();
    }
  });
});

describe("onboard refuses bad input, writing nothing", () => {
  it("--zcode-install and --manifest given as flags (no variables) are the ones onboarding uses", async () => {
    const pinned = await createSimulatedInstall({ release: "3.12.3" });
    try {
      const { ZCODE_ACP_ZCODE_INSTALL: root, ZCODE_ACP_MANIFEST: manifest, ...rest } = pinned.env;
      const { stdout, code } = await runCli(["onboard", "--zcode-install", root!, "--manifest", manifest!], {
        env: { ...rest, ZCODE_ACP_ZCODE_INSTALL: undefined, ZCODE_ACP_MANIFEST: undefined },
      });
      expect(code).toBe(0);
      expect(stdout).toMatch(/is already verified by the manifest zcode-host-3\.12\.3-sim \(given with --manifest/);
      expect(await readdir(join(pinned.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => [])).toEqual([]);
    } finally {
      await pinned.cleanup();
    }
  });

  it("an install a pinned (or --manifest) manifest verifies: says so, exit 0", async () => {
    const pinned = await createSimulatedInstall({ release: "3.12.3" });
    try {
      const { stdout, code } = await runCli(["onboard"], { env: pinned.env });
      expect(code).toBe(0);
      expect(stdout).toMatch(/is already verified by the manifest zcode-host-3\.12\.3-sim \(given with --manifest/);
      expect(await readdir(join(pinned.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => [])).toEqual([]);
    } finally {
      await pinned.cleanup();
    }
  });

  it("--accept with a store that cannot be written: exit 1 with the path and the reason", async () => {
    const other = await createSimulatedInstall({ release: "3.14.5" });
    try {
      const config = other.env.ZCODE_ACP_CONFIG_DIR!;
      await mkdir(config, { recursive: true });
      await writeFile(join(config, "manifests"), "a file where the store directory should be");
      const run = await runCli(["onboard", "--accept"], { env: other.env });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`Cannot write the local manifest to ${join(config, "manifests", "zcode-3.14.5.local.json")}`);
      expect(run.stderr).toMatch(/EEXIST|ENOTDIR/);
    } finally {
      await other.cleanup();
    }
  });

  it.each([
    [
      "the RPC module is missing (no import defines both classes)",
      async (o: SimInstall) => edit(o, SIM_RELEASES["3.14.5"].rpcModule, (t) => t.replaceAll("ChannelClient", "ChanClient")),
      /No RPC module found/,
    ],
    [
      "the RPC module is ambiguous (the exports of a second module hold the roles too)",
      async (o: SimInstall) => {
        const rpc = await readFile(join(o.appArchive, ...SIM_RELEASES["3.14.5"].rpcModule.split("/")), "utf8");
        await writeFile(join(o.appArchive, "out", "host", "chunk-TWIN0000.js"), rpc);
        await edit(o, "out/host/index.js", (t) => `import "./chunk-TWIN0000.js";\n${t}`);
      },
      /The RPC module is ambiguous: .*chunk-TWIN0000\.js/,
    ],
    [
      "a path escapes the install root (the agent CLI links outside)",
      async (o: SimInstall) => {
        const cli = join(o.resourcesDir, "glm", "zcode.cjs");
        const outside = join(dirname(o.root), "outside-zcode.cjs");
        await rename(cli, outside);
        await symlink(outside, cli);
      },
      /resolves to .*outside-zcode\.cjs, outside the install root/,
    ],
    ["an unknown layout (no executable)", async (o: SimInstall) => rm(o.executable), /incomplete: zcode is missing/],
    [
      "the bundle metadata is not a ZCode build's",
      async (o: SimInstall) => patchMeta(o, { runtime: "plain-node" }),
      /says runtime "plain-node", but ZCode builds say "electron-node"/,
    ],
    [
      "the bundle is for another platform",
      async (o: SimInstall) => patchMeta(o, { platform: "win32-arm64" }),
      /This ZCode build is for win32-arm64, but this system is/,
    ],
  ])("%s: exit 1 with the reason, nothing written", async (_what, spoil, reason) => {
    const other = await createSimulatedInstall({ release: "3.14.5" });
    try {
      await spoil(other);
      for (const args of [["onboard"], ["onboard", "--accept"]]) {
        const run = await runCli(args, { env: other.env });
        expect(run.code, args.join(" ")).toBe(1);
        expect(run.stdout).toContain("ZCode onboarding: NO candidate");
        expect(run.stdout).toMatch(reason);
      }
      expect(await readdir(join(other.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => [])).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });

  it("usage errors exit 2", async () => {
    expect((await cli(["check", "--accept"])).code).toBe(2);
    expect((await cli(["onboard", "--bogus"])).code).toBe(2);
  });
});
