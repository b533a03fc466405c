import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { access, constants, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { extractFile, listPackage } from "@electron/asar";
import plist from "plist";
import { createSimulatedInstall, readCallLog } from "../../fixtures/sim-install.js";
import { pinnedManifest } from "../support/verified-releases.js";
import { onCleanup } from "./support/session-helpers.js";

const run = promisify(execFile);
const sha256 = (data: Buffer | string): string => createHash("sha256").update(data).digest("hex");
const reference = pinnedManifest("3.11.2").manifest;
const WORKER_ENTRY = fileURLToPath(new URL("./support/host-worker.mjs", import.meta.url));
const STANDIN_LAUNCH = fileURLToPath(new URL("./support/standin-launch.mjs", import.meta.url));

async function make(options: Parameters<typeof createSimulatedInstall>[0] = {}) {
  const install = await createSimulatedInstall({ release: "3.11.2", ...options });
  onCleanup(() => install.cleanup());
  return install;
}

describe("simulated install generator, 3.11.2 (docs/runtime-contract.md §1, §2)", () => {
  it("writes the linux layout with a generated manifest whose fingerprints match the files", async () => {
    const install = await make();
    expect(install.platform).toBe("linux");
    expect(install.executable).toBe(join(install.root, "zcode"));
    expect(install.resourcesDir).toBe(join(install.root, "resources"));
    await access(install.executable, constants.X_OK);
    const pkg = JSON.parse(await readFile(join(install.appArchive, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ version: "3.11.2", type: "module" });
    const meta = JSON.parse(await readFile(join(install.resourcesDir, "glm", ".node-bundle-meta.json"), "utf8"));
    expect(meta).toMatchObject({
      runtime: "electron-node",
      entry: "zcode.cjs",
      source: "apps/zcode-cli/packages/cli/dist/zcode.cjs",
      platform: `${process.platform}-${process.arch}`,
    });
    const manifest = JSON.parse(await readFile(install.manifestPath, "utf8"));
    expect(manifest).toEqual(install.manifest);
    expect(manifest.protocol).toEqual(reference.protocol);
    expect(manifest.artifact).toMatchObject({
      appVersion: "3.11.2",
      cliVersion: "0.16.5",
      protocolId: "zcode-task-v1",
      exports: { protocol: "g", client: "i", service: "j" },
      metadata: reference.artifact.metadata,
    });
    expect(manifest.artifact.hostIndex).toEqual({
      path: "out/host/index.js",
      sha256: sha256(await readFile(join(install.appArchive, "out/host/index.js"))),
    });
    expect(manifest.artifact.rpcModule).toEqual({
      path: "out/host/chunk-KGXW6KHC.js",
      sha256: sha256(await readFile(join(install.appArchive, "out/host/chunk-KGXW6KHC.js"))),
    });
    expect(manifest.artifact.cliSha256).toBe(sha256(await readFile(join(install.resourcesDir, "glm", "zcode.cjs"))));
    expect(Object.keys(install.env).sort()).toEqual([
      "HOME",
      "ZCODE_ACP_CONFIG_DIR",
      "ZCODE_ACP_MANIFEST",
      "ZCODE_ACP_ZCODE_INSTALL",
      "ZCODE_DATA_BASE_DIR",
      "ZCODE_SIM_CALL_LOG",
    ]);
    expect(install.env.ZCODE_ACP_ZCODE_INSTALL).toBe(install.root);
    expect(install.env.ZCODE_ACP_CONFIG_DIR).toBe(install.configDir);
    expect(await readdir(install.configDir)).toEqual([]);
    expect({ release: install.release, line: install.line, builtin: install.builtinProviderConfigPath }).toEqual({
      release: "3.11.2",
      line: "zcode-task-v1",
      builtin: undefined,
    });
  });

  it("the Electron stand-in runs node only with ELECTRON_RUN_AS_NODE=1, and zcode.cjs answers version", async () => {
    const install = await make({ cliVersion: "0.16.9" });
    const cli = join(install.resourcesDir, "glm", "zcode.cjs");
    const { stdout } = await run(install.executable, [cli, "version"], { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } });
    expect(stdout.trim()).toBe("zcode 0.16.9");
    const env = { ...process.env };
    delete env.ELECTRON_RUN_AS_NODE;
    await expect(run(install.executable, [cli, "version"], { env })).rejects.toMatchObject({ code: 1 });
    await expect(
      run(install.executable, [cli, "app-server"], { env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } }),
    ).rejects.toMatchObject({ code: 2 });
  });

  it("the installed host runs under the stand-in (worker + parentPort shim + the install's RPC module)", async () => {
    const install = await make();
    const { stdout } = await run(
      install.executable,
      [
        STANDIN_LAUNCH,
        WORKER_ENTRY,
        join(install.appArchive, "out/host/index.js"),
        join(install.appArchive, "out/host/chunk-KGXW6KHC.js"),
        JSON.stringify(install.flavour.exports),
      ],
      { env: { ...process.env, ...install.env, ELECTRON_RUN_AS_NODE: "1" } },
    );
    const line = stdout.split("\n").find((l) => l.startsWith('{"result"'));
    expect(JSON.parse(line ?? "{}")).toEqual({ result: expect.objectContaining({ available: true }), electronRunAsNode: "1" });
    const log = await install.readCallLog();
    expect(log.find((e) => e.kind === "call")).toMatchObject({ service: "zcode-agent", method: "initialize" });
    expect(log.at(-1)).toMatchObject({ kind: "exit", code: 0 });
  });

  it("writes the darwin layout with Info.plist and the helper executable", async () => {
    const install = await make({ platform: "darwin", appVersion: "3.11.2" });
    expect(install.root.endsWith("ZCode.app")).toBe(true);
    expect(install.executable).toBe(join(install.root, "Contents/Frameworks/ZCode Helper.app/Contents/MacOS/ZCode Helper"));
    expect(install.resourcesDir).toBe(join(install.root, "Contents/Resources"));
    await access(install.executable, constants.X_OK);
    const info = plist.parse(await readFile(join(install.root, "Contents/Info.plist"), "utf8")) as Record<string, unknown>;
    expect(info.CFBundleShortVersionString).toBe("3.11.2");
    expect(info.CFBundleVersion).toBe("3.11.2.1105");
    await access(join(install.resourcesDir, "app.asar", "out/host/index.js"));
  });

  it("packs app.asar as a real archive on request, with the same fingerprints and padding", async () => {
    const install = await make({ packed: true, appVersion: "3.10.2", archivePaddingBytes: 4096 });
    expect((await stat(install.appArchive)).isFile()).toBe(true);
    const files = listPackage(install.appArchive, { isPack: false });
    expect(files).toEqual(
      expect.arrayContaining(["/package.json", "/out/host/index.js", "/out/host/chunk-KGXW6KHC.js", "/resources/filler.bin"]),
    );
    expect(sha256(extractFile(install.appArchive, "out/host/index.js"))).toBe(install.manifest.artifact.hostIndex.sha256);
    expect(sha256(extractFile(install.appArchive, "out/host/chunk-KGXW6KHC.js"))).toBe(install.manifest.artifact.rpcModule.sha256);
    expect(JSON.parse(extractFile(install.appArchive, "package.json").toString())).toMatchObject({ version: "3.10.2", type: "module" });
    expect(extractFile(install.appArchive, "resources/filler.bin").length).toBe(4096);
    expect(install.manifest.artifact.appVersion).toBe("3.10.2");
  });

  it("honours parentDir and arch; cleanup removes only what it created there", async () => {
    const parentDir = await mkdtemp(join(tmpdir(), "zcode-sim-parent-"));
    onCleanup(() => rm(parentDir, { recursive: true, force: true }));
    const install = await createSimulatedInstall({ release: "3.11.2", parentDir, arch: "arm64" });
    expect(install.root).toBe(join(parentDir, "ZCode"));
    const meta = JSON.parse(await readFile(join(install.resourcesDir, "glm", ".node-bundle-meta.json"), "utf8"));
    expect(meta.platform).toBe(`${process.platform}-arm64`);
    await install.cleanup();
    expect(await readdir(parentDir)).toEqual([]);
    expect(await readCallLog(join(parentDir, "missing.jsonl"))).toEqual([]);
  });

  it("is fast enough for a fresh install per test (timing reported, not asserted)", async () => {
    const timings: number[] = [];
    for (let k = 0; k < 10; k++) {
      const started = performance.now();
      const install = await createSimulatedInstall({ release: "3.11.2" });
      timings.push(performance.now() - started);
      await install.cleanup();
    }
    const packedStarted = performance.now();
    const packed = await createSimulatedInstall({ release: "3.11.2", packed: true });
    const packedMs = performance.now() - packedStarted;
    await packed.cleanup();
    timings.sort((a, b) => a - b);
    console.log(
      `[generator timing] directory form: median ${timings[5]!.toFixed(1)} ms, max ${timings[9]!.toFixed(1)} ms over 10; packed: ${packedMs.toFixed(1)} ms`,
    );
    expect(timings).toHaveLength(10);
  });

  it("make-install CLI prints root, manifest and env as JSON", async () => {
    const dir = await mkdtemp(join(tmpdir(), "zcode-sim-cli-"));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const script = fileURLToPath(new URL("../../fixtures/scripts/make-install.ts", import.meta.url));
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const { stdout } = await run(tsx, [script, "--dir", dir, "--platform", "darwin"]);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      root: join(dir, "ZCode.app"),
      platform: "darwin",
      manifestPath: join(dir, "manifest.json"),
      env: { ZCODE_ACP_ZCODE_INSTALL: join(dir, "ZCode.app") },
    });
    await access(report.executable, constants.X_OK);
    await expect(run(tsx, [script, "--bogus"])).rejects.toMatchObject({ code: 2 });
  });
});
