/**
 * The first-use pin store (docs/runtime-contract.md §7, adr/0020): for a pinned manifest that
 * leaves its RPC module to be pinned on first use, the module found by its exports among the
 * pinned host entry's static imports is recorded here — its path and SHA-256, the host entry it
 * was found for, and the date — the first time the bridge uses the install; from then on it must
 * match exactly, as SSH does with a host key. One file per manifest, 0600, in a 0700 directory
 * under the config dir (beside the local manifest store). Written exclusively (a temporary file
 * hard-linked into place), so two bridges starting at once cannot both record different bytes.
 */
import { constants } from "node:fs";
import { chmod, link, mkdir, open, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LOCAL_DIR_MODE, LOCAL_FILE_MODE } from "../manifest/local-store.js";
import { installProblem } from "../install/install-problem.js";
import { describeError, isBridgeError } from "../util/errors.js";
import { PACKAGE_VERSION } from "../version.js";

export const FIRST_USE_PIN_DIR = "pins";
const MAX_PIN_BYTES = 64 * 1024;

export interface FirstUsePin {
  schemaVersion: 1;
  kind: "rpc-module-first-use";
  /** the manifest's artifact id the pin belongs to */
  manifest: string;
  appVersion: string;
  /** the host entry the module was found for (the manifest pins it) */
  hostIndex: { path: string; sha256: string };
  rpcModule: { path: string; sha256: string };
  /** ISO 8601 */
  pinnedAt: string;
  pinnedBy: string;
}

export function firstUsePinDir(configDir: string): string {
  return join(configDir, FIRST_USE_PIN_DIR);
}

/** `<pin dir>/<artifact id>.rpc-module.json` */
export function firstUsePinFile(pinDir: string, artifactId: string): string {
  return join(pinDir, `${artifactId}.rpc-module.json`);
}

const SHA256 = /^[0-9a-f]{64}$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isFingerprint = (value: unknown): value is { path: string; sha256: string } =>
  isObject(value) &&
  Object.keys(value).length === 2 &&
  typeof value.path === "string" &&
  value.path.length > 0 &&
  value.path.length <= 512 &&
  typeof value.sha256 === "string" &&
  SHA256.test(value.sha256);
const PIN_KEYS = ["schemaVersion", "kind", "manifest", "appVersion", "hostIndex", "rpcModule", "pinnedAt", "pinnedBy"];

/** the closed shape of a pin file */
export function isFirstUsePin(value: unknown): value is FirstUsePin {
  return (
    isObject(value) &&
    Object.keys(value).length === PIN_KEYS.length &&
    PIN_KEYS.every((key) => key in value) &&
    value.schemaVersion === 1 &&
    value.kind === "rpc-module-first-use" &&
    typeof value.manifest === "string" &&
    typeof value.appVersion === "string" &&
    isFingerprint(value.hostIndex) &&
    isFingerprint(value.rpcModule) &&
    typeof value.pinnedAt === "string" &&
    /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$/.test(value.pinnedAt) &&
    typeof value.pinnedBy === "string"
  );
}

function unusable(file: string, why: string, cause?: unknown): Error {
  return installProblem(
    `The first-use pin ${file} ${why}. zcode-acp will not guess which RPC module to trust: ` +
      `delete that file to pin the module again at the next use (only if you trust this ZCode install).`,
    { [`pin ${file}`]: { expected: "a first-use pin written by zcode-acp", actual: why } },
    cause,
  );
}

/** The pin in `file`; undefined when there is none yet. A link, a non-regular file or a bad pin fails closed, naming the file. */
export async function readFirstUsePin(file: string): Promise<FirstUsePin | undefined> {
  let text: string;
  try {
    // O_NONBLOCK: a FIFO put in its place is refused by the regular-file check, not waited on
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw unusable(file, "is not a regular file");
      if (info.size > MAX_PIN_BYTES) throw unusable(file, `is larger than ${MAX_PIN_BYTES} bytes`);
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isBridgeError(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP") throw unusable(file, "is a symbolic link", error);
    throw unusable(file, `cannot be read (${describeError(error)})`, error);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw unusable(file, "is not valid JSON");
  }
  if (!isFirstUsePin(value)) throw unusable(file, "is not a valid first-use pin");
  return value;
}

export interface NewPin {
  manifest: string;
  appVersion: string;
  hostIndex: { path: string; sha256: string };
  rpcModule: { path: string; sha256: string };
}

/**
 * Records `pin` in `file` unless a pin is there already: returns the pin that is in the file
 * afterwards (ours, or the one another process recorded first), for the caller to compare.
 */
export async function recordFirstUsePin(file: string, pin: NewPin, now: Date = new Date()): Promise<FirstUsePin> {
  const record: FirstUsePin = {
    schemaVersion: 1,
    kind: "rpc-module-first-use",
    manifest: pin.manifest,
    appVersion: pin.appVersion,
    hostIndex: { ...pin.hostIndex },
    rpcModule: { ...pin.rpcModule },
    pinnedAt: now.toISOString(),
    pinnedBy: `zcode-acp ${PACKAGE_VERSION}`,
  };
  const dir = join(file, "..");
  const temporary = `${file}.${process.pid}.${now.getTime()}.tmp`;
  try {
    await mkdir(dir, { recursive: true, mode: LOCAL_DIR_MODE });
    await chmod(dir, LOCAL_DIR_MODE);
    await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: LOCAL_FILE_MODE, flag: "wx" });
    try {
      await link(temporary, file); // exclusive: fails with EEXIST when a pin is already there
      return record;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } catch (error) {
    throw installProblem(
      `Cannot record the first-use pin of the RPC module in ${file}: ${describeError(error)}. ` +
        `Make the directory writable (or set ZCODE_ACP_CONFIG_DIR); zcode-acp does not use a module it cannot pin.`,
      { [`pin ${file}`]: { expected: "written", actual: describeError(error) } },
      error,
    );
  } finally {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
  const existing = await readFirstUsePin(file);
  if (existing === undefined) throw unusable(file, "disappeared while it was being recorded");
  return existing;
}
