/**
 * ACP prompt content → the host's `sendPrompt` content and attachments (zcode-host.md §4.1).
 * Text and resource links become prompt text; embedded resources, images and audio become
 * attachments `{kind, filename, mimeType, dataBase64? | textContent? | localPath?}`.
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
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

const EXTENSION_BY_MIME: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
};

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

function base64Size(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

export function convertPrompt(blocks: readonly ContentBlock[]): HostPromptInput {
  const texts: string[] = [];
  const attachments: HostAttachment[] = [];
  let media = 0;
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        texts.push(block.text);
        break;
      case "resource_link": {
        const path = localPathOf(block.uri);
        texts.push(`@${path ?? block.uri}`);
        if (path) {
          const attachment: HostAttachment = {
            kind: "file",
            filename: block.name || basename(path),
            mimeType: block.mimeType ?? "application/octet-stream",
            localPath: path,
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
          attachments.push({ kind: "file", filename, mimeType: resource.mimeType ?? "text/plain", textContent: resource.text, sizeBytes: Buffer.byteLength(resource.text) });
        } else {
          attachments.push({ kind: "file", filename, mimeType: resource.mimeType ?? "application/octet-stream", dataBase64: resource.blob, sizeBytes: base64Size(resource.blob) });
        }
        break;
      }
      case "image":
      case "audio": {
        media += 1;
        const ext = EXTENSION_BY_MIME[block.mimeType] ?? block.mimeType.split("/")[1] ?? "bin";
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
        throw new BridgeError("INVALID_PARAMS", `Unsupported prompt content type "${String(unknown.type)}".`);
      }
    }
  }
  const content = texts.join("\n\n");
  if (content.trim() === "" && attachments.length === 0) {
    throw new BridgeError("INVALID_PARAMS", "The prompt is empty.");
  }
  return { content, attachments };
}
