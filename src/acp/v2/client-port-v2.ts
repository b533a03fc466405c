/**
 * `ClientPort` for an ACP v2 client (adr/0028): the session layer's v1 updates and questions,
 * translated (./translate.ts) and sent on the SDK's v2 AgentContext. The session layer is the
 * same one v1 uses; only this port knows the client speaks v2.
 *
 * Message ids: a v2 chunk needs a `messageId`. Where the session layer gave none, the chunks of a
 * turn share one id per message kind (the agent's answer, its thought), fresh for each turn; in a
 * replay, a user chunk after the agent's starts a new exchange (fresh ids again).
 */
import { randomUUID } from "node:crypto";
import type * as v1 from "@agentclientprotocol/sdk";
import type * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import type { ClientPort } from "../../session/client-port.js";
import { BridgeError } from "../../util/errors.js";
import type { InteractionTracker } from "../wire-order.js";
import { permissionRequestV2, permissionResponseV1, sessionUpdateV2, type MessageIds } from "./translate.js";

interface TurnIds {
  agent?: string;
  thought?: string;
  user?: string;
  /** the last chunk was the user's (a replayed user message): the next agent chunk starts a new exchange */
  userLast?: boolean;
}

export class V2ClientPort implements ClientPort {
  /**
   * What the session layer may use, in v1 terms: nothing of the client's (v2 has no client fs,
   * terminal or modes, and v2 elicitation is not translated yet: questions become permission
   * questions, adr/0009).
   */
  readonly capabilities: v1.ClientCapabilities = {};
  /** message ids of each session's current turn */
  private readonly turns = new Map<string, TurnIds>();

  constructor(
    private readonly client: v2.AgentContext,
    private readonly tracker?: InteractionTracker,
  ) {}

  /** A new turn of `sessionId` starts: its chunks get fresh message ids. */
  beginTurn(sessionId: string): void {
    this.turns.set(sessionId, {});
  }

  /** The session is gone: forget its ids. */
  forget(sessionId: string): void {
    this.turns.delete(sessionId);
  }

  private ids(sessionId: string): MessageIds {
    let turn = this.turns.get(sessionId);
    if (!turn) this.turns.set(sessionId, (turn = {}));
    const ids = turn;
    return {
      agent: () => (ids.agent ??= randomUUID()),
      thought: () => (ids.thought ??= randomUUID()),
      user: () => (ids.user ??= randomUUID()),
    };
  }

  sessionUpdate(notification: v1.SessionNotification): Promise<void> {
    const { sessionId } = notification;
    const isUser = notification.update.sessionUpdate === "user_message_chunk";
    const turn = this.turns.get(sessionId);
    if (isUser && turn && !turn.userLast && (turn.agent !== undefined || turn.thought !== undefined || turn.user !== undefined)) {
      this.turns.set(sessionId, {});
    }
    const update = sessionUpdateV2(notification.update, this.ids(sessionId));
    this.turns.get(sessionId)!.userLast = isUser;
    if (!update) return Promise.resolve();
    return this.send(notification.sessionId, update);
  }

  /** A v2 update of our own (`state_update`). */
  send(sessionId: string, update: v2.SessionUpdate): Promise<void> {
    return this.client.notify("session/update", { sessionId, update });
  }

  async requestPermission(params: v1.RequestPermissionRequest, signal: AbortSignal): Promise<v1.RequestPermissionResponse> {
    const request = permissionRequestV2(params);
    const sent = this.tracker ? this.tracker.track("permission", request, signal) : request;
    const response = await this.client.request("session/request_permission", sent, {
      cancellationSignal: signal,
      stopWaitingOnCancel: true,
    });
    return permissionResponseV1(response);
  }

  createElicitation(): Promise<v1.CreateElicitationResponse> {
    // never reached: `capabilities` advertises no elicitation, so the broker asks with a permission
    return Promise.reject(new BridgeError("INTERNAL", "Elicitation is not available over ACP v2 in zcode-acp."));
  }

  interactionEnded(signal: AbortSignal): void {
    this.tracker?.ended(signal);
  }
}
