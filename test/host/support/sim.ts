/**
 * Test helpers for host tests: a simulated install and a supported Assessment built by hand
 * from it (the check engineer's assessInstall is not used here: these tests are about the
 * launcher and the channel, not about the compatibility check).
 */
import { mkdirSync, mkdtempSync, writeFileSync, cpSync, rmSync, readFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Assessment, Manifest } from "../../../src/compat/types.js";

export interface TestInstall {
  root: string;
  executable: string;
  resourcesDir: string;
  appArchive: string;
  manifest: Manifest;
  dataDir: string;
  callLogPath: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

// TEMPORARY hand-made layout until fixtures/sim-install.ts lands (then: createSimulatedInstall)
export async function createTestInstall(): Promise<TestInstall> {
  const root = mkdtempSync(join(tmpdir(), "zcode-acp-host-test-"));
  const resourcesDir = join(root, "resources");
  const appArchive = join(resourcesDir, "app.asar");
  mkdirSync(appArchive, { recursive: true });
  cpSync(join(import.meta.dirname, "../../../fixtures/sim/app/out"), join(appArchive, "out"), { recursive: true });
  writeFileSync(join(appArchive, "package.json"), JSON.stringify({ name: "zcode", version: "3.11.2", type: "module" }));
  const executable = join(root, "zcode");
  writeFileSync(executable, `#!/bin/sh\nif [ "$ELECTRON_RUN_AS_NODE" != "1" ]; then echo "not as node" >&2; exit 9; fi\nexec "${process.execPath}" "$@"\n`);
  chmodSync(executable, 0o755);
  const manifest = JSON.parse(readFileSync(join(import.meta.dirname, "../../../manifests/zcode-3.11.2.json"), "utf8")) as Manifest;
  const dataDir = join(root, "data");
  const home = join(root, "home");
  mkdirSync(dataDir);
  mkdirSync(home);
  const callLogPath = join(root, "calls.jsonl");
  return {
    root,
    executable,
    resourcesDir,
    appArchive,
    manifest,
    dataDir,
    callLogPath,
    env: { ZCODE_DATA_BASE_DIR: dataDir, ZCODE_SIM_CALL_LOG: callLogPath, HOME: home },
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A supported Assessment for `install`, as the compatibility check would produce it. */
export function supportedAssessment(install: Pick<TestInstall, "root" | "executable" | "resourcesDir" | "appArchive" | "manifest">): Assessment {
  const { manifest } = install;
  return {
    supported: true,
    message: "ZCode 3.11.2 (simulated) is supported.",
    steps: [],
    manifest,
    paths: {
      root: install.root,
      platform: "linux",
      executable: install.executable,
      resourcesDir: install.resourcesDir,
      appArchive: install.appArchive,
      appArchiveIsDirectory: true,
      hostIndex: join(install.appArchive, manifest.artifact.hostIndex.path),
      rpcModule: join(install.appArchive, manifest.artifact.rpcModule.path),
      cli: join(install.resourcesDir, "glm", "zcode.cjs"),
      bundleMeta: join(install.resourcesDir, "glm", ".node-bundle-meta.json"),
    },
    appVersion: manifest.artifact.appVersion,
    cliVersion: manifest.artifact.cliVersion,
    cliIntegrity: "verified",
    diagnostics: {},
  };
}

export interface CallLogEntry {
  seq: number;
  kind: string;
  service?: string;
  method?: string;
  params?: Record<string, unknown>;
  type?: string;
  requestId?: string;
  requestKind?: string;
  ok?: boolean;
  [key: string]: unknown;
}

export function readCallLog(path: string): CallLogEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CallLogEntry);
}
