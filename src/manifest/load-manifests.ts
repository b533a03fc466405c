/**
 * Loading the manifest set: the built-in `manifests/` directory of the package, or one file / one
 * directory given with `--manifest` / `ZCODE_ACP_MANIFEST`, which REPLACES the built-in set.
 * Every file is validated (closed schema + cross-field rules); one bad file fails the whole load.
 * Entries of a directory must be regular files (a symbolic link is refused, not followed), and
 * no error quotes a file's contents.
 */
import { constants, type Stats } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BridgeError, describeError, isBridgeError } from "../util/errors.js";
import type { Manifest } from "./types.js";
import { validateManifest } from "./validate-manifest.js";

export interface LoadedManifest {
  /** absolute path of the file the manifest came from */
  file: string;
  manifest: Manifest;
}

export interface ManifestSet {
  /** "built-in" (the pinned manifests plus the local store) or the absolute --manifest path */
  source: string;
  manifests: LoadedManifest[];
  /** local manifests left out, and why (a local manifest never replaces a pinned release) */
  ignored: Array<{ file: string; reason: string }>;
  /**
   * every path the set was read from: the directories listed (the local store even when it does
   * not exist yet) and every file read, left out or not. A set read again from the same bytes is
   * the same set (the cached `initialize` offer of src/cli/initialize-offer.ts relies on it).
   */
  inputs: string[];
}

const MAX_MANIFEST_BYTES = 1024 * 1024;

/** `<package>/manifests`: src/manifest/ and dist/manifest/ are both two levels below the package root. */
export function builtInManifestDir(): string {
  return fileURLToPath(new URL("../../manifests/", import.meta.url));
}

/** "at line L, column C" from a JSON.parse error, or "" — never the text itself */
function jsonErrorPlace(error: unknown, text: string): string {
  const position = /\bposition (\d+)\b/.exec(error instanceof Error ? error.message : "")?.[1];
  if (position === undefined) return "";
  const before = text.slice(0, Number(position));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return ` at line ${line}, column ${column}`;
}

class NotRegularFile extends Error {}

/** "a FIFO (named pipe)", "a character device", … for the refusal of a non-regular manifest path */
function fileKind(info: Stats): string {
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isSocket()) return "a socket";
  if (info.isDirectory()) return "a directory";
  return "a special file";
}

/**
 * Read and validate one manifest. `noFollow`: the file is an entry of a manifest directory and
 * must not be a symbolic link (it is opened with O_NOFOLLOW, so a link swapped in later fails too).
 */
async function loadFile(file: string, noFollow: boolean): Promise<LoadedManifest> {
  let text: string;
  try {
    // O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused as not a regular file)
    const flags = constants.O_RDONLY | constants.O_NONBLOCK | (noFollow ? constants.O_NOFOLLOW : 0);
    const handle = await open(file, flags);
    try {
      const info = await handle.stat();
      if (!info.isFile())
        throw new NotRegularFile(`it is ${fileKind(info)}, not a regular file; name a manifest file (JSON) or a directory of them`);
      if (info.size > MAX_MANIFEST_BYTES) throw new Error(`larger than ${MAX_MANIFEST_BYTES} bytes`);
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ELOOP"
        ? "it is a symbolic link; put the manifest file itself in the directory"
        : error instanceof NotRegularFile
          ? error.message
          : describeError(error);
    throw new BridgeError("INVALID_MANIFEST", `Cannot read manifest ${file}: ${why}.`, {
      cause: error,
      details: { file, field: "(root)" },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // the parser's message quotes the text: it is never passed on (the file may not be a manifest at all)
    throw new BridgeError("INVALID_MANIFEST", `Invalid manifest ${file}: not valid JSON${jsonErrorPlace(error, text)}.`, {
      details: { file, field: "(root)" },
    });
  }
  return { file, manifest: validateManifest(value, file) };
}

/** the *.json entries of a manifest directory; a symbolic link among them is refused, naming it */
async function jsonFilesOf(dir: string): Promise<string[]> {
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.name.endsWith(".json") && !e.name.startsWith("."));
  for (const entry of entries) {
    if (entry.isSymbolicLink()) {
      const file = join(dir, entry.name);
      throw new BridgeError(
        "INVALID_MANIFEST",
        `Manifest ${file} is a symbolic link; links in a manifest directory are not followed. Put the manifest file itself in ${dir}.`,
        { details: { file, field: "(root)" } },
      );
    }
  }
  return entries
    .map((e) => e.name)
    .sort()
    .map((n) => join(dir, n));
}

/**
 * Loads and validates the manifests. `override` is the --manifest path (file or directory);
 * without it the built-in directory is used. Throws INVALID_MANIFEST (bad or empty set) or
 * USAGE (the override path does not exist).
 */
export async function loadManifests(override?: string, options: { localDir?: string } = {}): Promise<ManifestSet> {
  const source = override === undefined ? "built-in" : resolve(override);
  const target = override === undefined ? builtInManifestDir() : resolve(override);
  let files: string[];
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(target)).isDirectory();
    // a file named directly is the user's choice and may be a link; entries of a directory may not
    files = isDirectory ? await jsonFilesOf(target) : [target];
  } catch (error) {
    if (isBridgeError(error)) throw error;
    if (override !== undefined) {
      throw new BridgeError("USAGE", `--manifest ${target} does not exist or cannot be read (${describeError(error)}).`, {
        cause: error,
      });
    }
    throw new BridgeError("INVALID_MANIFEST", `The built-in manifest directory ${target} cannot be read: reinstall zcode-acp.`, {
      cause: error,
      details: { file: target, field: "(root)" },
    });
  }
  if (files.length === 0) {
    throw new BridgeError("INVALID_MANIFEST", `No manifest (*.json) found in ${target}.`, {
      details: { file: target, field: "(root)" },
    });
  }
  const manifests: LoadedManifest[] = [];
  for (const file of files) manifests.push(await loadFile(file, isDirectory));
  const seen = new Map<string, string>();
  for (const { file, manifest } of manifests) {
    const earlier = seen.get(manifest.artifact.id);
    if (earlier !== undefined) {
      throw new BridgeError(
        "INVALID_MANIFEST",
        `Invalid manifest ${file}: field "artifact.id" repeats "${manifest.artifact.id}" of ${basename(earlier)}. Keep one manifest per release.`,
        { details: { file, field: "artifact.id" } },
      );
    }
    seen.set(manifest.artifact.id, file);
  }
  const inputs = isDirectory ? [target, ...files] : [target];
  if (override !== undefined || options.localDir === undefined) return { source, manifests, ignored: [], inputs };
  return withLocalManifests(manifests, options.localDir, inputs);
}

/** Pinned manifests plus the user's local ones; pinned wins a version, a local file must say trust "local". */
async function withLocalManifests(pinned: LoadedManifest[], localDir: string, pinnedInputs: string[]): Promise<ManifestSet> {
  let files: string[] = [];
  try {
    if ((await stat(localDir)).isDirectory()) files = await jsonFilesOf(localDir);
  } catch (error) {
    // no store yet is the normal case; a link inside it (or an unreadable store) is not
    if (isBridgeError(error) || (error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw isBridgeError(error)
        ? error
        : new BridgeError("INVALID_MANIFEST", `The local manifest store ${localDir} cannot be read (${describeError(error)}).`, {
            cause: error,
            details: { file: localDir, field: "(root)" },
          });
    }
  }
  const ignored: ManifestSet["ignored"] = [];
  const manifests = [...pinned];
  const pinnedVersions = new Set(pinned.map((m) => m.manifest.artifact.appVersion));
  for (const file of files) {
    const loaded = await loadFile(file, true);
    if (loaded.manifest.trust !== "local") {
      throw new BridgeError(
        "INVALID_MANIFEST",
        `Invalid manifest ${file}: field "trust" must be "local" in the local manifest store. ` +
          `Remove the file, or accept the release again with "zcode-acp onboard --accept".`,
        {
          details: { file, field: "trust" },
        },
      );
    }
    if (pinnedVersions.has(loaded.manifest.artifact.appVersion)) {
      ignored.push({
        file,
        reason: `ZCode ${loaded.manifest.artifact.appVersion} is pinned by this zcode-acp; the pinned manifest is used`,
      });
      continue;
    }
    manifests.push(loaded);
  }
  return { source: "built-in", manifests, ignored, inputs: [...pinnedInputs, localDir, ...files] };
}
