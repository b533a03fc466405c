/** `ClientPort` on top of the SDK's AgentContext: the only way the engine reaches the client. */
import * as acp from "@agentclientprotocol/sdk";
import type { ClientPort } from "../session/client-port.js";
import type { InteractionTracker } from "./wire-order.js";

export class AcpClientPort implements ClientPort {
  capabilities: acp.ClientCapabilities = {};

  constructor(
    private readonly client: acp.AgentContext,
    private readonly tracker?: InteractionTracker,
  ) {}

  sessionUpdate(notification: acp.SessionNotification): Promise<void> {
    return this.client.notify(acp.methods.client.session.update, notification);
  }

  requestPermission(params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse> {
    this.tracker?.track(params, signal);
    return this.client.request(acp.methods.client.session.requestPermission, params, {
      cancellationSignal: signal,
      stopWaitingOnCancel: true,
    });
  }

  createElicitation(params: acp.CreateElicitationRequest, signal: AbortSignal): Promise<acp.CreateElicitationResponse> {
    this.tracker?.track(params, signal);
    return this.client.request(acp.methods.client.elicitation.create, params, { cancellationSignal: signal, stopWaitingOnCancel: true });
  }

  interactionEnded(signal: AbortSignal): void {
    this.tracker?.ended(signal);
  }
}
