/**
 * Test helpers for host tests: a simulated install and a supported Assessment built by hand
 * from it (the check engineer's assessInstall is not used here: these tests are about the
 * launcher and the channel, not about the compatibility check).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Assessment } from "../../../../src/compat/types.js";
import { createSimulatedInstall, type SimInstall, type SimInstallOptions } from "../../../../fixtures/sim-install.js";

export type TestInstall = SimInstall;

/** A fresh simulated install (linux layout, app.asar as a directory; the release of ZCODE_ACP_SIM_RELEASE unless given). */
export function createTestInstall(options: SimInstallOptions = {}): Promise<TestInstall> {
  return createSimulatedInstall(options);
}

/** A supported Assessment for `install`, as the compatibility check would produce it. */
export function supportedAssessment(
  install: Pick<
    TestInstall,
    "root" | "executable" | "resourcesDir" | "appArchive" | "manifest" | "flavour" | "builtinProviderConfigPath" | "rpcModuleSha256"
  >,
): Assessment {
  const { manifest } = install;
  return {
    supported: true,
    message: `ZCode ${manifest.artifact.appVersion} (simulated) is supported.`,
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
      rpcModule: join(install.appArchive, install.flavour.rpcModule),
      cli: join(install.resourcesDir, "glm", "zcode.cjs"),
      bundleMeta: join(install.resourcesDir, "glm", ".node-bundle-meta.json"),
      ...(install.builtinProviderConfigPath ? { builtinProviderConfig: install.builtinProviderConfigPath } : {}),
    },
    rpc: { path: install.flavour.rpcModule, sha256: install.rpcModuleSha256, exports: install.flavour.exports, foundBy: "pinned path" },
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
  // the host may be writing right now: a last line without its newline is not complete yet
  const lines = text.split("\n");
  lines.pop();
  return lines.filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as CallLogEntry);
}
