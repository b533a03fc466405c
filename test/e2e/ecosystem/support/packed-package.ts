/**
 * The npm package as users get it, installed offline: `npm pack` of the built tree into a
 * temporary directory, then an install of that tarball into a sandbox prefix, the way
 * `npx --prefix <sandbox> --yes <package>` leaves it (the package and its dependencies in
 * `<sandbox>/node_modules`, the bin in `node_modules/.bin`). Used by package.test.ts and
 * registry.test.ts, each packing once for all its tests.
 *
 * Offline from a cache that only `npm ci` filled: npm 11 resolves a tarball's dependencies from
 * full registry documents (packuments), which `npm ci` does not store (it keeps only the abbreviated
 * ones and the tarballs), so `npm install --offline <tgz>` fails ENOTCACHED there. So the sandbox
 * gets a lockfile instead: the tarball (`file:`) plus exactly the production entries of the
 * project's own package-lock.json (same versions, `resolved` and `integrity`, same layout), and
 * `npm ci --offline` installs it from the cached tarballs by their integrity, with no registry
 * document at all. The dependency tree is the one the project is tested with; a real `npx` would
 * resolve the newest versions the ranges allow.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
export const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
export const NPX = process.platform === "win32" ? "npx.cmd" : "npx";

/** bin of a global prefix (npm puts bins in <prefix>/bin on POSIX, <prefix> on Windows) */
export const binOf = (prefix: string): string =>
  process.platform === "win32" ? join(prefix, "zcode-acp.cmd") : join(prefix, "bin", "zcode-acp");

/** npm with its global prefix redirected into `prefix`, quiet */
export const npmEnv = (prefix: string): Record<string, string> => ({
  npm_config_prefix: prefix,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
});

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  bin?: Record<string, string> | string;
  engines?: Record<string, string>;
  [key: string]: unknown;
}

/**
 * The sandbox's package.json and package-lock.json: the tarball at `node_modules/<name>`, and the
 * project lock's production entries (neither `dev` nor `devOptional`) at their own paths.
 */
export function sandboxLock(projectLock: { packages: Record<string, LockEntry> }, tarball: string): { manifest: object; lock: object } {
  const root = projectLock.packages[""]!;
  const name = root.name as string;
  const spec = `file:${tarball}`;
  const packages: Record<string, LockEntry> = {
    "": { name: "zcode-acp-sandbox", dependencies: { [name]: spec } },
    [`node_modules/${name}`]: {
      version: root.version,
      resolved: spec,
      license: root.license,
      dependencies: root.dependencies,
      bin: root.bin,
      engines: root.engines,
    },
  };
  for (const [path, entry] of Object.entries(projectLock.packages)) {
    if (path !== "" && entry.dev !== true && entry.devOptional !== true) packages[path] = entry;
  }
  return {
    manifest: { name: "zcode-acp-sandbox", private: true, dependencies: { [name]: spec } },
    lock: { name: "zcode-acp-sandbox", lockfileVersion: 3, requires: true, packages },
  };
}

export interface PackedPackage {
  /** the temporary directory holding the tarball and the sandbox */
  work: string;
  /** the tarball's file name, as npm names it (`<name>-<version>.tgz`) */
  filename: string;
  /** the paths the tarball holds */
  files: string[];
  /** the sandbox prefix the package is installed into (`npx --prefix <sandbox>`) */
  sandbox: string;
  /** the installed `zcode-acp` (`<sandbox>/node_modules/.bin/zcode-acp`) */
  bin: string;
  cleanup(): void;
}

export async function packAndInstall(): Promise<PackedPackage> {
  const work = mkdtempSync(join(tmpdir(), "zcode-acp-pack-"));
  try {
    // --ignore-scripts: pack the dist/ that `npm test` just built (prepack would rebuild it while
    // other test files run against it)
    const packed = await execa(NPM, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: ROOT });
    const info = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const filename = info[0]!.filename;
    const sandbox = join(work, "sandbox");
    mkdirSync(sandbox);
    const projectLock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
    const { manifest, lock } = sandboxLock(projectLock, join(work, filename));
    writeFileSync(join(sandbox, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(join(sandbox, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
    await execa(NPM, ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: sandbox,
      env: { npm_config_update_notifier: "false" },
      timeout: 150_000,
    });
    return {
      work,
      filename,
      files: info[0]!.files.map((f) => f.path),
      sandbox,
      bin: join(sandbox, "node_modules", ".bin", process.platform === "win32" ? "zcode-acp.cmd" : "zcode-acp"),
      cleanup: () => rmSync(work, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}
