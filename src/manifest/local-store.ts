/**
 * The local manifest store (runtime contract §6): manifests the user accepted with
 * `zcode-acp onboard --accept`, in `<config dir>/manifests/` (`ZCODE_ACP_CONFIG_DIR`, else
 * `$XDG_CONFIG_HOME/zcode-acp`, else `~/.config/zcode-acp`). Files are private to the user
 * (0600 in a 0700 directory).
 */
import { homedir } from "node:os";
import { join } from "node:path";

export const LOCAL_MANIFEST_DIR = "manifests";
export const LOCAL_FILE_MODE = 0o600;
export const LOCAL_DIR_MODE = 0o700;

export function configDirFrom(env: NodeJS.ProcessEnv): string {
  if (env.ZCODE_ACP_CONFIG_DIR) return env.ZCODE_ACP_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "zcode-acp");
  return join(env.HOME || homedir(), ".config", "zcode-acp");
}

export function localManifestDir(env: NodeJS.ProcessEnv): string {
  return join(configDirFrom(env), LOCAL_MANIFEST_DIR);
}

/** the file a local manifest of `appVersion` is written to (one per version: accepting again replaces it) */
export function localManifestFile(env: NodeJS.ProcessEnv, appVersion: string): string {
  return join(localManifestDir(env), `zcode-${appVersion}.local.json`);
}
