/**
 * The app version: `version` of package.json inside the app archive (linux, win32), or
 * `CFBundleShortVersionString` of Contents/Info.plist (darwin), whose `CFBundleVersion` is the
 * app build (a diagnostic only).
 */
import { readFile } from "node:fs/promises";
import { describeError } from "../util/errors.js";
import { readMember, type AppArchive } from "./app-archive.js";
import { installProblem } from "./install-problem.js";

export interface AppVersion {
  version: string;
  /** darwin: CFBundleVersion */
  build?: string;
  /** where the version was read, for people */
  source: string;
}

const MAX_BYTES = 1024 * 1024;

export async function readAppVersionFromArchive(archive: AppArchive): Promise<AppVersion> {
  const location = await archive.locate("package.json");
  const bytes = await readMember(location, MAX_BYTES);
  let data: unknown;
  try {
    data = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw installProblem(
      `${location.label} is not valid JSON (${describeError(error)}). Reinstall ZCode.`,
      { [location.label]: { expected: "JSON with a version", actual: "invalid JSON" } },
      error,
    );
  }
  const version = (data as { version?: unknown } | null)?.version;
  if (typeof version !== "string" || version === "") {
    throw installProblem(`${location.label} has no version. Reinstall ZCode.`, {
      appVersion: { expected: "a version string", actual: version ?? "missing" },
    });
  }
  return { version, source: location.label };
}

export async function readAppVersionFromPlist(file: string, label: string): Promise<AppVersion> {
  const bytes = await readFile(file);
  if (bytes.length > MAX_BYTES)
    throw installProblem(`${label} is too large (${bytes.length} bytes). Reinstall ZCode.`, {
      [label]: { expected: `at most ${MAX_BYTES} bytes`, actual: bytes.length },
    });
  if (bytes.subarray(0, 8).toString("latin1") === "bplist00") {
    throw installProblem(`${label} is a binary property list; zcode-acp reads the XML form that ZCode ships. Reinstall ZCode.`, {
      [label]: { expected: "an XML property list", actual: "a binary property list" },
    });
  }
  let data: unknown;
  try {
    const { default: plist } = await import("plist"); // darwin only
    data = plist.parse(bytes.toString("utf8"));
  } catch (error) {
    throw installProblem(
      `${label} is not a valid property list (${describeError(error)}). Reinstall ZCode.`,
      { [label]: { expected: "an XML property list", actual: "unparseable" } },
      error,
    );
  }
  const dict = typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
  const version = dict.CFBundleShortVersionString;
  const build = dict.CFBundleVersion;
  if (typeof version !== "string" || version === "") {
    throw installProblem(`${label} has no CFBundleShortVersionString. Reinstall ZCode.`, {
      appVersion: { expected: "CFBundleShortVersionString", actual: version ?? "missing" },
    });
  }
  return typeof build === "string" || typeof build === "number"
    ? { version, build: String(build), source: label }
    : { version, source: label };
}
