/**
 * Tampering helpers for the check tests: edit files of a generated install the way a damaged or
 * modified install would look (in place inside a packed archive when the size is unchanged,
 * otherwise by repacking).
 */
import { createHash } from "node:crypto";
import { mkdtemp, open, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPackage, extractAll, getRawHeader, uncacheAll } from "@electron/asar";
import type { Manifest } from "../../src/compat/types.js";

export interface Editable {
  resourcesDir: string;
  appArchive: string;
}

export const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

async function isPacked(install: Editable): Promise<boolean> {
  return (await stat(install.appArchive)).isFile();
}

function memberEntry(archive: string, member: string): { offset: number; size: number } {
  const raw = getRawHeader(archive);
  let node = raw.header as unknown as { files?: Record<string, unknown>; offset?: string; size?: number };
  for (const seg of member.split("/")) node = node.files![seg] as typeof node;
  return { offset: 8 + raw.headerSize + Number(node.offset), size: node.size! };
}

async function readMemberText(install: Editable, member: string): Promise<string> {
  if (!(await isPacked(install))) return readFile(join(install.appArchive, member), "utf8");
  const { offset, size } = memberEntry(install.appArchive, member);
  const buf = Buffer.alloc(size);
  const fh = await open(install.appArchive, "r");
  try {
    await fh.read(buf, 0, size, offset);
  } finally {
    await fh.close();
  }
  return buf.toString("utf8");
}

/** Replaces a member of app.asar (directory or packed). Returns the new content's SHA-256. */
export async function editMember(install: Editable, member: string, edit: (text: string) => string): Promise<string> {
  const next = edit(await readMemberText(install, member));
  if (!(await isPacked(install))) {
    await writeFile(join(install.appArchive, member), next);
    return sha256(next);
  }
  const { offset, size } = memberEntry(install.appArchive, member);
  if (Buffer.byteLength(next) === size) {
    const fh = await open(install.appArchive, "r+");
    try {
      await fh.write(Buffer.from(next), 0, size, offset);
    } finally {
      await fh.close();
    }
    return sha256(next);
  }
  const dir = await mkdtemp(join(tmpdir(), "zcode-acp-repack-"));
  try {
    uncacheAll();
    extractAll(install.appArchive, dir);
    await writeFile(join(dir, member), next);
    await createPackage(dir, install.appArchive);
    uncacheAll();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return sha256(next);
}

/** flips one byte in the middle of a member, keeping its size */
export function flipOneByte(text: string): string {
  const i = Math.floor(text.length / 2);
  const c = text.charCodeAt(i);
  return text.slice(0, i) + String.fromCharCode(c === 0x20 ? 0x09 : 0x20) + text.slice(i + 1);
}

export async function patchMetadata(install: Editable, patch: Record<string, unknown>): Promise<void> {
  const file = join(install.resourcesDir, "glm", ".node-bundle-meta.json");
  const data = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  await writeFile(file, JSON.stringify({ ...data, ...patch }, null, 2));
}

export async function writeManifest(dir: string, name: string, manifest: Manifest | Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(manifest, null, 2));
  return file;
}
