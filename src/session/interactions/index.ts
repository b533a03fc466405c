/** Public entry of the interaction broker (ADR 0006). */
export { createInteractionBroker } from "./broker.js";
export { CLIENT_CANCEL_GRACE_MS } from "./types.js";
export type { InteractionBroker, InteractionBrokerOptions, InteractionContext, WithdrawReason } from "./types.js";
