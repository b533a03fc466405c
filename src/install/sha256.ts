/**
 * SHA-256 of a byte range of a file, streamed (a member inside a large archive is read from its
 * offset, never the whole archive, never extracted).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

export async function sha256OfRange(file: string, offset: number, size: number): Promise<string> {
  const hash = createHash("sha256");
  let read = 0;
  if (size > 0) {
    const stream = createReadStream(file, { start: offset, end: offset + size - 1, highWaterMark: 1024 * 1024 });
    for await (const chunk of stream) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
    }
  }
  if (read !== size) throw new Error(`${file}: expected ${size} bytes at offset ${offset}, read ${read} (truncated)`);
  return hash.digest("hex");
}

export function sha256OfBuffer(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}
