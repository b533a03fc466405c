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
import type { SessionRef } from "../native-api.js";
import type { LineOptions } from "../shared/task-line-api.js";
import { TaskV2Api } from "../zcode-task-v2/api.js";
import { joinHeaderRequests } from "../shared/header-joined.js";
import { ProviderHeaderRoutes } from "./provider-headers.js";

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
  override subscribeV4(params: SessionRef, sink: HostEventSink): Promise<HostSubscription> {
    return joinHeaderRequests(
      this.host,
      this.logger,
      {
        attach: (deliver, end) => this.headers.attach(params.workspacePath, { sessionId: params.sessionId, deliver, end }),
        declineHeld: (event) => this.headers.declineHeld(params.workspacePath, event),
      },
      (joined) => this.openV4(params, joined),
      sink,
    );
  }
}
