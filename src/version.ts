import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Our own package version, read once from the package's package.json: the nearest one above this
 * module (src/, build/tsc/ and the bundled dist/cli/ chunks sit at different depths).
 */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "zcode-acp" && typeof pkg.version === "string") return pkg.version;
    }
    dir = dirname(dir);
  }
  throw new Error("zcode-acp's package.json was not found above its modules; reinstall zcode-acp");
}

export const PACKAGE_VERSION: string = packageVersion();
