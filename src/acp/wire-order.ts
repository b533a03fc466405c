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
 */
import type { AnyMessage } from "@agentclientprotocol/sdk";
import type { Logger } from "../log/logger.js";

type Message = Record<string, unknown>;

const ASKING_METHODS: Record<string, "permission" | "elicitation"> = {
  "session/request_permission": "permission",
  "elicitation/create": "elicitation",
};
/** what a stale answer becomes: the client's own "cancelled" answer of each method */
const CANCELLED_RESULT = {
  permission: { outcome: { outcome: "cancelled" } },
  elicitation: { action: "cancel" },
} as const;
/** bound on remembered requests whose interaction ended without a client answer */
const MAX_TRACKED = 1024;
/** a consumer that never ends its interaction must not stop the input: fail-safe, not synchronisation */
const CONSUME_SAFETY_MS = 10_000;

interface Ticket {
  sessionId: string;
  kind: "permission" | "elicitation";
  state: "asked" | "answered" | "stale";
  /** resolves when the interaction that asked is over (its signal aborted); undefined when untracked */
  over?: Promise<void>;
  done: boolean;
}

/** What the client port tells the tracker about the interaction requests it sends. */
export interface InteractionTracker {
  /** call right before sending the request with these params and the interaction's client signal */
  track(params: object, signal: AbortSignal): void;
  /** the interaction that asked with `signal` is over (also assumed when the signal aborts) */
  ended(signal: AbortSignal): void;
}

const idKey = (id: unknown): string => JSON.stringify(id);

export class WireOrder implements InteractionTracker {
  /** params object of a request about to be sent → its ticket (matched when the SDK writes it) */
  private readonly byParams = new WeakMap<object, Ticket>();
  /** the interaction's client signal → how to mark its ticket over */
  private readonly enders = new WeakMap<AbortSignal, () => void>();
  /** interaction requests on the wire, not answered yet, by JSON-RPC id */
  private readonly asked = new Map<string, Ticket>();
  /** answers read whose interaction is not over yet */
  private readonly answered = new Set<Ticket>();
  /** running session/prompt requests of the client: id → session */
  private readonly prompts = new Map<string, string>();
  private warnedUntracked = false;

  constructor(
    private readonly cancelSession: (sessionId: string) => void,
    private readonly logger: Logger,
  ) {}

  track(params: object, signal: AbortSignal): void {
    const sessionId = (params as { sessionId?: unknown }).sessionId;
    if (typeof sessionId !== "string") return;
    const ticket: Ticket = { sessionId, kind: "permission", state: "asked", done: false };
    ticket.over = new Promise<void>((resolve) => {
      const end = (): void => {
        if (ticket.done) return;
        ticket.done = true;
        this.answered.delete(ticket);
        signal.removeEventListener("abort", end);
        resolve();
      };
      this.enders.set(signal, end);
      if (signal.aborted) end();
      else signal.addEventListener("abort", end, { once: true });
    });
    this.byParams.set(params, ticket);
  }

  ended(signal: AbortSignal): void {
    this.enders.get(signal)?.();
  }

  /** every message the agent writes, right before it is written */
  outgoing(message: AnyMessage): void {
    const m = message as unknown as Message;
    if (!("id" in m)) return;
    if (typeof m.method !== "string") {
      this.prompts.delete(idKey(m.id));
      return;
    }
    const kind = ASKING_METHODS[m.method];
    if (kind === undefined || typeof m.params !== "object" || m.params === null) return;
    let ticket = this.byParams.get(m.params);
    if (!ticket) {
      const sessionId = (m.params as { sessionId?: unknown }).sessionId;
      if (typeof sessionId !== "string") return;
      if (!this.warnedUntracked) {
        this.warnedUntracked = true;
        this.logger.warn("an interaction request was sent without its tracker ticket; its answer is ordered against cancels by id only");
      }
      ticket = { sessionId, kind, state: "asked", done: false };
    }
    ticket.kind = kind;
    this.asked.set(idKey(m.id), ticket);
    while (this.asked.size > MAX_TRACKED) {
      const oldest = this.asked.keys().next().value;
      if (oldest === undefined) break;
      this.asked.delete(oldest);
    }
  }

  /** every message the client wrote, in wire order; returns what the SDK gets */
  incoming(message: Message): Message | Promise<Message> {
    if (typeof message.method !== "string") return "id" in message ? this.answer(message) : message;
    if (message.method === "session/prompt" && "id" in message) {
      const sessionId = (message.params as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sessionId === "string") this.prompts.set(idKey(message.id), sessionId);
      return message;
    }
    if ("id" in message) return message;
    let sessionId: string | undefined;
    const params = message.params as Record<string, unknown> | undefined;
    if (message.method === "session/cancel" && typeof params?.sessionId === "string") sessionId = params.sessionId;
    if (message.method === "$/cancel_request" && params && "requestId" in params) sessionId = this.prompts.get(idKey(params.requestId));
    return sessionId === undefined ? message : this.cancel(sessionId, message);
  }

  private answer(message: Message): Message {
    const key = idKey(message.id);
    const ticket = this.asked.get(key);
    if (!ticket) return message;
    this.asked.delete(key);
    if (ticket.state === "stale") {
      this.logger.info("client answer read after session/cancel; passed on as cancelled", { sessionId: ticket.sessionId });
      return { jsonrpc: "2.0", id: message.id, result: CANCELLED_RESULT[ticket.kind] };
    }
    ticket.state = "answered";
    if (!ticket.done && ticket.over) this.answered.add(ticket);
    return message;
  }

  private cancel(sessionId: string, message: Message): Message | Promise<Message> {
    for (const ticket of this.asked.values()) if (ticket.sessionId === sessionId && ticket.state === "asked") ticket.state = "stale";
    const earlier = [...this.answered].filter((t) => t.sessionId === sessionId).map((t) => t.over!);
    const apply = (): Message => {
      try {
        this.cancelSession(sessionId);
      } catch (error) {
        this.logger.warn("cancel at the transport failed; the SDK handler still runs", { sessionId, error: String(error) });
      }
      return message;
    };
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
