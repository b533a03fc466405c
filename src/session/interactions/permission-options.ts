/**
 * Native permission options → ACP permission options, one to one (docs/zcode-host.md §6.1).
 *
 * The ACP kind is derived from the native `response`, never from the native `kind` string:
 * decision allow/deny × once/always (always = a non-empty `permissionUpdates`). Only the four
 * standard ACP kinds are emitted. Options whose decision is `escalate`, `modify` or anything
 * else are not offered (ADR 0006): ACP has no kind for them and a client (or its auto-accept)
 * would present them as a plain allow or deny.
 */
import type { PermissionOption, PermissionOptionKind } from "@agentclientprotocol/sdk";
import type { NativePermissionOption } from "./native-requests.js";

export interface MappedOption {
  native: NativePermissionOption;
  acp: PermissionOption;
}

export interface OptionMapping {
  /** offered to the client, in native order */
  offered: MappedOption[];
  /** native options not offered (escalate, modify, unknown decisions) */
  skipped: NativePermissionOption[];
  /** the real native deny option used when the interaction is withdrawn; prefers a one-time deny */
  denyOption: NativePermissionOption | undefined;
  /** two native options share one optionId: the mapping is ambiguous and must not be used */
  duplicateIds: boolean;
}

function hasUpdates(option: NativePermissionOption): boolean {
  const updates = option.response.permissionUpdates;
  return Array.isArray(updates) && updates.length > 0;
}

function acpKindOf(option: NativePermissionOption): PermissionOptionKind | undefined {
  const always = hasUpdates(option);
  switch (option.response.decision) {
    case "allow":
      return always ? "allow_always" : "allow_once";
    case "deny":
      return always ? "reject_always" : "reject_once";
    default:
      return undefined;
  }
}

export function mapPermissionOptions(options: readonly NativePermissionOption[]): OptionMapping {
  const offered: MappedOption[] = [];
  const skipped: NativePermissionOption[] = [];
  const seen = new Set<string>();
  let duplicateIds = false;
  let denyOnce: NativePermissionOption | undefined;
  let denyAlways: NativePermissionOption | undefined;
  for (const native of options) {
    if (seen.has(native.optionId)) duplicateIds = true;
    seen.add(native.optionId);
    const kind = acpKindOf(native);
    if (kind === undefined) {
      skipped.push(native);
      continue;
    }
    if (kind === "reject_once" && denyOnce === undefined) denyOnce = native;
    if (kind === "reject_always" && denyAlways === undefined) denyAlways = native;
    offered.push({ native, acp: { optionId: native.optionId, name: native.name || native.optionId, kind } });
  }
  return { offered, skipped, denyOption: denyOnce ?? denyAlways, duplicateIds };
}

/** the offered option with this id, or undefined (an id the client made up is refused) */
export function findOffered(mapping: OptionMapping, optionId: unknown): MappedOption | undefined {
  if (typeof optionId !== "string") return undefined;
  return mapping.offered.find((m) => m.native.optionId === optionId);
}
