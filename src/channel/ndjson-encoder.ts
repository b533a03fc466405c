/** NDJSON encoder with the same frame limit as the decoder (docs/runtime-contract.md §4). */
import { BridgeError, describeError } from "../util/errors.js";
import { DEFAULT_FRAME_LIMIT_BYTES } from "./limits.js";

/**
 * One frame as a line ("…\n"). Throws FRAME_TOO_LARGE when the JSON text exceeds `limitBytes`,
 * CHANNEL_PROTOCOL when the value cannot be serialised (cycle, BigInt, undefined at top level).
 */
export function encodeFrame(value: unknown, limitBytes: number = DEFAULT_FRAME_LIMIT_BYTES): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new BridgeError("CHANNEL_PROTOCOL", `cannot serialise an internal channel frame: ${describeError(error)}`, { cause: error });
  }
  if (text === undefined) throw new BridgeError("CHANNEL_PROTOCOL", "cannot serialise an internal channel frame: no JSON value");
  // cheap upper bound first: a UTF-8 byte is at most 3 per UTF-16 unit
  if (text.length * 3 > limitBytes) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > limitBytes) {
      throw new BridgeError("FRAME_TOO_LARGE", `internal channel frame of ${bytes} bytes exceeds the limit of ${limitBytes} bytes`, {
        details: { limitBytes, frameBytes: bytes },
      });
    }
  }
  return `${text}\n`;
}
