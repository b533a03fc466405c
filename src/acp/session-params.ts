/**
 * ACP session params → validated values, before anything reaches the host. One rule for the
 * working directory of session/new, load, resume and list, so that a session created from
 * one spelling of a directory is found from any other spelling of it.
 */
import { realpath, stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { BridgeError } from "../util/errors.js";
import { invalidParams } from "./request-errors.js";

function refused(what: string, path: string, problem: string): BridgeError {
  // JSON quoting shows control characters (a NUL byte, a newline) escaped
  return new BridgeError("INVALID_PARAMS", `${what} ${JSON.stringify(path)} ${problem}.`, { details: { [what]: path } });
}

/**
 * An existing directory, as its real path (symlinks resolved, no `.` / `..`). Refused with
 * INVALID_PARAMS (-32602), naming the path: not a string, not absolute, a NUL byte, missing,
 * unreadable, not a directory.
 */
export async function workspaceDirectory(value: unknown, what = "cwd"): Promise<string> {
  return (await resolveDirectory(value, what, false))!;
}

/**
 * The cwd filter of session/list: like `workspaceDirectory`, except that a directory that does
 * not exist has no sessions (null: an empty list, as the ACP conformance kit expects), not an error.
 */
export function listFilterDirectory(value: unknown): Promise<string | null> {
  return resolveDirectory(value, "cwd", true);
}

async function resolveDirectory(value: unknown, what: string, missingIsNull: boolean): Promise<string | null> {
  if (typeof value !== "string" || value === "") throw invalidParams(`${what} must be a non-empty absolute path.`);
  if (value.includes("\0")) throw refused(what, value, "contains a NUL byte; give the path of an existing directory");
  if (!isAbsolute(value)) throw refused(what, value, "is not an absolute path");
  let real: string;
  try {
    real = await realpath(value);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      if (missingIsNull) return null;
      throw refused(what, value, "does not exist; give the path of an existing directory");
    }
    throw refused(what, value, `cannot be resolved (${code ?? "unknown error"})`);
  }
  const info = await stat(real).catch(() => undefined);
  if (!info?.isDirectory()) throw refused(what, value, "is not a directory; give the path of the workspace directory");
  return real;
}
