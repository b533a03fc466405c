/**
 * A minimal hand-made install for unit tests of the check (not the simulated install of
 * fixtures/, which the end-to-end tests use): the fixed layout of docs/runtime-contract.md §1 with a tiny RPC
 * module, a CLI that prints its version, and a manifest pinning the files' hashes.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPackage } from "@electron/asar";
import type { Manifest } from "../../src/compat/types.js";
import { pinnedManifest } from "./verified-releases.js";
import { sha256 } from "./tamper.js";

export interface HandInstall {
  dir: string;
  root: string;
  resources: string;
  archive: string;
  manifestPath: string;
  manifest: Manifest;
  cacheFile: string;
  cleanup(): Promise<void>;
}

export const RPC_MODULE = `export class g { constructor(port) { this.port = port; } }
export class i { constructor(protocol) { this.protocol = protocol; } getChannel(name) { return name; } }
export const j = { toService(channel) { return { channel }; } };
export const extra = 1;
`;
export const HOST_INDEX = `export const host = "simulated";\n`;
export const CLI = `console.log("zcode agent CLI v0.16.5 (hand-made)");\n`;

export async function builtInManifest(): Promise<Manifest> {
  return pinnedManifest("3.11.2").manifest;
}

export async function createHandInstall(options: { packed?: boolean; rpcModule?: string; appVersion?: string } = {}): Promise<HandInstall> {
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-check-"));
  const root = join(dir, "ZCode");
  const resources = join(root, "resources");
  const appDir = join(options.packed ? dir : resources, options.packed ? "app-src" : "app.asar");
  await mkdir(join(appDir, "out", "host"), { recursive: true });
  await mkdir(join(resources, "glm"), { recursive: true });
  await writeFile(join(appDir, "package.json"), JSON.stringify({ name: "zcode", version: options.appVersion ?? "3.11.2", type: "module" }));
  await writeFile(join(appDir, "out", "host", "index.js"), HOST_INDEX);
  const rpc = options.rpcModule ?? RPC_MODULE;
  await writeFile(join(appDir, "out", "host", "chunk-KGXW6KHC.js"), rpc);
  if (options.packed) await createPackage(appDir, join(resources, "app.asar"));
  await writeFile(join(resources, "glm", "zcode.cjs"), CLI);
  const platform = `${process.platform}-${process.arch}`;
  await writeFile(
    join(resources, "glm", ".node-bundle-meta.json"),
    JSON.stringify({
      runtime: "electron-node",
      entry: "zcode.cjs",
      source: "apps/zcode-cli/packages/cli/dist/zcode.cjs",
      platform,
      builtAt: "x",
    }),
  );
  await writeFile(join(root, "zcode"), `#!/bin/sh\n[ "$ELECTRON_RUN_AS_NODE" = "1" ] || exit 3\nexec "${process.execPath}" "$@"\n`);
  await chmod(join(root, "zcode"), 0o755);
  const manifest = await builtInManifest();
  manifest.artifact.hostIndex.sha256 = sha256(HOST_INDEX);
  manifest.artifact.rpcModule.sha256 = sha256(rpc);
  manifest.artifact.cliSha256 = sha256(CLI);
  const manifestPath = join(dir, "manifest.json");
  await writeFile(manifestPath, JSON.stringify(manifest, null, 2));
  return {
    dir,
    root,
    resources,
    archive: join(resources, "app.asar"),
    manifestPath,
    manifest,
    cacheFile: join(dir, "cache", "fingerprints.json"),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
