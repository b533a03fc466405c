/**
 * Node's module compile cache (Node ≥ 22.1: `module.enableCompileCache`): the CLI's modules are
 * compiled once and then read from `<cache dir>/node-compile-cache` (the cache dir: ./locations.ts)
 * on every later start. A no-op on Node 20 (the function does not exist) and when
 * NODE_DISABLE_COMPILE_CACHE is set; an existing NODE_COMPILE_CACHE is the user's choice and wins.
 * Never fails the start-up: any problem only costs time. The environment the host gets is not
 * changed (docs/runtime-contract.md §4: the bridge's own environment).
 */
import { mkdirSync } from "node:fs";
import * as nodeModule from "node:module";
import { join } from "node:path";

type EnableCompileCache = (directory?: string) => { status: number; message?: string; directory?: string };

export interface CompileCacheResult {
  enabled: boolean;
  directory?: string;
  /** why not, when not */
  reason?: string;
}

/** Enables it under `cacheDir` (the setting, ./config.ts); without a cache dir it stays off. */
export function enableCompileCache(cacheDir: string | undefined): CompileCacheResult {
  const enable = (nodeModule as unknown as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== "function") return { enabled: false, reason: "this Node has no module compile cache" };
  try {
    if (cacheDir === undefined) return { enabled: false, reason: "no cache directory" };
    const directory = join(cacheDir, "node-compile-cache");
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const before = process.env.NODE_COMPILE_CACHE;
    const result = enable(directory);
    if (before === undefined) delete process.env.NODE_COMPILE_CACHE;
    const status = (nodeModule as unknown as { constants?: unknown }).constants as
      { compileCacheStatus?: Record<string, number> } | undefined;
    const ok = result.status === status?.compileCacheStatus?.ENABLED || result.status === status?.compileCacheStatus?.ALREADY_ENABLED;
    return ok
      ? { enabled: true, directory: result.directory ?? directory }
      : { enabled: false, reason: result.message ?? `status ${result.status}` };
  } catch (error) {
    return { enabled: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
