/**
 * Writing an accepted candidate to the local manifest store (docs/runtime-contract.md §6): the directory
 * is created private (0700), the file is written private (0600) through a temporary file and a
 * rename, so a reader never sees half a manifest.
 */
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Manifest } from "../manifest/types.js";
import { LOCAL_DIR_MODE, LOCAL_FILE_MODE, localManifestFile } from "../manifest/local-store.js";
import { BridgeError, describeError } from "../util/errors.js";

/** Write `manifest` to the local store of `configDir`; returns the file. */
export async function writeLocalManifest(manifest: Manifest, configDir: string): Promise<string> {
  const file = localManifestFile(configDir, manifest.artifact.appVersion);
  const dir = dirname(file);
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dir, { recursive: true, mode: LOCAL_DIR_MODE });
    await chmod(dir, LOCAL_DIR_MODE);
    await writeFile(temporary, `${JSON.stringify(manifest, null, 2)}\n`, { mode: LOCAL_FILE_MODE, flag: "wx" });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw new BridgeError(
      "USAGE",
      `Cannot write the local manifest to ${file}: ${describeError(error)}. ` +
        `Make the directory writable (or set ZCODE_ACP_CONFIG_DIR), then run \`zcode-acp onboard --accept\` again.`,
      {
        cause: error,
        details: { file },
      },
    );
  }
  return file;
}
