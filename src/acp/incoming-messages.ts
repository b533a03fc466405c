/**
 * The incoming half of the ACP stdio transport: stdin bytes → one JSON-RPC message per line, in
 * wire order, for the SDK connection (its `ndJsonStream` reader is not used). Two reasons:
 *
 *  - A line over the message limit (the SDK's own, DEFAULT_MAX_MESSAGE_BYTES) made the SDK's
 *    reader fail and end the connection. Here it is skipped up to its newline — NDJSON
 *    resynchronises there, since JSON text holds no raw newline — and answered with an error
 *    that names the limit; the connection keeps serving.
 *  - Every message is read by our own rules (./client-messages.ts: the envelope and the params of
 *    the methods the transport acts on) and passes `gate` before the SDK sees it, one at a time in
 *    wire order (./wire-order.ts): a gate that returns a promise holds back the later lines until
 *    it settles.
 *
 * Nothing a client writes ends the connection (adr/0019): invalid JSON, batches and non-objects
 * are answered as the SDK's reader answers them; a refused message is answered (-32600 / -32602)
 * or, a notification, dropped and logged at debug; a gate that throws is logged and the message
 * goes on (a response as an error response, so it can never allow). Only a failing stdin ends it.
 */
import { DEFAULT_MAX_MESSAGE_BYTES, type AnyMessage } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import { readClientMessage, type ClientMessage } from "./client-messages.js";
import { readMessageHead } from "./message-head.js";
import { JSON_RPC_CODES } from "./request-errors.js";

type Message = Record<string, unknown>;

export interface IncomingOptions {
  /** the byte stream (stdin) */
  input: AsyncIterable<Uint8Array | string>;
  /** protocol-level answers of the transport itself (parse errors, too large) */
  reply(message: AnyMessage): void;
  /** sees every message that was read, in wire order; returns the message to pass on, undefined to drop it, or a promise of either */
  gate?(read: ClientMessage): Message | undefined | Promise<Message | undefined>;
  logger: Logger;
  maxMessageBytes?: number;
  /** how the input ended: "eof", or the read error (the connection then ends with it) */
  onEnd?(how: "eof" | Error): void;
}

/** how many leading bytes of a line that is too large are kept to find its id and method */
const HEAD_BYTES = 4096;
const NEWLINE = 0x0a;

function isRecord(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorResponse(id: unknown, code: number, message: string, data?: unknown): AnyMessage {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id: id ?? null, error } as unknown as AnyMessage;
}

function describeLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes} bytes (${bytes / (1024 * 1024)} MiB)` : `${bytes} bytes`;
}

export function incomingMessages(options: IncomingOptions): ReadableStream<AnyMessage> {
  const limit = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const logger = options.logger;
  const decoder = new TextDecoder();
  let cancelled = false;

  const tooLarge = (headBytes: Buffer, totalBytes: number): Message | undefined => {
    const head = readMessageHead(headBytes.toString("utf8"));
    const text = `The ACP message is larger than the limit of ${describeLimit(limit)} and was not read; send less (for example fewer or smaller attachments).`;
    const data = { code: "MESSAGE_TOO_LARGE", limitBytes: limit };
    logger.warn("ACP message over the size limit skipped", {
      bytes: totalBytes,
      limitBytes: limit,
      method: head.method,
      hasId: head.id !== undefined,
    });
    if (head.method !== undefined) {
      // a request gets its error; a notification has nobody to answer
      if (head.id !== undefined && head.id !== null) options.reply(errorResponse(head.id, JSON_RPC_CODES.invalidParams, text, data));
      return undefined;
    }
    // a response to one of our requests: the SDK gets it as an error response (the interaction falls back)
    if (head.id !== undefined && head.id !== null)
      return { jsonrpc: "2.0", id: head.id, error: { code: JSON_RPC_CODES.invalidRequest, message: text, data } };
    options.reply(errorResponse(null, JSON_RPC_CODES.invalidRequest, text, data));
    return undefined;
  };

  const parse = (bytes: Uint8Array): Message | undefined => {
    const text = decoder.decode(bytes).trim();
    if (text === "") return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      options.reply(errorResponse(null, JSON_RPC_CODES.parseError, "Parse error"));
      return undefined;
    }
    if (Array.isArray(value))
      options.reply(errorResponse(null, JSON_RPC_CODES.invalidRequest, "Invalid Request", "JSON-RPC batches are not supported"));
    else if (!isRecord(value)) options.reply(errorResponse(null, JSON_RPC_CODES.invalidRequest, "Invalid Request"));
    else return value;
    return undefined;
  };

  /** read the message by our rules, then the gate; never throws */
  const gate = async (message: Message): Promise<Message | undefined> => {
    const verdict = readClientMessage(message);
    if (!verdict.ok) {
      if (verdict.answer) {
        const { id, code, message: text, data } = verdict.answer;
        logger.debug("client message refused", { method: verdict.method, reason: verdict.reason, code });
        options.reply(errorResponse(id, code, text, data));
      } else {
        logger.debug("client message ignored", { method: verdict.method, reason: verdict.reason });
      }
      return undefined;
    }
    const read = verdict.read;
    if (!options.gate) return read.message;
    try {
      return await options.gate(read);
    } catch (error) {
      logger.error("the transport could not order a client message; it is passed on", {
        kind: read.kind,
        method: read.kind === "response" ? undefined : read.method,
        error: error instanceof Error ? error.message : String(error),
      });
      if (read.kind !== "response") return read.message;
      // never pass on an answer the order could not be checked for: its request falls back
      return { jsonrpc: "2.0", id: read.id, error: { code: JSON_RPC_CODES.internalError, message: "The answer could not be ordered." } };
    }
  };

  return new ReadableStream<AnyMessage>({
    async start(controller) {
      const deliver = async (message: Message | undefined): Promise<void> => {
        if (message === undefined) return;
        const gated = await gate(message);
        if (gated !== undefined && !cancelled) controller.enqueue(gated as unknown as AnyMessage);
      };
      // the current line: its chunks, their length, and whether it is over the limit
      let parts: Buffer[] = [];
      let length = 0;
      let oversized: { head: Buffer; bytes: number } | undefined;
      const append = (piece: Buffer): void => {
        if (piece.length === 0) return;
        if (oversized) {
          oversized.bytes += piece.length;
          return;
        }
        if (length + piece.length > limit) {
          const head = Buffer.concat([...parts, piece.subarray(0, HEAD_BYTES)]).subarray(0, HEAD_BYTES);
          oversized = { head: Buffer.from(head), bytes: length + piece.length };
          parts = [];
          length = 0;
          return;
        }
        parts.push(piece);
        length += piece.length;
      };
      const endLine = async (): Promise<void> => {
        if (oversized) {
          const { head, bytes } = oversized;
          oversized = undefined;
          await deliver(tooLarge(head, bytes));
          return;
        }
        const line = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
        parts = [];
        length = 0;
        await deliver(parse(line));
      };
      try {
        for await (const raw of options.input) {
          if (cancelled) return;
          const chunk = typeof raw === "string" ? Buffer.from(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
          let start = 0;
          let newline = chunk.indexOf(NEWLINE, start);
          while (newline >= 0) {
            append(chunk.subarray(start, newline));
            await endLine();
            if (cancelled) return;
            start = newline + 1;
            newline = chunk.indexOf(NEWLINE, start);
          }
          // keep a copy: the stream may reuse its buffer
          if (start < chunk.length) append(Buffer.from(chunk.subarray(start)));
        }
        if (length > 0 || oversized) await endLine();
      } catch (error) {
        if (cancelled) return;
        options.onEnd?.(error instanceof Error ? error : new Error(String(error)));
        controller.error(error);
        return;
      }
      if (cancelled) return;
      options.onEnd?.("eof");
      controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
}
