/**
 * zcode-acp's cache directory: $ZCODE_ACP_CACHE_DIR, else the user cache dir ($XDG_CACHE_HOME or
 * ~/.cache on linux, ~/Library/Caches on darwin, %LOCALAPPDATA% on win32) + "zcode-acp"
 * (win32: "zcode-acp/Cache"). Undefined when no home directory is known. Cheap to import: the CLI
 * reads it before anything else is loaded (Node's compile cache lives there too).
 */
import { homedir } from "node:os";
import { join } from "node:path";

export function cacheDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  if (env.ZCODE_ACP_CACHE_DIR) return env.ZCODE_ACP_CACHE_DIR;
  let home: string | undefined = env.HOME || undefined;
  if (home === undefined) {
    try {
      home = homedir() || undefined;
    } catch {
      home = undefined;
    }
  }
  if (platform === "win32") {
    const base = env.LOCALAPPDATA || (home ? join(home, "AppData", "Local") : undefined);
    return base ? join(base, "zcode-acp", "Cache") : undefined;
  }
  if (platform === "darwin") return home ? join(home, "Library", "Caches", "zcode-acp") : undefined;
  const base = env.XDG_CACHE_HOME || (home ? join(home, ".cache") : undefined);
  return base ? join(base, "zcode-acp") : undefined;
}
