/**
 * Where ZCode is installed when no root is given (docs/runtime-contract.md §1): the platform's
 * default locations in order, the first that is a directory; none: the first (its absence is then
 * reported by the layout step). macOS: `/Applications/ZCode.app`, then the per-user
 * `~/Applications/ZCode.app` (bundle id `dev.zcode.app`, arm64 and x64 builds); Windows: the
 * per-user install root `%LOCALAPPDATA%\Programs\ZCode` (`ZCode.exe`, arm64 and x64 builds);
 * Linux: `/opt/ZCode` (no Linux package exists after 3.14.4).
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { defaultInstallRoot, type InstallPlatform } from "./layout.js";

/** The default locations of a platform, in the order they are tried (none on win32 without LOCALAPPDATA). */
export function installRootCandidates(platform: InstallPlatform, env: NodeJS.ProcessEnv): string[] {
  const first = defaultInstallRoot(platform, env);
  if (first === undefined) return [];
  if (platform === "darwin" && env.HOME) return [first, join(env.HOME, "Applications", "ZCode.app")];
  return [first];
}

/** The first default location that is a directory, else the first default location; undefined when none is known. */
export async function discoverInstallRoot(platform: InstallPlatform, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const candidates = installRootCandidates(platform, env);
  for (const candidate of candidates) {
    const found = await stat(candidate).then(
      (info) => info.isDirectory(),
      () => false,
    );
    if (found) return candidate;
  }
  return candidates[0];
}
