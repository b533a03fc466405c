/**
 * What the broker shows the client around an interaction: the tool call a permission is
 * about, the plan markdown of a plan approval, and short explanatory messages.
 */
import type { SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { describeError } from "../../util/errors.js";
import { textContent, toolKind } from "../tool-presentation.js";
import { markdownPlanUpdate } from "../snapshot-updates.js";
import { clientSurface } from "../stream-translator.js";
import type { InteractionContext } from "./types.js";

/** the tool call of a permission request: what the engine knows, completed from the request */
export function permissionToolCall(
  ctx: InteractionContext,
  toolCallId: string,
  fallback: { toolName: string | undefined; reason: string | undefined; input: unknown },
): ToolCallUpdate {
  const known = ctx.describeToolCall(toolCallId) ?? {};
  const call: ToolCallUpdate = { ...known, toolCallId };
  if (!call.title) call.title = fallback.reason || fallback.toolName || "Tool call";
  if (!call.kind) call.kind = toolKind(fallback.toolName);
  if (call.rawInput === undefined && fallback.input !== undefined) call.rawInput = fallback.input;
  return call;
}

/**
 * Whether the client was already shown this call; when not, the engine records it as shown now
 * (adoptToolCall), so the call's own events that come later update it rather than announce it again.
 */
function isKnown(ctx: InteractionContext, call: ToolCallUpdate): boolean {
  if (ctx.adoptToolCall) return !ctx.adoptToolCall(call);
  return ctx.describeToolCall(call.toolCallId) !== undefined;
}

/**
 * Make sure the client has seen the tool call before it is asked about it: announce it
 * (`tool_call`, pending) when the engine never did, else mark it pending (awaiting approval).
 * `ctx.update` is ordered after every update the engine queued before, so awaiting it also
 * keeps the question behind the tool call's earlier updates on the wire.
 */
export async function showToolCall(ctx: InteractionContext, call: ToolCallUpdate): Promise<void> {
  const known = isKnown(ctx, { ...call, status: "pending" });
  try {
    if (known) {
      await ctx.update({ sessionUpdate: "tool_call_update", toolCallId: call.toolCallId, status: "pending" });
    } else {
      const announce: SessionUpdate = {
        sessionUpdate: "tool_call",
        toolCallId: call.toolCallId,
        title: call.title ?? "Tool call",
        status: "pending",
      };
      if (call.kind) announce.kind = call.kind;
      if (call.rawInput !== undefined) announce.rawInput = call.rawInput;
      await ctx.update(announce);
    }
  } catch (error) {
    ctx.logger.warn("showing the tool call failed", { sessionId: ctx.sessionId, error: describeError(error) });
  }
}

/** plan-approval tool call (kind switch_mode) carrying the plan markdown in content and rawInput.plan */
export function planToolCall(toolCallId: string, title: string, plan: string, input: unknown): ToolCallUpdate {
  const rawInput = typeof input === "object" && input !== null && !Array.isArray(input) ? { ...input, plan } : { plan };
  return { toolCallId, title, kind: "switch_mode", content: [textContent(plan)], rawInput };
}

/**
 * Publish the plan before asking: a `tool_call_update` when the engine already announced the
 * call, otherwise a new `tool_call` (status pending). Failures are logged, not fatal: the
 * question itself still carries the plan (permission content / elicitation message).
 */
export async function publishPlan(ctx: InteractionContext, call: ToolCallUpdate): Promise<void> {
  const known = isKnown(ctx, { ...call, status: "pending" });
  const markdown = (call.rawInput as { plan?: unknown } | undefined)?.plan;
  try {
    if (known) {
      await ctx.update({ sessionUpdate: "tool_call_update", ...call });
    } else {
      await ctx.update({
        sessionUpdate: "tool_call",
        toolCallId: call.toolCallId,
        title: call.title ?? "Plan approval",
        kind: "switch_mode",
        status: "pending",
        content: call.content ?? [],
        rawInput: call.rawInput,
      });
    }
    // a client with plan operations also gets the plan itself, by the id of its ExitPlanMode call
    if (typeof markdown === "string" && clientSurface(ctx.client.capabilities).planOps) {
      await ctx.update(markdownPlanUpdate(call.toolCallId, markdown));
    }
  } catch (error) {
    ctx.logger.warn("publishing the plan failed", { sessionId: ctx.sessionId, error: describeError(error) });
  }
}

export async function tellUser(ctx: InteractionContext, text: string): Promise<void> {
  try {
    await ctx.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  } catch (error) {
    ctx.logger.warn("sending a message to the client failed", { sessionId: ctx.sessionId, error: describeError(error) });
  }
}

export function hasFormElicitation(ctx: InteractionContext): boolean {
  const form = ctx.client.capabilities.elicitation?.form;
  return form !== undefined && form !== null;
}
