/**
 * ACP prompt content → the host's `sendPrompt` content and attachments (docs/zcode-host.md §4.1).
 * Text and resource links become prompt text; embedded resources, images and audio become
 * attachments `{kind, filename, mimeType, dataBase64? | textContent? | localPath?}`.
 *
 * Checked before anything reaches the host (INVALID_PARAMS, -32602): image / audio data must
 * be base64 of a known image / audio type, blobs base64, and the whole prompt must fit in one
 * internal channel frame. A `file:` resource link becomes a `localPath` attachment only when
 * its real path is inside the session's directory; any other link is prompt text only
 * (adr/0011-prompt-links-outside-the-workspace.md).
 */
import { realpathSync } from "node:fs";
import { basename, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { NATIVE_FRAME_LIMIT_BYTES as DEFAULT_FRAME_LIMIT_BYTES } from "../native/native-api.js";
import { BridgeError } from "../util/errors.js";

export interface HostAttachment {
  kind: "image" | "audio" | "file";
  filename: string;
  mimeType: string;
  dataBase64?: string;
  textContent?: string;
  localPath?: string;
  sizeBytes?: number;
}

export interface HostPromptInput {
  content: string;
  attachments: HostAttachment[];
}

/** the media types an image / audio block may carry, with the extension of its file name */
const EXTENSION_BY_MIME: Record<"image" | "audio", Record<string, string>> = {
  image: { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" },
  audio: { "audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/ogg": "ogg", "audio/webm": "webm" },
};

/**
 * What the prompt may take of one internal channel frame: the frame limit less room for the
 * envelope (ids, workspace path, session id). A larger prompt would fail in the channel as
 * FRAME_TOO_LARGE after the turn started.
 */
const PROMPT_BUDGET_BYTES = DEFAULT_FRAME_LIMIT_BYTES - 64 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function invalid(message: string, details?: Record<string, unknown>): BridgeError {
  return new BridgeError("INVALID_PARAMS", message, details === undefined ? {} : { details });
}

/** standard base64 (padding optional, no whitespace) of at least one byte */
function isBase64(data: unknown): data is string {
  return typeof data === "string" && data.length > 0 && data.length % 4 !== 1 && BASE64.test(data);
}

function describeBytes(bytes: number): string {
  return `${bytes} bytes (${(bytes / (1024 * 1024)).toFixed(1)} MiB)`;
}

function nameFromUri(uri: string | null | undefined, fallback: string): string {
  if (!uri) return fallback;
  try {
    const url = new URL(uri);
    const last = basename(decodeURIComponent(url.pathname)) || url.hostname;
    return last || fallback;
  } catch {
    return basename(uri) || fallback;
  }
}

function localPathOf(uri: string): string | undefined {
  if (!uri.startsWith("file:")) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** the real path of `path` when it exists inside `workspace` (itself a real path), else undefined */
function insideWorkspace(path: string, workspace: string | undefined): string | undefined {
  if (workspace === undefined) return undefined;
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  const root = workspace.endsWith(sep) ? workspace : `${workspace}${sep}`;
  return real === workspace || real.startsWith(root) ? real : undefined;
}

function checkMedia(block: { type: "image" | "audio"; mimeType: string; data: string }, index: number): string {
  const mime = typeof block.mimeType === "string" ? block.mimeType.toLowerCase() : "";
  // images: the raster types the host renders; audio: any audio/<subtype>
  const ext = EXTENSION_BY_MIME[block.type][mime] ?? (block.type === "audio" ? /^audio\/([a-z0-9.+-]+)$/.exec(mime)?.[1] : undefined);
  if (ext === undefined) {
    const known = block.type === "image" ? Object.keys(EXTENSION_BY_MIME.image).join(", ") : "audio/<subtype>";
    throw invalid(
      `Prompt block ${index} is an ${block.type} with mimeType ${JSON.stringify(block.mimeType)}; ` +
        `an ${block.type} must be ${block.type === "image" ? "one of " : ""}${known}.`,
      { block: index },
    );
  }
  if (!isBase64(block.data)) throw invalid(`Prompt block ${index} (${block.type}) does not carry valid base64 data.`, { block: index });
  return ext;
}

/** refuse a prompt that cannot travel in one internal channel frame */
function checkSize(input: HostPromptInput): void {
  let chars = input.content.length;
  for (const a of input.attachments)
    chars += (a.dataBase64?.length ?? 0) + (a.textContent?.length ?? 0) + a.filename.length + (a.localPath?.length ?? 0);
  // a UTF-16 unit is at most 6 bytes of JSON ("\u0000"); only a prompt near the limit is measured
  if (chars * 6 < PROMPT_BUDGET_BYTES) return;
  const bytes = chars > PROMPT_BUDGET_BYTES ? chars : Buffer.byteLength(JSON.stringify(input));
  if (bytes <= PROMPT_BUDGET_BYTES) return;
  throw invalid(
    `The prompt is at least ${describeBytes(bytes)}, more than the ${describeBytes(PROMPT_BUDGET_BYTES)} one prompt may carry to ZCode ` +
      `(its channel frames are limited to ${describeBytes(DEFAULT_FRAME_LIMIT_BYTES)}); send less text or smaller attachments.`,
    { bytes, limitBytes: PROMPT_BUDGET_BYTES },
  );
}

function base64Size(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/**
 * `workspacePath` is the session's directory (a real path): only files inside it are handed to
 * the host as local paths. Throws INVALID_PARAMS.
 */
export function convertPrompt(blocks: readonly ContentBlock[], workspacePath?: string): HostPromptInput {
  const texts: string[] = [];
  const attachments: HostAttachment[] = [];
  let media = 0;
  for (const [index, block] of blocks.entries()) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "resource_link": {
        const path = localPathOf(block.uri);
        const inside = path === undefined ? undefined : insideWorkspace(path, workspacePath);
        // outside the workspace (or missing): the link is text only, never a path for the host
        texts.push(`@${inside ?? path ?? block.uri}`);
        if (inside) {
          const attachment: HostAttachment = {
            kind: "file",
            filename: block.name || basename(inside),
            mimeType: block.mimeType ?? "application/octet-stream",
            localPath: inside,
          };
          if (typeof block.size === "number") attachment.sizeBytes = block.size;
          attachments.push(attachment);
        }
        break;
      }
      case "resource": {
        const resource = block.resource;
        const filename = nameFromUri(resource.uri, `resource-${attachments.length + 1}`);
        if ("text" in resource) {
          attachments.push({
            kind: "file",
            filename,
            mimeType: resource.mimeType ?? "text/plain",
            textContent: resource.text,
            sizeBytes: Buffer.byteLength(resource.text),
          });
        } else {
          if (!isBase64(resource.blob))
            throw invalid(`Prompt block ${index} (resource ${JSON.stringify(resource.uri)}) does not carry valid base64 data.`, {
              block: index,
            });
          attachments.push({
            kind: "file",
            filename,
            mimeType: resource.mimeType ?? "application/octet-stream",
            dataBase64: resource.blob,
            sizeBytes: base64Size(resource.blob),
          });
        }
        break;
      }
      case "image":
      case "audio": {
        const ext = checkMedia(block, index);
        media += 1;
        const uri = block.type === "image" ? block.uri : undefined;
        attachments.push({
          kind: block.type,
          filename: nameFromUri(uri, `${block.type}-${media}.${ext}`),
          mimeType: block.mimeType,
          dataBase64: block.data,
          sizeBytes: base64Size(block.data),
        });
        break;
      }
      default: {
        const unknown: { type?: unknown } = block;
        throw invalid(`Unsupported prompt content type "${String(unknown.type)}".`);
      }
    }
  }
  const content = texts.join("\n\n");
  if (content.trim() === "" && attachments.length === 0) {
    throw invalid("The prompt is empty.");
  }
  const input = { content, attachments };
  checkSize(input);
  return input;
}
