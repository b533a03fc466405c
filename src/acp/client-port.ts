/** `ClientPort` on top of the SDK's AgentContext: the only way the engine reaches the client. */
import * as acp from "@agentclientprotocol/sdk";
import type { ClientPort } from "../session/client-port.js";
import type { InteractionTracker } from "./wire-order.js";

export class AcpClientPort implements ClientPort {
  capabilities: acp.ClientCapabilities = {};
  /** `clientCapabilities.subagents`, read from the raw initialize params (`unstableClientCapabilities`, ./initialize.ts) */
  subagents = false;

  constructor(
    private readonly client: acp.AgentContext,
    private readonly tracker?: InteractionTracker,
  ) {}

  sessionUpdate(notification: acp.SessionNotification): Promise<void> {
    return this.client.notify(acp.methods.client.session.update, notification);
  }

  requestPermission(params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    const sent = this.tracker ? this.tracker.track("permission", params, signal) : params;
    return this.client.request(acp.methods.client.session.requestPermission, sent, {
      cancellationSignal: signal,
      stopWaitingOnCancel: true,
    });
  }

  createElicitation(params: acp.CreateElicitationRequest, signal: AbortSignal): Promise<acp.CreateElicitationResponse> {
    const sent = this.tracker ? this.tracker.track("elicitation", params, signal) : params;
    return this.client.request(acp.methods.client.elicitation.create, sent, { cancellationSignal: signal, stopWaitingOnCancel: true });
  }

  interactionEnded(signal: AbortSignal): void {
    this.tracker?.ended(signal);
  }
}
