/**
 * What the session engine may ask of the ACP client. Implemented by src/acp/ on top of the
 * SDK connection; the engine itself never touches the connection (architecture rule).
 */
import type {
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
} from "@agentclientprotocol/sdk";

export interface ClientPort {
  /** capabilities the client advertised in `initialize` */
  readonly capabilities: ClientCapabilities;
  /**
   * the client advertised `clientCapabilities.subagents` (an unstable capability SDK 2.4.0's
   * stable parser strips: read from the raw initialize params, `unstableClientCapabilities` in src/acp/initialize.ts)
   */
  readonly subagents?: boolean;
  /** send a `session/update` notification; resolves when it was written */
  sessionUpdate(notification: SessionNotification): Promise<void>;
  /** `session/request_permission`; aborting the signal sends `$/cancel_request` and rejects */
  requestPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  /** `elicitation/create` (form mode only; callers check `capabilities.elicitation?.form`) */
  createElicitation(params: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>;
  /**
   * The interaction that asked with `signal` is over (answered to the host, fallen back or
   * withdrawn); called once, synchronously, before its host answer is sent. The ACP transport
   * uses it to order a session/cancel after an answer it already read (src/acp/wire-order.ts).
   */
  interactionEnded?(signal: AbortSignal): void;
}
