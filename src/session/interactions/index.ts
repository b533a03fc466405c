/** Public entry of the interaction broker (stub; real implementation follows). */
import type { InteractionBroker, InteractionBrokerOptions } from "./types.js";

export type { InteractionBroker, InteractionBrokerOptions, InteractionContext, WithdrawReason } from "./types.js";

export function createInteractionBroker(options: InteractionBrokerOptions): InteractionBroker {
  void options;
  return {
    handlePermission() {},
    handleUserInput() {},
    handleProviderHeaders() {},
    async withdrawAll() {},
    pendingCount() {
      return 0;
    },
  };
}
