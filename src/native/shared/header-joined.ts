/**
 * A session's V4 conversation subscription with its provider runtime header requests joined in
 * (docs/zcode-host.md §16.7). The requests are not V4: they come from another source — the
 * workspace's header listener on the zcode-task-v3 line, the session's legacy stream on a legacy
 * line read through V4 — and each reaches the session's sink after the conversation showed its
 * turn (HeaderTurnOrder). The sink ends once, by whichever side ends first, and that end ends the
 * other side too. A request still held when the subscription ends is declined to the host it came
 * from (never to a successor after a host exit), so each request gets one answer, never none.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import type { BridgeError } from "../../util/errors.js";
import { HeaderTurnOrder } from "../zcode-task-v3/provider-headers.js";

/** where a session's header requests come from */
export interface HeaderSource {
  /**
   * Start handing this session's header requests to `deliver`; `end` when the source ends. Resolves
   * with the detach (called once, when the joined subscription ends).
   */
  attach(deliver: (event: unknown) => void | Promise<void>, end: (error: BridgeError) => void): Promise<() => void | Promise<void>>;
  /** answer a request that was still held when the joined subscription ended */
  declineHeld(event: unknown): void;
}

/** Open `open`'s conversation subscription with `source`'s header requests joined into `sink` (see the header). */
export async function joinHeaderRequests(
  host: HostClient,
  logger: Logger,
  source: HeaderSource,
  open: (sink: HostEventSink) => Promise<HostSubscription>,
  sink: HostEventSink,
): Promise<HostSubscription> {
  const state: { ended: boolean; detach?: () => void | Promise<void>; incarnation?: number; conversation?: HostSubscription } = {
    ended: false,
  };
  let detached: void | Promise<void> = undefined;
  const finish = (): void => {
    const detach = state.detach;
    state.detach = undefined;
    if (detach) detached = detach();
    const held = order.end();
    // held requests are answered to the host they came from, never to its successor
    if (held.length === 0) return;
    if (state.incarnation !== host.incarnation) {
      logger.warn("provider header requests held at a host exit: not answered", { count: held.length });
      return;
    }
    for (const event of held) source.declineHeld(event);
  };
  const once: HostEventSink = {
    onEvent: (event) => {
      if (state.ended) return;
      const result = sink.onEvent(event);
      order.shown(event);
      return result;
    },
    onEnd: (error) => {
      if (state.ended) return;
      state.ended = true;
      finish();
      sink.onEnd(error);
    },
  };
  const order = new HeaderTurnOrder((event) => once.onEvent(event));
  state.detach = await source.attach(
    (event) => order.request(event),
    (error) => {
      once.onEnd(error);
      void state.conversation?.dispose();
    },
  );
  state.incarnation = host.incarnation;
  let conversation: HostSubscription;
  try {
    conversation = await open(once);
  } catch (error) {
    state.ended = true;
    finish();
    await Promise.resolve(detached).catch(() => undefined);
    throw error;
  }
  state.conversation = conversation;
  // the header source (or the conversation) ended while the conversation was subscribing
  if (state.ended) void conversation.dispose();
  return {
    id: conversation.id,
    incarnation: conversation.incarnation,
    dispose: async () => {
      state.ended = true;
      finish();
      await Promise.all([detached, conversation.dispose()]);
    },
  };
}
