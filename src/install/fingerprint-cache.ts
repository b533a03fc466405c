/**
 * Fingerprint cache: facts derived from install files (SHA-256 of a file or archive member, the
 * CLI version, a passed export check), keyed by the stamps of every file the fact depends on —
 * path, size, mtime (ns), ctime (ns), inode and device. Any change of a stamp is a miss, so the
 * fact is recomputed. A corrupt cache file is ignored and rebuilt. Writes are atomic
 * (temporary file + rename). The cache never decides anything by itself: a failure to read or
 * write it only costs time. The file is the caller's (the CLI keeps it in its cache dir,
 * src/cli/locations.ts); without one the cache lives in memory only.
 */
import { randomBytes } from "node:crypto";
import { statSync, type BigIntStats } from "node:fs";
import { mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { describeError } from "../util/errors.js";
import type { Logger } from "../log/logger.js";

export interface FileStamp {
  path: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
  dev: string;
}

interface CacheEntry {
  stamps: FileStamp[];
  value: unknown;
  usedAt: number;
}

const CACHE_VERSION = 1;
const MAX_ENTRIES = 256;
const MAX_CACHE_BYTES = 4 * 1024 * 1024;

export async function stampOf(path: string): Promise<FileStamp> {
  return stampFrom(path, await stat(path, { bigint: true }));
}

function stampFrom(path: string, info: BigIntStats): FileStamp {
  return {
    path,
    size: info.size.toString(),
    mtimeNs: info.mtimeNs.toString(),
    ctimeNs: info.ctimeNs.toString(),
    ino: info.ino.toString(),
    dev: info.dev.toString(),
  };
}

/** the stamp of a path that does not exist (ENOENT, or a file where a directory was expected): all fields "absent" */
const ABSENT = "absent";

/**
 * A path's stamp, or an "absent" stamp when nothing is there (any other failure throws).
 * Synchronous: a few dozen stats cost well under a millisecond, less than as many round trips
 * through libuv's thread pool (the cached initialize offer reads them before answering).
 */
export function stampOrAbsentSync(path: string): FileStamp {
  const info = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (info === undefined) return { path, size: ABSENT, mtimeNs: ABSENT, ctimeNs: ABSENT, ino: ABSENT, dev: ABSENT };
  return stampFrom(path, info);
}

export function sameStamps(a: readonly FileStamp[], b: readonly FileStamp[]): boolean {
  return (
    a.length === b.length &&
    a.every((s, i) => {
      const t = b[i]!;
      return (
        s.path === t.path && s.size === t.size && s.mtimeNs === t.mtimeNs && s.ctimeNs === t.ctimeNs && s.ino === t.ino && s.dev === t.dev
      );
    })
  );
}

export function isStamp(value: unknown): value is FileStamp {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return ["path", "size", "mtimeNs", "ctimeNs", "ino", "dev"].every((k) => typeof v[k] === "string");
}

function parseEntries(text: string): Map<string, CacheEntry> | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null) return undefined;
  const { version, entries } = data as { version?: unknown; entries?: unknown };
  if (version !== CACHE_VERSION || typeof entries !== "object" || entries === null || Array.isArray(entries)) return undefined;
  const map = new Map<string, CacheEntry>();
  for (const [key, raw] of Object.entries(entries)) {
    const entry = raw as Partial<CacheEntry> | null;
    if (typeof entry !== "object" || entry === null || !Array.isArray(entry.stamps) || !entry.stamps.every(isStamp)) return undefined;
    if (typeof entry.usedAt !== "number" || !("value" in entry)) return undefined;
    map.set(key, { stamps: entry.stamps, value: entry.value, usedAt: entry.usedAt });
  }
  return map;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** the cache file existed but could not be used; it is rebuilt */
  corrupt: boolean;
}

export class FingerprintCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, corrupt: false };
  private dirty = false;

  private constructor(
    /** undefined: in-memory only (no cache location known) */
    readonly file: string | undefined,
    private readonly entries: Map<string, CacheEntry>,
    private readonly logger: Logger,
  ) {}

  static async load(file: string | undefined, logger: Logger): Promise<FingerprintCache> {
    if (file === undefined) return new FingerprintCache(undefined, new Map(), logger);
    let text: string | undefined;
    try {
      const info = await stat(file);
      text = info.size <= MAX_CACHE_BYTES ? await readFile(file, "utf8") : "";
    } catch {
      text = undefined; // no cache yet
    }
    const entries = text === undefined ? new Map<string, CacheEntry>() : parseEntries(text);
    const cache = new FingerprintCache(file, entries ?? new Map<string, CacheEntry>(), logger);
    if (entries === undefined) {
      cache.stats.corrupt = true;
      cache.dirty = true;
      logger.warn("fingerprint cache is corrupt; ignoring and rebuilding it", { file });
    }
    return cache;
  }

  /** the cached value for `key` if the stamps match exactly and `accept` approves its shape */
  get<T>(key: string, stamps: readonly FileStamp[], accept: (value: unknown) => value is T): T | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined && sameStamps(entry.stamps, stamps) && accept(entry.value)) {
      entry.usedAt = Date.now();
      this.stats.hits++;
      return entry.value;
    }
    this.stats.misses++;
    return undefined;
  }

  set(key: string, stamps: readonly FileStamp[], value: unknown): void {
    this.entries.set(key, { stamps: [...stamps], value, usedAt: Date.now() });
    this.dirty = true;
  }

  /** Writes the cache atomically if it changed. Never throws. */
  async save(): Promise<void> {
    if (this.file === undefined || !this.dirty) return;
    const kept = [...this.entries.entries()].sort((a, b) => b[1].usedAt - a[1].usedAt).slice(0, MAX_ENTRIES);
    const text = `${JSON.stringify({ version: CACHE_VERSION, entries: Object.fromEntries(kept) })}\n`;
    const temp = `${this.file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
      await writeFile(temp, text, { mode: 0o600 });
      await rename(temp, this.file);
      this.dirty = false;
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      this.logger.warn("cannot write the fingerprint cache; the next check will recompute", {
        file: this.file,
        error: describeError(error),
      });
    }
  }
}

/**
 * A fact derived from `files`, from the cache when none of them changed, else computed and
 * stored — but only if the files did not change while it was computed.
 */
export async function cachedFact<T>(
  cache: FingerprintCache,
  key: string,
  files: readonly string[],
  accept: (value: unknown) => value is T,
  compute: () => Promise<T>,
  /** store only values this approves (e.g. only a passed export check); default: all */
  keep: (value: T) => boolean = () => true,
): Promise<T> {
  const before = await Promise.all(files.map(stampOf));
  const hit = cache.get(key, before, accept);
  if (hit !== undefined) return hit;
  const value = await compute();
  const after = await Promise.all(files.map(stampOf));
  if (keep(value) && sameStamps(before, after)) cache.set(key, after, value);
  return value;
}
