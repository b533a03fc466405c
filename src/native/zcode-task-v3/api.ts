/**
 * The zcode-task-v3 line (ZCode 4.0.0, expected; adr/0024, docs/zcode-host.md §16): a v2 host
 * without the legacy `sendPrompt`, `onDynamicSessionEvent` and `zcode-task` answers. Sessions are
 * still created, resumed, listed, read and closed through the non-V4 calls ZCode keeps, and their
 * settings and catalogue read as on v2; everything about a turn goes through V4: input
 * (`sendText`), reading (the conversation subscription, src/native/v4-read/), answers
 * (`resolveInteraction`), the stop, and the history (rows pages). Provider runtime header
 * requests, which are not V4, come from the workspace's header listener (./provider-headers.ts)
 * into the session's subscription and are answered with `respondProviderRuntimeHeaders`.
 */
import type { HostClient, HostEventSink, HostSubscription } from "../../host/types.js";
import type { BridgeError } from "../../util/errors.js";
import type { SessionRef } from "../native-api.js";
import type { LineOptions } from "../shared/task-line-api.js";
import { TaskV2Api } from "../zcode-task-v2/api.js";
import { HeaderTurnOrder, ProviderHeaderRoutes } from "./provider-headers.js";

export class TaskV3Api extends TaskV2Api {
  override readonly lineId: string = "zcode-task-v3";
  private readonly headers: ProviderHeaderRoutes;

  constructor(host: HostClient, options: LineOptions = {}) {
    // the only read path this line has
    super(host, { ...options, readPath: "v4" });
    this.headers = new ProviderHeaderRoutes(host, this.logger, (params) => this.declineProviderHeaders(params));
  }

  /**
   * The conversation subscription, with the session's provider header requests routed into the
   * same sink (the header route first: a request ZCode replays at once finds it), each after the
   * conversation showed its turn (HeaderTurnOrder). The sink ends once, by whichever ends first;
   * its end or the dispose detaches the route and declines what was held, so a request of the
   * session is answered once, never swallowed. An ended header route ends the sink and disposes
   * the conversation subscription.
   */
  override async subscribeV4(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    const state: { ended: boolean; detach?: () => void; incarnation?: number; conversation?: HostSubscription } = { ended: false };
    const finish = (): void => {
      state.detach?.();
      const held = order.end();
      // held requests are answered to the host they came from, never to its successor
      if (held.length === 0) return;
      if (state.incarnation !== this.host.incarnation) {
        this.logger.warn("provider header requests held at a host exit: not answered", { count: held.length });
        return;
      }
      for (const event of held) this.headers.declineHeld(params.workspacePath, event);
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
    state.detach = await this.headers.attach(params.workspacePath, {
      sessionId: params.sessionId,
      deliver: (event) => order.request(event),
      end: (error: BridgeError) => {
        once.onEnd(error);
        void state.conversation?.dispose();
      },
    });
    state.incarnation = this.host.incarnation;
    let subscription: HostSubscription;
    try {
      subscription = await this.openV4(params, once);
    } catch (error) {
      state.ended = true;
      finish();
      throw error;
    }
    state.conversation = subscription;
    // the header listener (or the conversation) ended while the conversation was subscribing
    if (state.ended) void subscription.dispose();
    return {
      id: subscription.id,
      incarnation: subscription.incarnation,
      dispose: async () => {
        state.ended = true;
        finish();
        await subscription.dispose();
      },
    };
  }
}
