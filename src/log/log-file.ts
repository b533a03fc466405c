/**
 * Opening the diagnostic log file (--log-file / ZCODE_ACP_LOG_FILE) safely (adr/0021): the log
 * holds paths, session ids and, at debug level, prompt text, so it is for its owner only.
 *
 * - created 0600 (never wider; the umask can only narrow it);
 * - never through a symbolic link: the final path component is opened with O_NOFOLLOW (on Windows,
 *   which has no O_NOFOLLOW, after an lstat) and a link is refused (USAGE, exit 2), so a link
 *   planted where the log goes cannot make zcode-acp append to another file;
 * - an existing regular file that group or others can read: its mode is tightened to 0600 when it
 *   is ours (the log says so), refused when it is not (we cannot tighten it);
 * - opened once: every record is written to that descriptor, so replacing the path later changes
 *   nothing. Character devices (/dev/null, a terminal) are used as they are;
 * - opening never waits: it is non-blocking (O_NONBLOCK), so a FIFO (named pipe) at the path does not
 *   hold the start-up until some reader appears. A FIFO, a socket or a block device is refused at
 *   once (USAGE, exit 2), whether or not something reads it, like a non-regular --manifest path.
 */
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, type Stats } from "node:fs";
import { BridgeError } from "../util/errors.js";

export interface OpenedLogFile {
  fd: number;
  /** what was done to an existing file's mode, for the log ("tightened from 0644 to 0600") */
  tightened?: string;
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, "0")}`;

function refuse(file: string, why: string): BridgeError {
  return new BridgeError("USAGE", `The log file ${file} (--log-file / ZCODE_ACP_LOG_FILE) ${why}.`);
}

/** "a FIFO (named pipe)", … for a path that is neither a regular file nor a character device */
function specialKind(info: Stats): string | undefined {
  if (info.isFIFO()) return "a FIFO (named pipe)";
  if (info.isSocket()) return "a socket";
  if (info.isBlockDevice()) return "a block device";
  return undefined;
}

const notRegular = (file: string, kind: string): BridgeError =>
  refuse(file, `is ${kind}, not a regular file; give the path of a regular file (e.g. ~/.local/state/zcode-acp/zcode-acp.log)`);

/** Open `file` for appending as described above, or throw USAGE with the reason. */
export function openLogFile(file: string, platform: NodeJS.Platform = process.platform): OpenedLogFile {
  const linkRefusal = (): BridgeError =>
    refuse(file, "is a symbolic link; zcode-acp does not follow links for its log file: give the path of a regular file");
  if (platform === "win32") {
    try {
      if (lstatSync(file).isSymbolicLink()) throw linkRefusal();
    } catch (error) {
      if (error instanceof BridgeError) throw error;
    }
  }
  const noFollow = constants.O_NOFOLLOW ?? 0;
  // O_NONBLOCK: a FIFO without a reader fails with ENXIO instead of blocking; one with a reader is
  // refused below. Regular files ignore the flag; a terminal keeps it (a write it cannot take at
  // once fails, and the logger then goes on on stderr).
  const noBlock = constants.O_NONBLOCK ?? 0;
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | noFollow | noBlock, 0o600);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === "ELOOP" || e.code === "EMLINK") throw linkRefusal();
    if (e.code === "ENXIO" || e.code === "EOPNOTSUPP") {
      let kind: string | undefined;
      try {
        kind = specialKind(lstatSync(file));
      } catch {
        // gone meanwhile: the generic refusal below
      }
      if (kind !== undefined) throw notRegular(file, kind);
    }
    if (e.code === "EISDIR") throw refuse(file, "is a directory; give the path of a file");
    if (e.code === "ENOENT") throw refuse(file, "cannot be created: its directory does not exist");
    throw refuse(file, `cannot be opened for writing (${e.code ?? e.message})`);
  }
  try {
    const stat = fstatSync(fd);
    const kind = specialKind(stat);
    if (kind !== undefined) throw notRegular(file, kind);
    if (!stat.isFile() || (stat.mode & 0o077) === 0 || platform === "win32") return { fd };
    const owner = process.getuid?.();
    if (owner !== undefined && stat.uid !== owner) {
      throw refuse(
        file,
        `is readable by other users (mode ${octal(stat.mode)}) and belongs to another user, so zcode-acp cannot make it private: ` +
          `give a path of your own (e.g. ~/.local/state/zcode-acp/zcode-acp.log)`,
      );
    }
    fchmodSync(fd, 0o600);
    return { fd, tightened: `tightened from ${octal(stat.mode)} to 0600` };
  } catch (error) {
    closeSync(fd);
    if (error instanceof BridgeError) throw error;
    throw refuse(file, `cannot be made private (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}
