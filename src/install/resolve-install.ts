/**
 * Layout step (docs/runtime-contract.md §1, §3 step 1): the root exists, every fixed path of the layout exists
 * inside the real path of the root, is readable, and the Electron executable is executable.
 * The host index and RPC module paths come from the selected manifest and are located later
 * through the returned AppArchive, under the same confinement.
 */
import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import type { InstallPaths } from "./types.js";
import { openAppArchive, type AppArchive, type MemberLocation } from "./app-archive.js";
import { confinedEntry } from "./confine.js";
import { errnoOf, installProblem } from "./install-problem.js";
import { LAYOUTS, RESOURCE_PATHS, joinLayout, type InstallPlatform, type PlatformLayout } from "./layout.js";

export interface ResolvedInstall {
  platform: InstallPlatform;
  /** the root as given (or defaulted) */
  root: string;
  rootReal: string;
  executable: string;
  resourcesDir: string;
  archive: AppArchive;
  cli: string;
  bundleMeta: string;
  /** darwin only */
  infoPlist?: string;
  /** the builtin provider config, resolved for the release lines that need it */
  builtinProviderConfig?: string;
}

export async function resolveInstall(platform: InstallPlatform, root: string): Promise<ResolvedInstall> {
  let rootReal: string;
  try {
    rootReal = await realpath(root);
    if (!(await stat(rootReal)).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch (error) {
    const code = errnoOf(error);
    const actual = code === "ENOENT" ? "missing" : code === "ENOTDIR" ? "not a directory" : `unreadable (${code ?? "error"})`;
    throw installProblem(
      `No ZCode install found at ${root} (${actual}). Install ZCode there, or point zcode-acp at it with --zcode-install DIR (or ZCODE_ACP_ZCODE_INSTALL).`,
      { root: { expected: "the ZCode install directory", actual: `${root}: ${actual}` } },
      error,
    );
  }
  const layout = LAYOUTS[platform];
  const at = (relative: string) => joinLayout(rootReal, relative);
  await refuseNonInstall(root, rootReal, layout);
  const executable = (await confinedEntry(rootReal, at(layout.executable), layout.executable, "executable")).real;
  const resourcesDir = (await confinedEntry(rootReal, at(layout.resources), layout.resources, "directory")).real;
  const inResources = (relative: string) => joinLayout(resourcesDir, relative);
  const archiveEntry = await confinedEntry(
    rootReal,
    inResources(RESOURCE_PATHS.appArchive),
    RESOURCE_PATHS.appArchive,
    "file-or-directory",
  );
  const archive = await openAppArchive(rootReal, archiveEntry.real, archiveEntry.isDirectory);
  // linux and win32 read the app version from the archive's package.json
  if (platform !== "darwin") await archive.locate(RESOURCE_PATHS.appPackageJson);
  const cli = (await confinedEntry(rootReal, inResources(RESOURCE_PATHS.cli), RESOURCE_PATHS.cli, "file")).real;
  const bundleMeta = (await confinedEntry(rootReal, inResources(RESOURCE_PATHS.bundleMeta), RESOURCE_PATHS.bundleMeta, "file")).real;
  const resolved: ResolvedInstall = { platform, root, rootReal, executable, resourcesDir, archive, cli, bundleMeta };
  if (layout.infoPlist !== undefined) {
    resolved.infoPlist = (await confinedEntry(rootReal, at(layout.infoPlist), layout.infoPlist, "file")).real;
  }
  return resolved;
}

export function installPaths(install: ResolvedInstall, hostIndex: MemberLocation, rpcModule: MemberLocation): InstallPaths {
  const paths: InstallPaths = {
    root: install.rootReal,
    platform: install.platform,
    executable: install.executable,
    resourcesDir: install.resourcesDir,
    appArchive: install.archive.path,
    appArchiveIsDirectory: install.archive.kind === "directory",
    hostIndex: hostIndex.importPath,
    rpcModule: rpcModule.importPath,
    cli: install.cli,
    bundleMeta: install.bundleMeta,
  };
  if (install.infoPlist !== undefined) paths.infoPlist = install.infoPlist;
  if (install.builtinProviderConfig !== undefined) paths.builtinProviderConfig = install.builtinProviderConfig;
  return paths;
}

/** how many entries of a wrong root are looked at for an install inside it */
const MAX_SUGGESTION_ENTRIES = 200;

const isDirectory = (path: string): Promise<boolean> =>
  stat(path).then(
    (st) => st.isDirectory(),
    () => false,
  );

/**
 * A directory without the layout's resources directory is not a damaged install but the wrong
 * path (often the directory that holds the install): say what an install looks like, and name an
 * install directly inside it, if there is one (at most MAX_SUGGESTION_ENTRIES entries are looked at).
 */
async function refuseNonInstall(root: string, rootReal: string, layout: PlatformLayout): Promise<void> {
  if (await isDirectory(joinLayout(rootReal, layout.resources))) return;
  const looksLike = `a ZCode install holds ${layout.executable} and ${layout.resources}/${RESOURCE_PATHS.appArchive}`;
  let suggestion: string | undefined;
  try {
    const entries = (await readdir(rootReal, { withFileTypes: true })).slice(0, MAX_SUGGESTION_ENTRIES);
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (await isDirectory(joinLayout(join(rootReal, entry.name), layout.resources))) {
        suggestion = join(root, entry.name);
        break;
      }
    }
  } catch {
    // unreadable: no suggestion
  }
  throw installProblem(
    `${root} does not look like a ZCode install (no ${layout.resources}/ directory): ${looksLike}.` +
      (suggestion ? ` Did you mean ${suggestion}?` : " Point --zcode-install (or ZCODE_ACP_ZCODE_INSTALL) at the ZCode install directory."),
    { root: { expected: looksLike, actual: `${root}: no ${layout.resources}/` } },
  );
}
