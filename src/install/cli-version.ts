/**
 * The agent CLI version, read without running the CLI (docs/runtime-contract.md §3 step 4, adr/0020):
 * the one version the CLI's own file declares (`version = "x.y.z"`, `version: "x.y.z"`). The
 * assessment takes a pinned CLI's version from its manifest instead and reads this only for a CLI
 * whose SHA-256 no manifest pins. `check`, `onboard` and the warm-up never run the CLI.
 */
import { open } from "node:fs/promises";

/** a version the file declares: `version = "0.16.9"`, `version: "0.16.9"`, `"version":"0.16.9"`, `VERSION='0.16.9'` */
const DECLARED_VERSION = /(?<![A-Za-z0-9_$])["']?version["']?\s*[:=]\s*["'](\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)["']/gi;

/** The one version the text declares; undefined when it declares none, or several different ones (a bundle of dependencies). */
export function declaredVersion(text: string): string | undefined {
  const found = new Set([...text.matchAll(DECLARED_VERSION)].map((m) => m[1]!));
  return found.size === 1 ? [...found][0] : undefined;
}

/** bound of the CLI file read for its version (the real zcode.cjs is about 15 MB) */
export const MAX_CLI_BYTES = 64 * 1024 * 1024;

/** The CLI version declared in its file, read as text (never run); undefined when not exactly one is declared or the file is too large. */
export async function readCliVersionFromFile(file: string, maxBytes = MAX_CLI_BYTES): Promise<string | undefined> {
  const handle = await open(file, "r");
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return undefined;
    return declaredVersion(await handle.readFile("utf8"));
  } finally {
    await handle.close();
  }
}
