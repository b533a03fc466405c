/**
 * The npm package as users get it: `npm pack` of the built tree into a temporary directory, then
 * a global install of that tarball into a temporary prefix, offline (every dependency from the
 * npm cache that `npm ci` filled; nothing is fetched). Used by package.test.ts and
 * registry.test.ts, each packing once for all its tests.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

export const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
export const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** bin of a global prefix (npm puts bins in <prefix>/bin on POSIX, <prefix> on Windows) */
export const binOf = (prefix: string): string =>
  process.platform === "win32" ? join(prefix, "zcode-acp.cmd") : join(prefix, "bin", "zcode-acp");

/** npm with its global prefix redirected into `prefix`, quiet */
export const npmEnv = (prefix: string): Record<string, string> => ({
  npm_config_prefix: prefix,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
});

export interface PackedPackage {
  /** the temporary directory holding the tarball and the prefix */
  work: string;
  /** the tarball's file name, as npm names it (`<name>-<version>.tgz`) */
  filename: string;
  /** the paths the tarball holds */
  files: string[];
  /** the global prefix it is installed into */
  prefix: string;
  /** the installed `zcode-acp` */
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
    const prefix = join(work, "global");
    mkdirSync(prefix);
    // what the README says: npm install --global <tarball> (here into a temporary prefix, offline)
    await execa(NPM, ["install", "--global", "--no-audit", "--offline", "--ignore-scripts", join(work, filename)], {
      cwd: work,
      env: npmEnv(prefix),
      timeout: 150_000,
    });
    return {
      work,
      filename,
      files: info[0]!.files.map((f) => f.path),
      prefix,
      bin: binOf(prefix),
      cleanup: () => rmSync(work, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}
