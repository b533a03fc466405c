/**
 * `permission.request` → `session/request_permission` → `respondPermission` (docs/zcode-host.md §6.1).
 * ExitPlanMode permissions are plan approvals and go to plan-flow.ts.
 */
import type { PermissionOption, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { BridgeError, describeError } from "../../util/errors.js";
import { permissionToolCall, showToolCall } from "./client-updates.js";
import type { NativePermissionRequest } from "./native-requests.js";
import type { PendingInteraction } from "./pending.js";
import { findOffered, mapPermissionOptions, type OptionMapping } from "./permission-options.js";
import { interactionKey } from "./pending.js";
import type { PendingRegistry } from "./registry.js";
import type { InteractionContext } from "./types.js";

function toolLabel(req: { toolName: string | undefined }): string {
  return req.toolName ? `the ${req.toolName} tool` : "a tool";
}

export function noDenyError(req: NativePermissionRequest): BridgeError {
  return new BridgeError(
    "INTERACTION_UNSUPPORTED",
    `ZCode's permission request for ${toolLabel(req)} offers no deny option, and it was not approved; the turn was stopped instead of allowing it`,
    { details: { requestId: req.requestId } },
  );
}

/**
 * Checks shared by ordinary and plan permissions. Returns the option mapping, or undefined
 * after failing the turn (zero options, ambiguous ids: nothing can be answered safely).
 */
function mapOrFail(req: NativePermissionRequest, ctx: InteractionContext, registry: PendingRegistry): OptionMapping | undefined {
  const key = interactionKey("permission", ctx.incarnation, ctx.sessionId, req.requestId);
  if (req.options.length === 0) {
    registry.markHandled(key);
    ctx.failTurn(
      new BridgeError(
        "NATIVE_PROTOCOL_ERROR",
        `ZCode asked for permission to use ${toolLabel(req)} without any valid option; nothing was allowed and the turn was stopped`,
        { details: { requestId: req.requestId, invalidOptions: req.invalidOptions } },
      ),
    );
    return undefined;
  }
  const mapping = mapPermissionOptions(req.options);
  if (mapping.duplicateIds) {
    registry.markHandled(key);
    ctx.failTurn(
      new BridgeError(
        "NATIVE_PROTOCOL_ERROR",
        `ZCode's permission request for ${toolLabel(req)} repeats an option id, so no answer is unambiguous; nothing was allowed and the turn was stopped`,
        { details: { requestId: req.requestId } },
      ),
    );
    return undefined;
  }
  if (mapping.skipped.length > 0) {
    ctx.logger.info("permission: options not offered (escalate/modify/unknown decision)", {
      requestId: req.requestId,
      skipped: mapping.skipped.map((o) => ({ optionId: o.optionId, decision: o.response.decision })),
    });
  }
  return mapping;
}

/**
 * Map the native options and open the pending interaction whose fallback is the real deny
 * option (if any); undefined when the request was already failed closed by `mapOrFail`.
 */
export function openPermission(
  req: NativePermissionRequest,
  ctx: InteractionContext,
  registry: PendingRegistry,
  label: string,
): { mapping: OptionMapping; pending: PendingInteraction } | undefined {
  const mapping = mapOrFail(req, ctx, registry);
  if (!mapping) return undefined;
  const pending = registry.open({
    ctx,
    family: "permission",
    requestId: req.requestId,
    label,
    fallback: mapping.denyOption ? { method: "permission", optionId: mapping.denyOption.optionId } : undefined,
  });
  return { mapping, pending };
}

export function startPermission(req: NativePermissionRequest, ctx: InteractionContext, registry: PendingRegistry): void {
  const opened = openPermission(req, ctx, registry, "permission");
  if (!opened) return;
  const { mapping, pending } = opened;
  if (mapping.offered.length === 0) {
    void pending.fallBack("no option can be offered to the client", noDenyError(req));
    return;
  }
  const toolCall = permissionToolCall(ctx, req.toolCallId ?? `permission-${req.requestId}`, req);
  const resolve = (optionId: string): string | undefined => findOffered(mapping, optionId)?.native.optionId;
  void (async () => {
    if (!pending.shouldAsk) return;
    await showToolCall(ctx, toolCall);
    await askPermission(
      ctx,
      pending,
      toolCall,
      mapping.offered.map((m) => m.acp),
      resolve,
      noDenyError(req),
    );
  })().catch((error: unknown) => void pending.fallBack(`internal error: ${describeError(error)}`, noDenyError(req)));
}

/**
 * Ask `session/request_permission` and settle the pending interaction: a selected, offered
 * option is answered (`resolveOption` maps the ACP option id to the native one); anything
 * else (cancelled, unknown id, client error) takes the fallback (deny) or fails the turn.
 */
export async function askPermission(
  ctx: InteractionContext,
  pending: PendingInteraction,
  toolCall: ToolCallUpdate,
  options: PermissionOption[],
  resolveOption: (optionId: string) => string | undefined,
  ifNoDeny: BridgeError,
): Promise<void> {
  const asked = await pending.askClient(
    (signal) => ctx.client.requestPermission({ sessionId: ctx.clientSessionId ?? ctx.sessionId, toolCall, options }, signal),
    ifNoDeny,
  );
  if (asked === undefined) return;
  const outcome = asked.response?.outcome;
  if (outcome?.outcome === "selected") {
    const nativeId = resolveOption(outcome.optionId);
    if (nativeId !== undefined) {
      await pending.answer({ method: "permission", optionId: nativeId });
      return;
    }
    ctx.logger.warn("permission: client chose an option that was not offered; refused", {
      requestId: pending.requestId,
    });
    await pending.fallBack("client chose an option that was not offered", ifNoDeny);
    return;
  }
  await pending.fallBack(outcome?.outcome === "cancelled" ? "client cancelled" : "client answer malformed", ifNoDeny);
}
