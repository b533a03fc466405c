import { mkdtemp, readFile, readdir, rm, utimes, writeFile, rename, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultCacheFile } from "../../../src/cli/locations.js";
import { cachedFact, FingerprintCache } from "../../../src/install/fingerprint-cache.js";
import { hashFile } from "../../../src/install/cached-hash.js";
import { silentLogger } from "../../../src/log/logger.js";

let dir: string;
let cacheFile: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "zcode-acp-cache-"));
  cacheFile = join(dir, "c", "fingerprints.json");
  file = join(dir, "data.bin");
  await writeFile(file, "hello");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const isString = (v: unknown): v is string => typeof v === "string";

async function fact(cache: FingerprintCache, counter: { n: number }) {
  return cachedFact(cache, "k", [file], isString, async () => {
    counter.n++;
    return (await readFile(file, "utf8")).toUpperCase();
  });
}

async function freshCache() {
  return FingerprintCache.load(cacheFile, silentLogger);
}

describe("fingerprint cache", () => {
  it("a repeated lookup with unchanged files does not recompute, across processes (via the file)", async () => {
    const counter = { n: 0 };
    const first = await freshCache();
    expect(await fact(first, counter)).toBe("HELLO");
    await first.save();
    const second = await freshCache();
    expect(await fact(second, counter)).toBe("HELLO");
    expect(counter.n).toBe(1);
    expect(second.stats).toEqual({ hits: 1, misses: 0, corrupt: false });
    expect(await readdir(join(dir, "c"))).toEqual(["fingerprints.json"]); // no temp file left behind
  });

  it("any change of size, content+mtime, or inode recomputes", async () => {
    const counter = { n: 0 };
    const cache = await freshCache();
    await fact(cache, counter);
    await writeFile(file, "hello!"); // size
    expect(await fact(cache, counter)).toBe("HELLO!");
    const before = await stat(file);
    await writeFile(file, "jello!"); // same size, new mtime
    await utimes(file, before.atime, new Date(before.mtimeMs + 5));
    expect(await fact(cache, counter)).toBe("JELLO!");
    await writeFile(join(dir, "other"), "hellO!"); // same size, new inode
    await rename(join(dir, "other"), file);
    expect(await fact(cache, counter)).toBe("HELLO!");
    expect(counter.n).toBe(4);
  });

  it("a same-size edit whose mtime is put back is still caught (ctime)", async () => {
    const counter = { n: 0 };
    const cache = await freshCache();
    await utimes(file, 1_700_000_000, 1_700_000_000); // whole seconds: exactly restorable
    await fact(cache, counter);
    const before = await stat(file, { bigint: true });
    await writeFile(file, "HACKS");
    await utimes(file, 1_700_000_000, 1_700_000_000);
    expect((await stat(file, { bigint: true })).mtimeNs).toBe(before.mtimeNs);
    expect(await fact(cache, counter)).toBe("HACKS");
    expect(counter.n).toBe(2);
  });

  it("a corrupt cache file is ignored and rebuilt", async () => {
    const counter = { n: 0 };
    const seed = await freshCache();
    await fact(seed, counter);
    await seed.save();
    for (const garbage of [
      "{ truncated",
      "[]",
      JSON.stringify({ version: 1, entries: { k: { stamps: [{ path: 1 }], value: "X", usedAt: 1 } } }),
      JSON.stringify({ version: 99, entries: {} }),
    ]) {
      await writeFile(cacheFile, garbage);
      const cache = await freshCache();
      expect(cache.stats.corrupt).toBe(true);
      expect(await fact(cache, counter)).toBe("HELLO");
      await cache.save();
      const rebuilt = JSON.parse(await readFile(cacheFile, "utf8")) as { version: number; entries: Record<string, unknown> };
      expect(rebuilt.version).toBe(1);
      expect(Object.keys(rebuilt.entries)).toEqual(["k"]);
    }
    expect(counter.n).toBe(5);
  });

  it("a value of the wrong shape in the cache is not trusted", async () => {
    const counter = { n: 0 };
    const seed = await freshCache();
    await fact(seed, counter);
    await seed.save();
    const data = JSON.parse(await readFile(cacheFile, "utf8")) as { entries: Record<string, { value: unknown }> };
    data.entries.k!.value = 42;
    await writeFile(cacheFile, JSON.stringify(data));
    expect(await fact(await freshCache(), counter)).toBe("HELLO");
    expect(counter.n).toBe(2);
  });

  it("hashes whole files through the cache", async () => {
    const cache = await freshCache();
    const a = await hashFile(cache, file);
    expect(a).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect(await hashFile(cache, file)).toBe(a);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 1 });
  });

  it("an unwritable cache location costs time, not the check", async () => {
    await writeFile(join(dir, "blocker"), "x");
    const cache = await FingerprintCache.load(join(dir, "blocker", "fingerprints.json"), silentLogger);
    const counter = { n: 0 };
    expect(await fact(cache, counter)).toBe("HELLO");
    await expect(cache.save()).resolves.toBeUndefined();
  });

  it("resolves the default location from the environment", () => {
    expect(defaultCacheFile({ ZCODE_ACP_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }, "linux")).toBe("/c/fingerprints.json");
    expect(defaultCacheFile({ XDG_CACHE_HOME: "/x", HOME: "/h" }, "linux")).toBe("/x/zcode-acp/fingerprints.json");
    expect(defaultCacheFile({ HOME: "/h" }, "linux")).toBe("/h/.cache/zcode-acp/fingerprints.json");
    expect(defaultCacheFile({ HOME: "/h" }, "darwin")).toBe("/h/Library/Caches/zcode-acp/fingerprints.json");
    expect(defaultCacheFile({ LOCALAPPDATA: "/l" }, "win32")).toBe(join("/l", "zcode-acp", "Cache", "fingerprints.json"));
  });
});
