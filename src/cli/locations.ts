/**
 * Where zcode-acp keeps its own files, from the environment: the cache dir (the fingerprint cache,
 * Node's compile cache) and the config dir (the local manifest store). Read once, by
 * resolveConfig (./config.ts); cheap to import (the CLI needs the cache dir before anything else
 * is loaded).
 */
import { homedir } from "node:os";
import { join } from "node:path";

/** the fingerprint cache's file (src/install/fingerprint-cache.ts) in the cache dir */
export const FINGERPRINT_CACHE_FILE = "fingerprints.json";

function home(env: NodeJS.ProcessEnv): string | undefined {
  if (env.HOME) return env.HOME;
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * $ZCODE_ACP_CACHE_DIR, else the user cache dir ($XDG_CACHE_HOME or ~/.cache on linux,
 * ~/Library/Caches on darwin, %LOCALAPPDATA% on win32) + "zcode-acp" (win32: "zcode-acp/Cache").
 * Undefined when no home directory is known.
 */
export function cacheDirFrom(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  if (env.ZCODE_ACP_CACHE_DIR) return env.ZCODE_ACP_CACHE_DIR;
  const user = home(env);
  if (platform === "win32") {
    const base = env.LOCALAPPDATA || (user ? join(user, "AppData", "Local") : undefined);
    return base ? join(base, "zcode-acp", "Cache") : undefined;
  }
  if (platform === "darwin") return user ? join(user, "Library", "Caches", "zcode-acp") : undefined;
  const base = env.XDG_CACHE_HOME || (user ? join(user, ".cache") : undefined);
  return base ? join(base, "zcode-acp") : undefined;
}

/** The fingerprint cache file in `cacheDir`; undefined (no cache file) without a cache dir. */
export function fingerprintCacheIn(cacheDir: string | undefined): string | undefined {
  return cacheDir === undefined ? undefined : join(cacheDir, FINGERPRINT_CACHE_FILE);
}

/** The fingerprint cache file of an environment: <cache dir>/fingerprints.json. */
export function defaultCacheFile(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  return fingerprintCacheIn(cacheDirFrom(env, platform));
}

/** $ZCODE_ACP_CONFIG_DIR, else $XDG_CONFIG_HOME/zcode-acp, else ~/.config/zcode-acp. */
export function configDirFrom(env: NodeJS.ProcessEnv): string {
  if (env.ZCODE_ACP_CONFIG_DIR) return env.ZCODE_ACP_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, "zcode-acp");
  return join(env.HOME || homedir(), ".config", "zcode-acp");
}
