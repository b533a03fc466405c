/**
 * The session management calls `initialize` advertised last time, cached with the stamps of every
 * path the install assessment read them from (adr/0026): `initialize` is answered from it at once
 * when nothing changed, instead of waiting for the host modules and an assessment (about 45 ms of a
 * 120 ms start on Node 20). The full assessment still runs in the warm-up and gates every launch;
 * the cache only says what a supported install's manifest allows.
 *
 * - Key: this module's own file (a build's chunk names change with its code), the platform, and
 *   the settings the assessment reads (install root or the default roots tried, manifests, config
 *   dir, read path). Inputs: `Assessment.inputs`, each with its stamp (path, size, mtime, ctime,
 *   inode, device: src/install/fingerprint-cache.ts), "absent" where nothing is. Any difference is
 *   a miss, and `initialize` waits for the assessment as before.
 * - Written only from a supported assessment that a next one confirmed: the same offer from the
 *   same inputs (sorted paths), stamped between the two and again after the next with no
 *   difference, so the next one read exactly the stamped bytes (a file changed during the first
 *   cannot be cached with the first's verdict). At most two confirming assessments per start.
 * - One small file in the cache dir, written atomically; read bounded and checked field by field.
 *   A missing, unreadable or malformed file is a miss, never an error.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { mkdir, rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { installRootCandidates } from "../install/discover.js";
import { isStamp, sameStamps, stampOrAbsentSync, type FileStamp } from "../install/fingerprint-cache.js";
import { isInstallPlatform } from "../install/layout.js";
import type { SessionCalls } from "../native/session-calls.js";
import type { Config } from "./config.js";

/** the file in the cache dir */
export const INITIALIZE_OFFER_FILE = "initialize-offer.json";
const OFFER_VERSION = 1;
/** bound of the file read (an offer of a few hundred inputs is ~100 KiB) */
const MAX_OFFER_BYTES = 256 * 1024;
/** how many confirming assessments may run before the offer is given up for this start */
const CONFIRMATIONS = 2;
/** bound of the inputs kept (an assessment reads a few dozen) */
const MAX_INPUTS = 512;

/** this module's file: a rebuilt bundle names its chunks after their code */
const CODE = fileURLToPath(import.meta.url);

export interface OfferLocation {
  file: string;
  key: string;
}

/** Where the acp command's offer is cached and under which key; undefined without a cache dir. */
export function offerLocation(config: Config, env: NodeJS.ProcessEnv): OfferLocation | undefined {
  if (config.cacheDir === undefined) return undefined;
  const platform = process.platform;
  const roots = config.zcodeInstall ?? (isInstallPlatform(platform) ? installRootCandidates(platform, env) : []);
  const key = JSON.stringify({
    code: CODE,
    system: `${platform}-${process.arch}`,
    roots,
    manifest: config.manifest ?? null,
    configDir: config.configDir,
    readPath: config.readPath ?? null,
  });
  return { file: join(config.cacheDir, INITIALIZE_OFFER_FILE), key };
}

const isCalls = (value: unknown): value is SessionCalls => {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return Object.keys(v).length === 3 && typeof v.delete === "boolean" && typeof v.setTitle === "boolean" && typeof v.fork === "boolean";
};

/** the file's text, when it is at most MAX_OFFER_BYTES (synchronous, like the stamps: one small file) */
function readBounded(file: string): string | undefined {
  const fd = openSync(file, "r");
  try {
    if (fstatSync(fd).size > MAX_OFFER_BYTES) return undefined;
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

const stampsOf = (paths: readonly string[]): FileStamp[] => paths.map(stampOrAbsentSync);

/**
 * The cached offer when its key matches and every input is as it was stamped; undefined otherwise
 * (never throws). Synchronous: one small file and a few dozen stats, well under a millisecond.
 */
export function readCachedOffer(location: OfferLocation): SessionCalls | undefined {
  try {
    const text = readBounded(location.file);
    if (text === undefined) return undefined;
    const data = JSON.parse(text) as Record<string, unknown>;
    if (typeof data !== "object" || data === null || data.version !== OFFER_VERSION || data.key !== location.key) return undefined;
    const { inputs, calls } = data;
    if (!isCalls(calls) || !Array.isArray(inputs) || inputs.length === 0 || inputs.length > MAX_INPUTS || !inputs.every(isStamp))
      return undefined;
    const now = stampsOf(inputs.map((s) => s.path));
    return sameStamps(inputs, now) ? { delete: calls.delete, setTitle: calls.setTitle, fork: calls.fork } : undefined;
  } catch {
    return undefined;
  }
}

/** What a confirmed assessment offers, and the paths it read it from. */
export interface OfferFacts {
  calls: SessionCalls;
  inputs: readonly string[];
}

const sameCalls = (a: SessionCalls, b: SessionCalls): boolean => a.delete === b.delete && a.setTitle === b.setTitle && a.fork === b.fork;

/**
 * Caches `first` once `confirm` (a second assessment, run after the inputs were stamped) offers
 * the same from the same inputs and the stamps did not move meanwhile. Returns whether it was
 * written; never rejects (a failure only costs the next start its wait).
 */
export async function cacheOffer(
  location: OfferLocation,
  first: OfferFacts,
  confirm: () => Promise<OfferFacts | undefined>,
): Promise<boolean> {
  if (first.inputs.length === 0 || first.inputs.length > MAX_INPUTS) return false;
  let temp: string | undefined;
  try {
    // the first start of a release pins its RPC module on first use: the next assessment reads the
    // pin instead of every candidate, so its inputs differ once; one more assessment then agrees
    let current = first;
    let after: FileStamp[] | undefined;
    for (let attempt = 0; attempt < CONFIRMATIONS && after === undefined; attempt++) {
      const before = stampsOf(current.inputs);
      const next = await confirm();
      if (next === undefined || !sameCalls(first.calls, next.calls)) return false;
      if (next.inputs.length === current.inputs.length && next.inputs.every((p, i) => p === current.inputs[i])) {
        const now = stampsOf(next.inputs);
        if (!sameStamps(before, now)) return false;
        after = now;
      }
      current = next;
    }
    if (after === undefined) return false;
    const text = `${JSON.stringify({ version: OFFER_VERSION, key: location.key, inputs: after, calls: first.calls })}\n`;
    if (text.length > MAX_OFFER_BYTES) return false;
    temp = `${location.file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    await mkdir(dirname(location.file), { recursive: true, mode: 0o700 });
    await writeFile(temp, text, { mode: 0o600 });
    await rename(temp, location.file);
    return true;
  } catch {
    if (temp !== undefined) await unlink(temp).catch(() => undefined);
    return false;
  }
}

/** Removes a cached offer the install no longer matches (never rejects). */
export async function forgetOffer(location: OfferLocation): Promise<void> {
  await unlink(location.file).catch(() => undefined);
}
