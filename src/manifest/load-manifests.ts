/**
 * Loading the manifest set: the built-in `manifests/` directory of the package, or one file / one
 * directory given with `--manifest` / `ZCODE_ACP_MANIFEST`, which REPLACES the built-in set.
 * Every file is validated (closed schema + cross-field rules); one bad file fails the whole load.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BridgeError, describeError } from "../util/errors.js";
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
}

const MAX_MANIFEST_BYTES = 1024 * 1024;

/** `<package>/manifests`: src/manifest/ and dist/manifest/ are both two levels below the package root. */
export function builtInManifestDir(): string {
  return fileURLToPath(new URL("../../manifests/", import.meta.url));
}

async function loadFile(file: string): Promise<LoadedManifest> {
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new Error("not a regular file");
    if (info.size > MAX_MANIFEST_BYTES) throw new Error(`larger than ${MAX_MANIFEST_BYTES} bytes`);
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new BridgeError("INVALID_MANIFEST", `Cannot read manifest ${file}: ${describeError(error)}.`, {
      cause: error,
      details: { file, field: "(root)" },
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new BridgeError("INVALID_MANIFEST", `Invalid manifest ${file}: not valid JSON (${describeError(error)}).`, {
      cause: error,
      details: { file, field: "(root)" },
    });
  }
  return { file, manifest: validateManifest(value, file) };
}

async function jsonFilesOf(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(".json") && !n.startsWith("."));
  return names.sort().map((n) => join(dir, n));
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
  try {
    const info = await stat(target);
    files = info.isDirectory() ? await jsonFilesOf(target) : [target];
  } catch (error) {
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
  for (const file of files) manifests.push(await loadFile(file));
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
  if (override !== undefined || options.localDir === undefined) return { source, manifests, ignored: [] };
  return withLocalManifests(manifests, options.localDir);
}

/** Pinned manifests plus the user's local ones; pinned wins a version, a local file must say trust "local". */
async function withLocalManifests(pinned: LoadedManifest[], localDir: string): Promise<ManifestSet> {
  let files: string[];
  try {
    files = (await stat(localDir)).isDirectory() ? await jsonFilesOf(localDir) : [];
  } catch {
    files = [];
  }
  const ignored: ManifestSet["ignored"] = [];
  const manifests = [...pinned];
  const pinnedVersions = new Set(pinned.map((m) => m.manifest.artifact.appVersion));
  for (const file of files) {
    const loaded = await loadFile(file);
    if (loaded.manifest.trust !== "local") {
      throw new BridgeError("INVALID_MANIFEST", `Invalid manifest ${file}: field "trust" must be "local" in the local manifest store. Remove the file, or accept the release again with "zcode-acp onboard --accept".`, {
        details: { file, field: "trust" },
      });
    }
    if (pinnedVersions.has(loaded.manifest.artifact.appVersion)) {
      ignored.push({ file, reason: `ZCode ${loaded.manifest.artifact.appVersion} is pinned by this zcode-acp; the pinned manifest is used` });
      continue;
    }
    manifests.push(loaded);
  }
  return { source: "built-in", manifests, ignored };
}
