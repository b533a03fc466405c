/**
 * The local manifest store (docs/runtime-contract.md §6): manifests the user accepted with
 * `zcode-acp onboard --accept`, in `<config dir>/manifests/` (the config dir is a setting resolved
 * by the command line, src/cli/config.ts). Files are private to the user (0600 in a 0700 directory).
 */
import { join } from "node:path";

export const LOCAL_MANIFEST_DIR = "manifests";
export const LOCAL_FILE_MODE = 0o600;
export const LOCAL_DIR_MODE = 0o700;

export function localManifestDir(configDir: string): string {
  return join(configDir, LOCAL_MANIFEST_DIR);
}

/** the file a local manifest of `appVersion` is written to (one per version: accepting again replaces it) */
export function localManifestFile(configDir: string, appVersion: string): string {
  return join(localManifestDir(configDir), `zcode-${appVersion}.local.json`);
}
