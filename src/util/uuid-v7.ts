/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. ZCode's V4 command
 * ids are of this kind (docs/zcode-host.md §15); their time prefix keeps them in issue order.
 */
import { randomBytes } from "node:crypto";

export function uuidV7(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = Math.max(0, Math.floor(now));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | (bytes[6]! & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8]! & 0x3f); // variant 10
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
