/**
 * The app archive `resources/app.asar`: a real asar archive file, or (simulated installs) a plain
 * directory of the same name. Members are located, never extracted: for a packed archive the
 * header (read with @electron/asar) gives each member's offset and size inside the archive file,
 * and the bytes are read from there.
 */
import { open, stat } from "node:fs/promises";
import { isBridgeError } from "../util/errors.js";
import { confinedEntry } from "./confine.js";
import { errnoOf, installProblem } from "./install-problem.js";

export interface MemberLocation {
  /** the member path inside the archive, e.g. "out/host/index.js" */
  member: string;
  /** for people: "app.asar/out/host/index.js" */
  label: string;
  /** the file that holds the bytes: the archive file, or a plain file on disk */
  file: string;
  offset: number;
  size: number;
  /** a path Electron-as-Node can import: the plain file, or "<archive>/<member>" */
  importPath: string;
}

export interface AppArchive {
  kind: "directory" | "asar";
  /** real path of app.asar */
  path: string;
  /** finds a member (a readable regular file inside the root), or throws UNSUPPORTED_ZCODE */
  locate(member: string): Promise<MemberLocation>;
}

const MAX_HEADER_BYTES = 64 * 1024 * 1024;
const ARCHIVE_LABEL = "app.asar";

interface HeaderNode {
  files?: Record<string, HeaderNode>;
  link?: string;
  size?: unknown;
  offset?: unknown;
  unpacked?: unknown;
}

function memberSegments(member: string): string[] {
  const segments = member.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) {
    throw installProblem(`Refusing archive member path "${member}".`, { [member]: { expected: "a plain relative path", actual: member } });
  }
  return segments;
}

/** Opens app.asar (already confined to the root by the caller: `archiveReal` is its real path). */
export async function openAppArchive(rootReal: string, archiveReal: string, isDirectory: boolean): Promise<AppArchive> {
  if (isDirectory) {
    return {
      kind: "directory",
      path: archiveReal,
      async locate(member) {
        memberSegments(member);
        const label = `${ARCHIVE_LABEL}/${member}`;
        const { real } = await confinedEntry(rootReal, `${archiveReal}/${member}`, label, "file");
        const { size } = await stat(real);
        return { member, label, file: real, offset: 0, size, importPath: real };
      },
    };
  }
  const { header, dataStart, archiveSize } = await readHeader(archiveReal);
  return {
    kind: "asar",
    path: archiveReal,
    async locate(member) {
      const label = `${ARCHIVE_LABEL}/${member}`;
      let node: HeaderNode | undefined = header;
      for (const segment of memberSegments(member)) {
        if (node?.link !== undefined) break;
        node = node?.files !== undefined && Object.hasOwn(node.files, segment) ? node.files[segment] : undefined;
      }
      if (node === undefined) {
        throw installProblem(`The ZCode install is incomplete: ${label} is missing from the archive. Reinstall ZCode.`, {
          [label]: { expected: "a file in the archive", actual: "missing" },
        });
      }
      if (node.link !== undefined || node.files !== undefined) {
        const actual = node.link !== undefined ? `a link to ${String(node.link)}` : "a directory";
        throw installProblem(`The ZCode install is damaged: ${label} is ${actual} inside the archive, expected a file. Reinstall ZCode.`, {
          [label]: { expected: "a file in the archive", actual },
        });
      }
      if (node.unpacked === true) {
        // stored beside the archive in app.asar.unpacked/, subject to the same confinement
        const { real } = await confinedEntry(rootReal, `${archiveReal}.unpacked/${member}`, `${label} (unpacked)`, "file");
        const { size } = await stat(real);
        return { member, label, file: real, offset: 0, size, importPath: `${archiveReal}/${member}` };
      }
      const size = node.size;
      const offset = typeof node.offset === "string" && /^\d+$/.test(node.offset) ? Number(node.offset) : NaN;
      if (
        typeof size !== "number" ||
        !Number.isSafeInteger(size) ||
        size < 0 ||
        !Number.isSafeInteger(offset) ||
        dataStart + offset + size > archiveSize
      ) {
        throw installProblem(`The ZCode app archive is damaged: the entry of ${label} points outside the archive. Reinstall ZCode.`, {
          [label]: { expected: "an entry inside the archive", actual: { offset: node.offset, size } },
        });
      }
      return { member, label, file: archiveReal, offset: dataStart + offset, size, importPath: `${archiveReal}/${member}` };
    },
  };
}

async function readHeader(archiveReal: string): Promise<{ header: HeaderNode; dataStart: number; archiveSize: number }> {
  const damaged = (actual: string, cause?: unknown) =>
    installProblem(
      `The ZCode app archive ${ARCHIVE_LABEL} is not a readable asar archive (${actual}). Reinstall ZCode.`,
      {
        [ARCHIVE_LABEL]: { expected: "an asar archive", actual },
      },
      cause,
    );
  let archiveSize: number;
  let headerSize: number;
  try {
    archiveSize = (await stat(archiveReal)).size;
    const handle = await open(archiveReal, "r");
    try {
      const prefix = Buffer.alloc(8);
      const { bytesRead } = await handle.read(prefix, 0, 8, 0);
      if (bytesRead !== 8) throw damaged("shorter than an asar size prefix");
      // Chromium pickle: uint32 payload size (4), then uint32 header size
      headerSize = prefix.readUInt32LE(4);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (isBridgeError(error)) throw error;
    throw damaged(`cannot be read: ${errnoOf(error) ?? "error"}`, error);
  }
  if (headerSize > MAX_HEADER_BYTES || 8 + headerSize > archiveSize) throw damaged(`header size ${headerSize} does not fit the file`);
  let raw: { header: unknown; headerSize: number };
  try {
    const { getRawHeader } = await import("./asar-header.js"); // packed archives only
    raw = getRawHeader(archiveReal);
  } catch (error) {
    throw damaged("malformed header", error);
  }
  const header = raw.header as HeaderNode;
  if (typeof header !== "object" || header === null || typeof header.files !== "object" || header.files === null) {
    throw damaged("header has no file table");
  }
  return { header, dataStart: 8 + raw.headerSize, archiveSize };
}

/** Reads a whole (small) member into memory, refusing members larger than `maxBytes`. */
export async function readMember(location: MemberLocation, maxBytes: number): Promise<Buffer> {
  if (location.size > maxBytes) {
    throw installProblem(`${location.label} is ${location.size} bytes, more than the ${maxBytes} expected. Reinstall ZCode.`, {
      [location.label]: { expected: `at most ${maxBytes} bytes`, actual: location.size },
    });
  }
  const buffer = Buffer.alloc(location.size);
  const handle = await open(location.file, "r");
  try {
    let done = 0;
    while (done < location.size) {
      const { bytesRead } = await handle.read(buffer, done, location.size - done, location.offset + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    if (done !== location.size)
      throw installProblem(`${location.label} is truncated. Reinstall ZCode.`, {
        [location.label]: { expected: location.size, actual: done },
      });
  } finally {
    await handle.close();
  }
  return buffer;
}
