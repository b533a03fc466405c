/**
 * The interaction broker: one per ACP connection. Routes the three native reverse requests,
 * de-duplicates re-announcements, keeps the book of pending interactions and withdraws them.
 * See adr/0006-interaction-boundary.md.
 */
import { BridgeError, describeError } from "../../util/errors.js";
import { parsePermissionRequest, parseProviderHeadersRequest, parseUserInputRequest, type Parsed } from "./native-requests.js";
import { interactionKey, type RequestFamily } from "./pending.js";
import { startPermission } from "./permission-flow.js";
import { startPlanInput, startPlanPermission } from "./plan-flow.js";
import { declineProviderHeaders } from "./provider-headers.js";
import { startQuestions } from "./question-flow.js";
import { PendingRegistry } from "./registry.js";
import {
  CLIENT_CANCEL_GRACE_MS,
  type InteractionBroker,
  type InteractionBrokerOptions,
  type InteractionContext,
  type WithdrawReason,
} from "./types.js";

export function createInteractionBroker(options: InteractionBrokerOptions): InteractionBroker {
  const logger = options.logger.child("interactions");
  const registry = new PendingRegistry({ clientCancelGraceMs: options.clientCancelGraceMs ?? CLIENT_CANCEL_GRACE_MS });

  /** common gate: stale host, malformed request, re-announcement. Returns the parsed request or undefined. */
  function admit<T extends { requestId: string }>(
    family: RequestFamily,
    parsed: Parsed<T>,
    ctx: InteractionContext,
    onMalformed: (requestId: string | undefined, problem: string) => void,
  ): T | undefined {
    if (ctx.native.incarnation !== ctx.incarnation) {
      logger.warn("request from an older host incarnation ignored", {
        family,
        sessionId: ctx.sessionId,
        incarnation: ctx.incarnation,
        current: ctx.native.incarnation,
      });
      return undefined;
    }
    const requestId = parsed.ok ? parsed.value.requestId : parsed.requestId;
    const key = requestId === undefined ? undefined : interactionKey(family, ctx.incarnation, ctx.sessionId, requestId);
    if (key !== undefined && registry.seen(key)) {
      logger.debug("re-announced request ignored", { family, sessionId: ctx.sessionId, requestId });
      return undefined;
    }
    if (!parsed.ok) {
      if (key !== undefined) registry.markHandled(key);
      logger.warn("malformed request", { family, sessionId: ctx.sessionId, requestId, problem: parsed.problem });
      onMalformed(requestId, parsed.problem);
      return undefined;
    }
    if (parsed.value && "sessionId" in parsed.value) {
      const own = (parsed.value as { sessionId?: unknown }).sessionId;
      if (typeof own === "string" && own !== ctx.sessionId) {
        logger.warn("request names another session id; answering for the subscribed session", {
          family,
          sessionId: ctx.sessionId,
          requestSessionId: own,
          requestId,
        });
      }
    }
    return parsed.value;
  }

  function protocolError(what: string, problem: string): BridgeError {
    return new BridgeError(
      "NATIVE_PROTOCOL_ERROR",
      `ZCode sent a malformed ${what} request (${problem}); nothing was allowed and the turn was stopped`,
    );
  }

  return {
    handlePermission(request, ctx) {
      const req = admit("permission", parsePermissionRequest(request), ctx, (_id, problem) =>
        ctx.failTurn(protocolError("permission", problem)),
      );
      if (!req) return;
      if (req.toolName === "ExitPlanMode") startPlanPermission(req, ctx, registry);
      else startPermission(req, ctx, registry);
    },

    handleUserInput(request, ctx) {
      const req = admit("userInput", parseUserInputRequest(request), ctx, (requestId, problem) => {
        if (requestId === undefined) {
          ctx.failTurn(protocolError("user input", problem));
          return;
        }
        const pending = registry.open({
          ctx,
          family: "userInput",
          requestId,
          label: "question",
          fallback: { method: "elicitation", action: "decline" },
        });
        void pending.answerAndFailTurn({ method: "elicitation", action: "decline" }, protocolError("user input", problem));
      });
      if (!req) return;
      if (req.planApproval) startPlanInput(req, ctx, registry);
      else startQuestions(req, ctx, registry);
    },

    handleProviderHeaders(request, ctx) {
      const parsed = parseProviderHeadersRequest(request);
      const req = admit("providerHeaders", parsed, ctx, (requestId, problem) => {
        if (requestId === undefined) ctx.failTurn(protocolError("provider headers", problem));
        else void declineProviderHeaders({ requestId, providerId: undefined }, ctx);
      });
      if (!req) return;
      registry.markHandled(interactionKey("providerHeaders", ctx.incarnation, ctx.sessionId, req.requestId));
      void declineProviderHeaders(req, ctx).catch((error: unknown) =>
        logger.error("provider headers: unexpected failure", { error: describeError(error) }),
      );
    },

    async withdrawAll(sessionId: string, reason: WithdrawReason) {
      const pending = registry.forSession(sessionId);
      if (pending.length > 0) logger.info("withdrawing pending interactions", { sessionId, reason, count: pending.length });
      // also wait for answers already on their way (ended by another path, e.g. the turn end), so
      // that a caller about to close the session or stop the host knows the host has taken them
      const finishing = registry.finishingFor(sessionId);
      await Promise.all([...pending.map((p) => p.withdraw(reason)), ...finishing.map((p) => p.finished)]);
    },

    pendingCount(sessionId?: string) {
      return registry.count(sessionId);
    },

    clientRequestCount() {
      return registry.clientRequests();
    },
  };
}
