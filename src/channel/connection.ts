/**
 * The bridge side of the internal NDJSON channel: request/response correlation by id, one
 * timeout per request (the caller takes it from the host layer's single timeout table),
 * subscription routing by id, fail-closed handling of anything unknown, and bounded buffers.
 *
 * - Request ids and subscription ids are allocated here, increasing, so "late" (issued before,
 *   no longer pending: timed out or ended) and "unknown" (never issued) are told apart without
 *   remembering old ids. Late frames are ignored; unknown ones fail the channel.
 * - Fail closed: a malformed or unknown frame, or an oversized one, rejects every pending request
 *   with the typed error, ends every route with it, destroys the streams and calls `onClose`
 *   (the owner then stops the host).
 * - Backpressure: a route's `onEvent` may return a promise. While `maxPendingDeliveries`
 *   deliveries are unsettled the input is paused (the pipe fills up and the peer sees it).
 *   Writes are refused with CHANNEL_OVERFLOW when the peer does not read.
 */
import type { Readable, Writable } from "node:stream";
import type { Logger } from "../log/logger.js";
import { BridgeError, describeError } from "../util/errors.js";
import { parseInboundFrame, remoteErrorToBridgeError, type OwnerNotificationMethod, type RequestMethod } from "./frames.js";
import { DEFAULT_FRAME_LIMIT_BYTES, DEFAULT_MAX_PENDING_DELIVERIES, DEFAULT_MAX_PENDING_REQUESTS, WRITE_BUFFER_FRAMES } from "./limits.js";
import { NdjsonDecoder } from "./ndjson-decoder.js";
import { encodeFrame } from "./ndjson-encoder.js";

export interface SubscriptionRoute {
  /** one event; a returned promise holds back reading while too many are unsettled */
  onEvent(event: unknown): void | Promise<void>;
  /** the route ended (peer ended it, channel closed or failed, or closeRoute); called once */
  onEnd(error: BridgeError | null): void;
}

export interface ChannelCloseInfo {
  error: BridgeError;
  /** true when the owner called close(); false for peer end, stream errors and protocol failures */
  byOwner: boolean;
}

export interface ChannelConnectionOptions {
  input: Readable;
  output: Writable;
  logger: Logger;
  frameLimitBytes?: number;
  maxPendingRequests?: number;
  maxPendingDeliveries?: number;
  maxWriteBufferBytes?: number;
  /** error for pending requests and routes when the peer ends its stream unasked */
  peerEndError?: () => BridgeError;
  onNotification?: (method: OwnerNotificationMethod, params: Record<string, unknown>) => void;
  onClose?: (info: ChannelCloseInfo) => void;
}

export interface RequestOptions {
  timeoutMs: number;
  /** what the request is, for error messages and logs (e.g. "agent.initialize") */
  label: string;
}

interface PendingRequest {
  label: string;
  resolve(value: unknown): void;
  reject(error: BridgeError): void;
  timer: NodeJS.Timeout;
}

export class ChannelConnection {
  readonly frameLimitBytes: number;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly logger: Logger;
  private readonly decoder: NdjsonDecoder;
  private readonly maxPendingRequests: number;
  private readonly maxPendingDeliveries: number;
  private readonly maxWriteBufferBytes: number;
  private readonly options: ChannelConnectionOptions;
  private readonly pending = new Map<number, PendingRequest>();
  private readonly routes = new Map<string, SubscriptionRoute>();
  /** frames decoded but not yet handled: at most one input chunk, kept while reading is paused */
  private readonly backlog: unknown[] = [];
  private inputEnded = false;
  private nextRequestId = 1;
  private nextRouteNumber = 1;
  private deliveries = 0;
  private paused = false;
  private closeError: BridgeError | undefined;
  private readonly separateOutput: boolean;

  constructor(options: ChannelConnectionOptions) {
    this.options = options;
    this.input = options.input;
    this.output = options.output;
    this.logger = options.logger;
    this.frameLimitBytes = options.frameLimitBytes ?? DEFAULT_FRAME_LIMIT_BYTES;
    this.decoder = new NdjsonDecoder(this.frameLimitBytes);
    this.maxPendingRequests = options.maxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS;
    this.maxPendingDeliveries = options.maxPendingDeliveries ?? DEFAULT_MAX_PENDING_DELIVERIES;
    this.maxWriteBufferBytes = options.maxWriteBufferBytes ?? WRITE_BUFFER_FRAMES * this.frameLimitBytes;
    this.separateOutput = (this.output as unknown) !== this.input;
    this.input.on("data", (chunk: Buffer | string) => this.onData(typeof chunk === "string" ? Buffer.from(chunk) : chunk));
    this.input.on("end", () => this.onInputEnd());
    this.input.on("close", () => this.onInputEnd());
    this.input.on("error", (error: Error) => this.onStreamError(error));
    if (this.separateOutput) this.output.on("error", (error: Error) => this.onStreamError(error));
  }

  get closed(): boolean {
    return this.closeError !== undefined;
  }

  get pendingRequests(): number {
    return this.pending.size;
  }

  /** open subscription routes (diagnostics) */
  get openRoutes(): number {
    return this.routes.size;
  }

  /** the largest frame received so far, in bytes (diagnostics) */
  get largestInboundFrameBytes(): number {
    return this.decoder.largestFrameBytes;
  }

  /** event deliveries whose consumer promise is unsettled (diagnostics) */
  get pendingDeliveries(): number {
    return this.deliveries;
  }

  /** true while reading is paused because event consumers are behind */
  get readingPaused(): boolean {
    return this.paused;
  }

  /** Send a request frame and wait for its response. Rejects with BridgeError. */
  request(method: RequestMethod, params: Record<string, unknown>, options: RequestOptions): Promise<unknown> {
    if (this.closeError) return Promise.reject(this.closeError);
    if (this.pending.size >= this.maxPendingRequests) {
      return Promise.reject(
        new BridgeError("CHANNEL_OVERFLOW", `too many requests in flight on the internal channel (${this.pending.size})`),
      );
    }
    if (this.output.writableLength > this.maxWriteBufferBytes) {
      return Promise.reject(
        new BridgeError("CHANNEL_OVERFLOW", "the host process is not reading the internal channel", {
          details: { bufferedBytes: this.output.writableLength },
        }),
      );
    }
    const id = this.nextRequestId;
    let line: string;
    try {
      line = encodeFrame({ id, method, params }, this.frameLimitBytes);
    } catch (error) {
      return Promise.reject(error);
    }
    this.nextRequestId += 1;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending.delete(id)) {
          reject(
            new BridgeError("HOST_TIMEOUT", `the host did not answer ${options.label} within ${options.timeoutMs} ms`, {
              details: { label: options.label, timeoutMs: options.timeoutMs },
            }),
          );
        }
      }, options.timeoutMs);
      this.pending.set(id, { label: options.label, resolve, reject, timer });
      this.output.write(line, (error) => {
        if (error) this.onStreamError(error);
      });
    });
  }

  /** Register a route for subscription events before asking the peer to subscribe. Returns its id. */
  openRoute(route: SubscriptionRoute): string {
    if (this.closeError) throw this.closeError;
    const id = `s${this.nextRouteNumber}`;
    this.nextRouteNumber += 1;
    this.routes.set(id, route);
    return id;
  }

  /** Remove a route and end it with `error` (null: a normal dispose). False when it was not open. */
  closeRoute(subscriptionId: string, error: BridgeError | null): boolean {
    const route = this.routes.get(subscriptionId);
    if (!route) return false;
    this.routes.delete(subscriptionId);
    this.endRoute(route, error);
    return true;
  }

  /** Owner-initiated close: half-close the output, fail what is pending with `error`. Idempotent. */
  close(error?: BridgeError): void {
    if (this.closeError) return;
    this.finish(error ?? new BridgeError("CHANNEL_CLOSED", "the internal channel was closed"), true);
    this.output.end();
    // the peer's remaining output is read and dropped until it closes its end
    this.resumeReading();
  }

  /** Fail closed with `error`: reject and end everything, destroy the streams. Idempotent. */
  fail(error: BridgeError): void {
    if (this.closeError) return;
    this.logger.error("internal channel failed closed", { code: error.code, reason: error.message });
    this.finish(error, false);
    this.input.destroy();
    if (this.separateOutput) this.output.destroy();
  }

  private finish(error: BridgeError, byOwner: boolean): void {
    this.closeError = error;
    this.backlog.length = 0;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const request of pending) {
      clearTimeout(request.timer);
      request.reject(error);
    }
    const routes = [...this.routes.values()];
    this.routes.clear();
    for (const route of routes) this.endRoute(route, error);
    try {
      this.options.onClose?.({ error, byOwner });
    } catch (hookError) {
      this.logger.error("internal channel close hook threw", { error: describeError(hookError) });
    }
  }

  private onData(chunk: Buffer): void {
    if (this.closeError) return;
    try {
      this.backlog.push(...this.decoder.push(chunk));
    } catch (error) {
      this.fail(asBridgeError(error));
      return;
    }
    this.drainBacklog();
  }

  /** Handle decoded frames until none is left or consumers are behind (then reading stays paused). */
  private drainBacklog(): void {
    while (this.backlog.length > 0 && !this.paused && !this.closeError) {
      const value = this.backlog.shift();
      try {
        this.handleValue(value);
      } catch (error) {
        this.fail(asBridgeError(error));
        return;
      }
    }
    if (this.inputEnded && this.backlog.length === 0) this.onInputEnd();
  }

  private handleValue(value: unknown): void {
    const frame = parseInboundFrame(value);
    switch (frame.kind) {
      case "result":
      case "error": {
        const request = this.pending.get(frame.id);
        if (!request) {
          if (frame.id < this.nextRequestId) {
            this.logger.debug("late internal channel response ignored", { id: frame.id });
            return;
          }
          throw new BridgeError("CHANNEL_PROTOCOL", `internal channel received a response for request ${frame.id}, which was never sent`);
        }
        this.pending.delete(frame.id);
        clearTimeout(request.timer);
        if (frame.kind === "result") request.resolve(frame.result);
        else request.reject(remoteErrorToBridgeError(frame.error));
        return;
      }
      case "event": {
        const route = this.routes.get(frame.subscriptionId);
        if (route) this.deliver(route, frame.event);
        else this.checkLateRoute(frame.subscriptionId, "event");
        return;
      }
      case "subscription-end": {
        const error = frame.error ? remoteErrorToBridgeError(frame.error) : null;
        if (!this.closeRoute(frame.subscriptionId, error)) this.checkLateRoute(frame.subscriptionId, "subscription-end");
        return;
      }
      case "owner":
        try {
          this.options.onNotification?.(frame.method, frame.params);
        } catch (error) {
          this.logger.error("internal channel notification handler threw", { method: frame.method, error: describeError(error) });
        }
        return;
    }
  }

  private checkLateRoute(subscriptionId: string, what: string): void {
    const match = /^s([1-9][0-9]{0,15})$/.exec(subscriptionId);
    if (match?.[1] !== undefined && Number(match[1]) < this.nextRouteNumber) {
      this.logger.debug(`late internal channel ${what} ignored`, { subscriptionId });
      return;
    }
    throw new BridgeError("CHANNEL_PROTOCOL", `internal channel received ${what} for a subscription that was never opened`);
  }

  private deliver(route: SubscriptionRoute, event: unknown): void {
    let outcome: void | Promise<void>;
    try {
      outcome = route.onEvent(event);
    } catch (error) {
      this.logger.error("subscription consumer threw", { error: describeError(error) });
      return;
    }
    if (!isThenable(outcome)) return;
    this.deliveries += 1;
    if (this.deliveries >= this.maxPendingDeliveries && !this.paused) {
      this.paused = true;
      this.input.pause();
      this.logger.debug("internal channel reading paused: event consumers are behind", { deliveries: this.deliveries });
    }
    outcome.then(
      () => this.delivered(),
      (error: unknown) => {
        this.logger.error("subscription consumer failed", { error: describeError(error) });
        this.delivered();
      },
    );
  }

  private delivered(): void {
    this.deliveries -= 1;
    if (this.paused && this.deliveries <= Math.floor(this.maxPendingDeliveries / 2)) this.resumeReading();
  }

  private resumeReading(): void {
    if (!this.paused) return;
    this.paused = false;
    this.drainBacklog();
    if (!this.paused) this.input.resume();
  }

  private endRoute(route: SubscriptionRoute, error: BridgeError | null): void {
    try {
      route.onEnd(error);
    } catch (hookError) {
      this.logger.error("subscription end handler threw", { error: describeError(hookError) });
    }
  }

  private onInputEnd(): void {
    if (this.closeError) return;
    this.inputEnded = true;
    // frames still held back (reading paused) are handled first: a host-exit may be among them
    if (this.backlog.length > 0) return;
    try {
      this.decoder.end();
    } catch (error) {
      this.fail(asBridgeError(error));
      return;
    }
    const error = this.options.peerEndError?.() ?? new BridgeError("CHANNEL_CLOSED", "the peer closed the internal channel");
    this.finish(error, false);
    this.output.end();
  }

  private onStreamError(error: Error): void {
    if (this.closeError) return;
    this.fail(new BridgeError("CHANNEL_CLOSED", `internal channel stream error: ${describeError(error)}`, { cause: error }));
  }
}

function isThenable(value: unknown): value is Promise<void> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function asBridgeError(error: unknown): BridgeError {
  return error instanceof BridgeError
    ? error
    : new BridgeError("CHANNEL_PROTOCOL", `internal channel error: ${describeError(error)}`, { cause: error });
}
