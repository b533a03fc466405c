/**
 * Layout needs of a release line (docs/runtime-contract.md §4.1): a zcode-task-v2 install must have its
 * builtin provider config inside the root. Checked in the layout step for the lines the install's
 * app version can select (the version is read leniently here; step 4 reports it properly).
 */
import { readAppVersionFromArchive, readAppVersionFromPlist, type AppVersion } from "../install/app-version.js";
import { confinedEntry } from "../install/confine.js";
import { joinLayout } from "../install/layout.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import type { LoadedManifest } from "../manifest/load-manifests.js";
import { BUILTIN_PROVIDER_CONFIG, findLine } from "../manifest/release-lines.js";

async function appVersionOf(install: ResolvedInstall): Promise<AppVersion | undefined> {
  try {
    return install.infoPlist !== undefined
      ? await readAppVersionFromPlist(install.infoPlist, "Contents/Info.plist")
      : await readAppVersionFromArchive(install.archive);
  } catch {
    return undefined;
  }
}

/**
 * Resolves the line-specific files into `install` (confined to the root). Throws an install
 * problem when a line the app version selects needs a file that is missing or escapes the root.
 * Returns the app version it read (undefined when unreadable: the version step reports that).
 */
export async function resolveLineLayout(install: ResolvedInstall, manifests: readonly LoadedManifest[]): Promise<AppVersion | undefined> {
  const app = await appVersionOf(install);
  const lines = manifests.filter((m) => m.manifest.artifact.appVersion === app?.version).map((m) => findLine(m.manifest.protocol.id));
  const path = joinLayout(install.resourcesDir, BUILTIN_PROVIDER_CONFIG);
  if (lines.some((line) => line?.needsBuiltinProviderConfig)) {
    install.builtinProviderConfig = (await confinedEntry(install.rootReal, path, BUILTIN_PROVIDER_CONFIG, "file")).real;
  }
  return app;
}
