/**
 * The order on the wire decides between a cancel and the client's answer to an interaction
 * (adr/0006). The SDK parses lines in order, but it resolves a response on one microtask path
 * and runs a notification handler on another, so without this the winner of "session/cancel,
 * then allow" would be chosen by scheduling — and was often the allow.
 *
 * The transport shows this tracker every message, in wire order and before the SDK sees it:
 * outgoing `session/request_permission` / `elicitation/create` requests (by id), incoming
 * answers to them, `session/cancel` and a `$/cancel_request` of a running `session/prompt`.
 * When the cancel of session S is read:
 *  1. every interaction request of S not answered on the wire yet becomes stale: its answer,
 *     whenever it arrives, reaches the SDK as a cancelled outcome and can never allow;
 *  2. answers of S read earlier whose interaction is not over yet (the client port reports the
 *     end through `ended`) are waited for, so an allow read before the cancel is answered to the
 *     host before the cancel takes effect;
 *  3. `cancelSession(S)` runs (the engine stops the turn and withdraws every pending
 *     interaction of S with a real deny / decline), before any later line reaches the SDK.
 * The reverse order needs nothing: an answer read before the cancel is simply passed on.
 *
 * Nothing here leans on SDK internals (adr/0019): the transport reads the messages itself
 * (./client-messages.ts, typed and checked, never a throw); an outgoing interaction request is
 * matched to its ticket by a tag the client port puts in the params' `_meta` (ACP's extension
 * field, which every SDK passes through) and our writer takes off again before the line is
 * written — not by the identity of the params object. Without the tag (an SDK that dropped
 * `_meta`), the oldest unsent ticket of the same session and kind is taken, with a warning.
 */
import type { AnyMessage } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";
import type { ClientMessage } from "./client-messages.js";

type Message = Record<string, unknown>;
export type InteractionKind = "permission" | "elicitation";

const ASKING_METHODS: Record<string, InteractionKind> = {
  "session/request_permission": "permission",
  "elicitation/create": "elicitation",
};
/** what a stale answer becomes: the client's own "cancelled" answer of each method */
const CANCELLED_RESULT = {
  permission: { outcome: { outcome: "cancelled" } },
  elicitation: { action: "cancel" },
} as const;
/** the `_meta` key of the ticket tag (taken off before the line is written) */
export const TICKET_META_KEY = "zcode-acp/wire-ticket";
/** bound on remembered requests (unanswered, unsent, running prompts) */
const MAX_TRACKED = 1024;
/** a consumer that never ends its interaction must not stop the input: fail-safe, not synchronisation */
const CONSUME_SAFETY_MS = 10_000;

interface Ticket {
  sessionId: string;
  kind: InteractionKind;
  state: "asked" | "answered" | "stale";
  /** resolves when the interaction that asked is over (its signal aborted); undefined when untracked */
  over?: Promise<void>;
  done: boolean;
  /** the tag in `_meta`, and whether the params had a `_meta` of their own */
  tag?: number;
  ownMeta?: boolean;
}

/** What the client port tells the tracker about the interaction requests it sends. */
export interface InteractionTracker {
  /** call right before sending; returns the params to send (tagged) */
  track<P extends object>(kind: InteractionKind, params: P, signal: AbortSignal): P;
  /** the interaction that asked with `signal` is over (also assumed when the signal aborts) */
  ended(signal: AbortSignal): void;
  /**
   * Was a cancel of its session read after this session/prompt request (by the order on the wire)?
   * The prompt handler asks right before it starts the turn: a cancel read before the handler ran
   * found no turn to cancel, so it is applied there.
   */
  cancelledOnWire(requestId: unknown): boolean;
}

/** the key a JSON-RPC request id is kept under (ids are numbers, strings or null) */
export const requestKey = (id: unknown): string => JSON.stringify(id) ?? "undefined";

function isRecord(value: unknown): value is Message {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** keep at most MAX_TRACKED entries (the oldest go) */
function bound<K, V>(map: Map<K, V>): void {
  while (map.size > MAX_TRACKED) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}

export class WireOrder implements InteractionTracker {
  private serial = 0;
  /** tickets of requests about to be sent, by tag, oldest first */
  private readonly unsent = new Map<number, Ticket>();
  /** the interaction's client signal → how to mark its ticket over */
  private readonly enders = new WeakMap<AbortSignal, () => void>();
  /** interaction requests on the wire, not answered yet, by JSON-RPC id */
  private readonly asked = new Map<string, Ticket>();
  /** answers read whose interaction is not over yet */
  private readonly answered = new Set<Ticket>();
  /** running session/prompt requests of the client: id → session */
  private readonly runningPrompts = new Map<string, string>();
  /** of those, the ones a later cancel of their session was read for */
  private readonly cancelledPrompts = new Set<string>();
  private warnedUntagged = false;

  constructor(
    private readonly cancelSession: (sessionId: string) => void,
    private readonly logger: Logger,
    /**
     * `$/cancel_request` of one session/prompt cancels that prompt only (adr/0036): `runs` says
     * whether its turn is the running one (then it is ordered against interaction answers like a
     * session/cancel), `cancel` cancels it. Without it the request cancels its session (the
     * transport always gives it: `wireOrderFor`).
     */
    private readonly prompts?: { runs(requestId: unknown): boolean; cancel(requestId: unknown): void },
  ) {}

  track<P extends object>(kind: InteractionKind, params: P, signal: AbortSignal): P {
    const sessionId = (params as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== "string") return params;
    const meta = (params as { _meta?: unknown })._meta;
    const tag = ++this.serial;
    const ticket: Ticket = { sessionId, kind, state: "asked", done: false, tag, ownMeta: meta !== undefined };
    ticket.over = new Promise<void>((resolve) => {
      const end = (): void => {
        if (ticket.done) return;
        ticket.done = true;
        this.answered.delete(ticket);
        this.unsent.delete(tag);
        signal.removeEventListener("abort", end);
        resolve();
      };
      this.enders.set(signal, end);
      if (signal.aborted) end();
      else signal.addEventListener("abort", end, { once: true });
    });
    if (!ticket.done) {
      this.unsent.set(tag, ticket);
      bound(this.unsent);
    }
    return { ...params, _meta: { ...(isRecord(meta) ? meta : {}), [TICKET_META_KEY]: tag } };
  }

  ended(signal: AbortSignal): void {
    this.enders.get(signal)?.();
  }

  /** every message the agent writes, right before it is written; returns what to write (the tag taken off) */
  outgoing(message: AnyMessage): AnyMessage {
    const m = message as unknown as Message;
    if (!("id" in m)) return message;
    if (typeof m.method !== "string") {
      this.runningPrompts.delete(requestKey(m.id));
      this.cancelledPrompts.delete(requestKey(m.id));
      return message;
    }
    const kind = ASKING_METHODS[m.method];
    if (kind === undefined || !isRecord(m.params)) return message;
    const params = m.params;
    const sessionId = params.sessionId;
    if (typeof sessionId !== "string") return message;
    const meta = isRecord(params._meta) ? params._meta : undefined;
    const tag = meta?.[TICKET_META_KEY];
    let ticket = typeof tag === "number" ? this.unsent.get(tag) : undefined;
    if (!ticket) {
      ticket = this.oldestUnsent(sessionId, kind);
      if (typeof tag !== "number" && !this.warnedUntagged) {
        this.warnedUntagged = true;
        this.logger.warn("an interaction request was written without its wire ticket tag; it is matched to its ticket by order");
      }
    }
    if (ticket?.tag !== undefined) this.unsent.delete(ticket.tag);
    ticket ??= { sessionId, kind, state: "asked", done: false };
    this.asked.set(requestKey(m.id), ticket);
    bound(this.asked);
    if (tag === undefined || meta === undefined) return message;
    const { [TICKET_META_KEY]: _tag, ...rest } = meta;
    const { _meta: _ours, ...others } = params;
    const cleaned = ticket.ownMeta || Object.keys(rest).length > 0 ? { ...others, _meta: rest } : others;
    return { ...m, params: cleaned } as unknown as AnyMessage;
  }

  /** every message the client wrote, read and checked (./client-messages.ts), in wire order; returns what the SDK gets */
  incoming(read: ClientMessage): Message | Promise<Message> {
    const message = read.message;
    if (read.kind === "response") return this.answer(read.id, message);
    if (read.kind === "request") {
      if (read.method === "session/prompt") {
        const sessionId = (message.params as { sessionId: string }).sessionId;
        this.runningPrompts.set(requestKey(read.id), sessionId);
        bound(this.runningPrompts);
      }
      return message;
    }
    let sessionId: string | undefined;
    // the params of both were checked by readClientMessage
    if (read.method === "session/cancel") sessionId = (message.params as { sessionId: string }).sessionId;
    if (read.method === "$/cancel_request") {
      const requestId = (message.params as { requestId: unknown }).requestId;
      sessionId = this.runningPrompts.get(requestKey(requestId));
      if (sessionId !== undefined && this.prompts) return this.cancelPrompt(sessionId, requestId, message);
    }
    return sessionId === undefined ? message : this.cancel(sessionId, message);
  }

  private oldestUnsent(sessionId: string, kind: InteractionKind): Ticket | undefined {
    for (const ticket of this.unsent.values()) if (ticket.sessionId === sessionId && ticket.kind === kind) return ticket;
    return undefined;
  }

  private answer(id: unknown, message: Message): Message {
    const key = requestKey(id);
    const ticket = this.asked.get(key);
    if (!ticket) return message;
    this.asked.delete(key);
    if (ticket.state === "stale") {
      this.logger.info("client answer read after session/cancel; passed on as cancelled", { sessionId: ticket.sessionId });
      return { jsonrpc: "2.0", id, result: CANCELLED_RESULT[ticket.kind] };
    }
    ticket.state = "answered";
    if (!ticket.done && ticket.over) this.answered.add(ticket);
    return message;
  }

  cancelledOnWire(requestId: unknown): boolean {
    return this.cancelledPrompts.has(requestKey(requestId));
  }

  /**
   * `$/cancel_request` of one prompt: only it is marked cancelled on the wire; when its turn is the
   * running one, the session's open interactions are its own, so they are ordered as for a cancel.
   */
  private cancelPrompt(sessionId: string, requestId: unknown, message: Message): Message | Promise<Message> {
    this.cancelledPrompts.add(requestKey(requestId));
    const prompts = this.prompts!;
    const apply = (): Message => {
      try {
        prompts.cancel(requestId);
      } catch (error) {
        this.logger.warn("a prompt's cancel at the transport failed; the SDK handler still runs", { sessionId, error: String(error) });
      }
      return message;
    };
    if (!prompts.runs(requestId)) return apply();
    return this.afterEarlierAnswers(sessionId, apply);
  }

  private cancel(sessionId: string, message: Message): Message | Promise<Message> {
    for (const [id, promptSession] of this.runningPrompts) if (promptSession === sessionId) this.cancelledPrompts.add(id);
    for (const id of this.cancelledPrompts) {
      if (this.cancelledPrompts.size <= MAX_TRACKED) break;
      this.cancelledPrompts.delete(id);
    }
    const apply = (): Message => {
      try {
        this.cancelSession(sessionId);
      } catch (error) {
        this.logger.warn("cancel at the transport failed; the SDK handler still runs", { sessionId, error: String(error) });
      }
      return message;
    };
    return this.afterEarlierAnswers(sessionId, apply);
  }

  /** Every interaction of the session still asked becomes stale; `apply` runs once the answers read earlier were consumed. */
  private afterEarlierAnswers(sessionId: string, apply: () => Message): Message | Promise<Message> {
    for (const ticket of this.asked.values()) if (ticket.sessionId === sessionId && ticket.state === "asked") ticket.state = "stale";
    const earlier = [...this.answered].filter((t) => t.sessionId === sessionId).map((t) => t.over!);
    if (earlier.length === 0) return apply();
    let timer: NodeJS.Timeout | undefined;
    const safety = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.error("an answered interaction did not end; applying session/cancel anyway", { sessionId });
        resolve();
      }, CONSUME_SAFETY_MS);
      timer.unref();
    });
    return Promise.race([Promise.all(earlier), safety]).then(() => {
      clearTimeout(timer);
      return apply();
    });
  }
}

/** what the wire order needs of the agent it serves (v1 or v2) */
export interface WireOrderAgent {
  cancelSession(sessionId: string): void;
  /** `$/cancel_request` of one session/prompt: that prompt only (adr/0036) */
  cancelPrompt(requestId: unknown): void;
  promptRuns(requestId: unknown): boolean;
}

/**
 * The transport's wire order for an agent of either protocol: `session/cancel` cancels the
 * session's work, `$/cancel_request` of one session/prompt that prompt only (adr/0036; on v2 too,
 * review 2026-12-07 #12). `agent` is read when a cancel is, so it may be bound after this.
 */
export function wireOrderFor(agent: () => WireOrderAgent, logger: Logger): WireOrder {
  return new WireOrder((sessionId) => agent().cancelSession(sessionId), logger, {
    runs: (requestId) => agent().promptRuns(requestId),
    cancel: (requestId) => agent().cancelPrompt(requestId),
  });
}
