/**
 * SHA-256 through the fingerprint cache: a whole file, or a member of the app archive (keyed by
 * the archive file's stamp plus the member's offset and size, so any change of the archive
 * rehashes its members).
 */
import { stat } from "node:fs/promises";
import type { MemberLocation } from "./app-archive.js";
import { cachedFact, type FingerprintCache } from "./fingerprint-cache.js";
import { sha256OfRange } from "./sha256.js";

const isSha256 = (value: unknown): value is string => typeof value === "string" && /^[0-9a-f]{64}$/.test(value);

export async function hashMember(cache: FingerprintCache, location: MemberLocation): Promise<string> {
  const key = `sha256\u0000${location.file}\u0000${location.offset}\u0000${location.size}`;
  return cachedFact(cache, key, [location.file], isSha256, () => sha256OfRange(location.file, location.offset, location.size));
}

export async function hashFile(cache: FingerprintCache, file: string): Promise<string> {
  return cachedFact(cache, `sha256\u0000${file}`, [file], isSha256, async () => sha256OfRange(file, 0, (await stat(file)).size));
}
