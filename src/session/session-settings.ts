/**
 * Applying ACP mode and config option changes natively (adr/0005): validate against what was
 * offered, call `setMode` / `setModel` / `setThoughtLevel`, apply the returned snapshot.
 */
import type { SessionConfigOption } from "@agentclientprotocol/sdk";
import type { NativeApi } from "../native/native-api.js";
import type { SessionSnapshot } from "../protocol/native-types.js";
import { BridgeError } from "../util/errors.js";
import { MODE_OPTION_ID, MODEL_OPTION_ID, THOUGHT_LEVEL_OPTION_ID } from "./session-options.js";
import type { ApplyOptions, SnapshotState } from "./snapshot-state.js";

export interface SettingsContext {
  native: NativeApi;
  where: { workspacePath: string; sessionId: string };
  state: SnapshotState;
  apply(snapshot: SessionSnapshot, how: ApplyOptions): void;
}

/** session/set_mode: the client gets `{}`, so the new option list is announced. */
export async function setSessionMode(ctx: SettingsContext, modeId: string): Promise<void> {
  const mode = ctx.state.options.mode(modeId);
  ctx.apply(await ctx.native.setMode({ ...ctx.where, mode }), { emit: true, suppress: "mode" });
}

/** session/set_config_option: answers the full list; a mode change is still announced. */
export async function setSessionConfigOption(ctx: SettingsContext, configId: string, value: string): Promise<SessionConfigOption[]> {
  const { options } = ctx.state;
  let snapshot: SessionSnapshot;
  switch (configId) {
    case MODEL_OPTION_ID:
      snapshot = await ctx.native.setModel({ ...ctx.where, model: options.modelRef(value), thoughtLevel: options.currentThoughtLevel });
      break;
    case THOUGHT_LEVEL_OPTION_ID:
      snapshot = await ctx.native.setThoughtLevel({ ...ctx.where, thoughtLevel: options.thoughtLevel(value) });
      break;
    case MODE_OPTION_ID:
      snapshot = await ctx.native.setMode({ ...ctx.where, mode: options.mode(value) });
      break;
    default:
      throw new BridgeError("INVALID_PARAMS", `Unknown config option "${configId}".`);
  }
  ctx.apply(snapshot, { emit: true, suppress: "config" });
  return ctx.state.configOptions();
}
