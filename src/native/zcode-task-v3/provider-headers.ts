/**
 * Provider runtime header requests on zcode-task-v3 (zcode-v4.md §5.4, docs/zcode-host.md §16.7).
 * A host without the legacy session stream hands the requests it does not answer itself (the
 * Start Plan captcha) to whoever listens on `onDynamicWorkspaceProviderRuntimeHeadersRequest
 * {workspacePath}`: one listener per workspace, each request naming its session. ZCode replays the
 * workspace's pending requests to a new listener.
 *
 * One listener per workspace while a session of it is subscribed; each request goes, as the
 * legacy stream's top-level `providerRuntimeHeaders.request` event, to the newest subscription of
 * its session, whose interaction broker answers it (src/session/interactions/provider-headers.ts:
 * `headersApplied: false` at once, the turn stopped with PROVIDER_HEADERS_UNSUPPORTED). A request
 * of a session no subscription reads (closed or released meanwhile) is declined here: nothing else
 * answers this headless host, and ZCode would otherwise hold the turn until its own timeout. A
 * request already seen (a replay) is passed on by nobody, so each gets exactly one answer. The
 * listener's end with an error (host exit, channel failure) ends every subscription routed through
 * it: a session that can no longer hear header requests is not kept silently.
 */
import type { HostClient, HostSubscription } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import { V4_HEADERS_EVENT } from "../../manifest/release-lines.js";
import { BridgeError, describeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";

/** requests remembered as seen (host incarnation, workspace, session, request id) */
const SEEN_KEPT = 1024;

/** what ZCode is told for a request no subscription of this bridge reads */
export const UNROUTED_HEADERS_MESSAGE =
  "zcode-acp runs without the ZCode desktop window and cannot provide provider runtime headers (captcha)";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/** One session subscription's end of the routing. */
export interface HeaderRoute {
  readonly sessionId: string;
  /** a request of this session, as the top-level event `{type: "providerRuntimeHeaders.request", request}` */
  deliver(event: unknown): void | Promise<void>;
  /** the workspace listener ended: this subscription can hear no more header requests */
  end(error: BridgeError): void;
}

interface Watch {
  readonly routes: Set<HeaderRoute>;
  ready: Promise<HostSubscription>;
  /** the listener ended (host exit, channel failure) or could not be made */
  ended: boolean;
  /** no subscription reads through it any more and it is being disposed: what still comes is declined */
  closed: boolean;
  /** the host incarnation the listener belongs to, once ZCode acknowledged it */
  incarnation?: number;
}

export type DeclineHeaders = (params: SessionRef & { requestId: string; message: string }) => Promise<unknown>;

export class ProviderHeaderRoutes {
  private readonly watches = new Map<string, Watch>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly host: HostClient,
    private readonly logger: Logger,
    private readonly decline: DeclineHeaders,
  ) {}

  /**
   * Route the header requests of `route.sessionId` to it, listening on the workspace first when no
   * subscription of it does. Resolves once ZCode acknowledged the listener; returns the detach.
   */
  async attach(workspacePath: string, route: HeaderRoute): Promise<() => void> {
    let watch = this.watches.get(workspacePath);
    if (watch === undefined || watch.ended || watch.closed) {
      watch = this.open(workspacePath);
    }
    // registered before the listener's answer: a request replayed at once already finds it
    watch.routes.add(route);
    const current = watch;
    try {
      await current.ready;
    } catch (error) {
      current.routes.delete(route);
      throw error;
    }
    let detached = false;
    return () => {
      if (detached) return;
      detached = true;
      current.routes.delete(route);
      if (current.routes.size === 0 && !current.ended && !current.closed) this.close(workspacePath, current);
    };
  }

  private open(workspacePath: string): Watch {
    const watch = { routes: new Set(), ended: false, closed: false } as Omit<Watch, "ready"> as Watch;
    this.watches.set(workspacePath, watch);
    watch.ready = this.host.subscribe(
      { event: V4_HEADERS_EVENT, workspacePath },
      {
        onEvent: (raw) => this.request(workspacePath, watch, raw),
        onEnd: (error) => this.ended(workspacePath, watch, error),
      },
    );
    void watch.ready.then(
      (subscription) => {
        watch.incarnation = subscription.incarnation;
      },
      () => {
        watch.ended = true;
        if (this.watches.get(workspacePath) === watch) this.watches.delete(workspacePath);
      },
    );
    return watch;
  }

  private close(workspacePath: string, watch: Watch): void {
    watch.closed = true;
    if (this.watches.get(workspacePath) === watch) this.watches.delete(workspacePath);
    void watch.ready
      .then((subscription) => subscription.dispose())
      .catch((error: unknown) => this.logger.debug("provider header listener: dispose failed", { error: describeError(error) }));
  }

  private ended(workspacePath: string, watch: Watch, error: BridgeError | null): void {
    if (watch.ended || watch.closed) return;
    watch.ended = true;
    if (this.watches.get(workspacePath) === watch) this.watches.delete(workspacePath);
    const reason =
      error ??
      new BridgeError(
        "HOST_CALL_FAILED",
        "ZCode ended its provider header listener; the session was detached and is read again at its next use.",
      );
    for (const route of [...watch.routes]) route.end(reason);
    watch.routes.clear();
  }

  private request(workspacePath: string, watch: Watch, raw: unknown): void | Promise<void> {
    if (watch.ended) return;
    const request = isRecord(raw) ? raw : {};
    const sessionId = nonEmpty(request.sessionId);
    const requestId = nonEmpty(request.requestId);
    if (sessionId === undefined) {
      // no session to answer for (respondProviderRuntimeHeaders needs one): ZCode's own timeout ends it
      this.logger.error("provider header request without a session id: it cannot be answered", { requestId });
      return;
    }
    if (requestId !== undefined) {
      const key = `${this.host.incarnation}\u0000${workspacePath}\u0000${sessionId}\u0000${requestId}`;
      if (this.seen.has(key)) {
        this.logger.debug("provider header request re-announced: already answered", { sessionId, requestId });
        return;
      }
      this.seen.add(key);
      if (this.seen.size > SEEN_KEPT) this.seen.delete(this.seen.values().next().value!);
    }
    let route: HeaderRoute | undefined;
    for (const candidate of watch.routes) if (candidate.sessionId === sessionId) route = candidate; // the newest
    if (route) return route.deliver({ type: "providerRuntimeHeaders.request", request });
    if (watch.incarnation !== undefined && watch.incarnation !== this.host.incarnation) {
      this.logger.warn("provider header request of an exited host: not answered", { sessionId, requestId });
      return;
    }
    this.declineUnread(workspacePath, request, "a session no subscription reads");
  }

  /**
   * Answer a request no session will (its subscription ended while it was held: HeaderTurnOrder),
   * `event` being `{type: "providerRuntimeHeaders.request", request}`. The caller checks that the
   * host it came from still runs.
   */
  declineHeld(workspacePath: string, event: unknown): void {
    this.declineUnread(workspacePath, isRecord(event) && isRecord(event.request) ? event.request : {}, "a subscription that ended");
  }

  private declineUnread(workspacePath: string, request: Record<string, unknown>, whose: string): void {
    const sessionId = nonEmpty(request.sessionId);
    const requestId = nonEmpty(request.requestId);
    if (sessionId === undefined || requestId === undefined) {
      this.logger.error(`provider header request of ${whose} without its ids: it cannot be answered`, { sessionId, requestId });
      return;
    }
    this.logger.warn(`provider header request of ${whose}: declined`, { sessionId, requestId });
    void this.decline({ workspacePath, sessionId, requestId, message: UNROUTED_HEADERS_MESSAGE }).catch((error: unknown) =>
      this.logger.warn("provider headers: answering host failed", { sessionId, requestId, error: describeError(error) }),
    );
  }
}

/**
 * How long a header request waits for the conversation to show its turn. It comes on its own
 * listener, unordered with the conversation frames: delivered before the frame whose `turnHeader`
 * starts its turn, the session would not yet know the turn is its prompt's. After this it is
 * delivered anyway (the broker still answers it at once).
 */
export const HEADERS_TURN_WAIT_MS = 2_000;
/** requests held at once per subscription; one more is delivered at once instead */
const HELD_KEPT = 16;
/** turn ids of the conversation remembered per subscription */
const TURNS_KEPT = 256;

interface Held {
  turnId: string;
  event: unknown;
  timer: ReturnType<typeof setTimeout>;
}

/** the turn a conversation event shows started or running: a `turn.started`, or a snapshot's active turn */
function turnShown(event: unknown): string | undefined {
  if (!isRecord(event)) return undefined;
  if (event.type === "session.event" && isRecord(event.event) && event.event.type === "turn.started") return nonEmpty(event.event.turnId);
  if (event.type === "snapshot" && isRecord(event.snapshot) && isRecord(event.snapshot.runtime)) {
    return nonEmpty(event.snapshot.runtime.activeTurnId);
  }
  return undefined;
}

/**
 * One subscription's order of header requests and conversation events: a request whose turn the
 * conversation has not shown yet is held until it does (or HEADERS_TURN_WAIT_MS passes).
 */
export class HeaderTurnOrder {
  private readonly turns = new Set<string>();
  private held: Held[] = [];
  private ended = false;

  constructor(
    private readonly pass: (event: unknown) => void | Promise<void>,
    private readonly waitMs: number = HEADERS_TURN_WAIT_MS,
  ) {}

  /** a conversation event, just passed on: held requests of the turn it shows go now */
  shown(event: unknown): void {
    const turnId = turnShown(event);
    if (turnId === undefined || this.ended) return;
    this.turns.add(turnId);
    if (this.turns.size > TURNS_KEPT) this.turns.delete(this.turns.values().next().value!);
    const due = this.held.filter((h) => h.turnId === turnId);
    if (due.length === 0) return;
    this.held = this.held.filter((h) => h.turnId !== turnId);
    for (const h of due) {
      clearTimeout(h.timer);
      void this.pass(h.event);
    }
  }

  /** a header request event (`{type: "providerRuntimeHeaders.request", request}`) */
  request(event: unknown): void | Promise<void> {
    if (this.ended) return;
    const request = isRecord(event) && isRecord(event.request) ? event.request : {};
    const turnId = nonEmpty(request.turnId);
    if (turnId === undefined || this.turns.has(turnId) || this.held.length >= HELD_KEPT) return this.pass(event);
    const held: Held = {
      turnId,
      event,
      timer: setTimeout(() => {
        this.held = this.held.filter((h) => h !== held);
        void this.pass(event);
      }, this.waitMs),
    };
    held.timer.unref?.();
    this.held.push(held);
  }

  /** the subscription ended: the requests still held, to be answered by the caller */
  end(): unknown[] {
    this.ended = true;
    const held = this.held;
    this.held = [];
    for (const h of held) clearTimeout(h.timer);
    return held.map((h) => h.event);
  }
}
