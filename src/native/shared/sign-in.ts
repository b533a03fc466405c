/**
 * The sign-in checks both lines share: `zcode-agent.initialize` must say the workspace is
 * available; "no usable provider" anywhere becomes AUTH_REQUIRED with what the user must do.
 */
import type { HostClient } from "../../host/types.js";
import { BridgeError, describeError, isBridgeError } from "../../util/errors.js";

/** What the user must do when ZCode has no usable provider (AUTH_REQUIRED). */
export const SIGN_IN_MESSAGE =
  "ZCode has no usable model provider. Open the ZCode desktop app, sign in (or set up a provider), then try again.";

export function signInRequired(details: Record<string, unknown>, cause?: unknown): BridgeError {
  return new BridgeError("AUTH_REQUIRED", SIGN_IN_MESSAGE, cause === undefined ? { details } : { details, cause });
}

interface InitializeResult {
  available?: boolean;
  reason?: string;
  reasonCode?: string;
}

/** `initialize` must report the workspace available; provider_not_ready is AUTH_REQUIRED. */
export async function requireAvailable(host: HostClient, workspacePath: string): Promise<void> {
  const init = await host.call<InitializeResult>("agent", "initialize", { workspacePath }, { timeout: "initialize" });
  if (init?.available === true) return;
  if (init?.reasonCode === "provider_not_ready") throw signInRequired({ reasonCode: init.reasonCode });
  const reason = init?.reason ? `: ${init.reason}` : "";
  throw new BridgeError("HOST_CALL_FAILED", `ZCode is not available for ${workspacePath}${reason}.`, {
    details: { reasonCode: init?.reasonCode },
  });
}

/** A sendPrompt refusal because no provider is usable (signed out meanwhile) as AUTH_REQUIRED; anything else unchanged. */
export function promptRefusal(error: unknown): unknown {
  if (
    isBridgeError(error, "HOST_CALL_FAILED") &&
    /provider_not_ready|no usable provider/i.test(`${error.message} ${JSON.stringify(error.details ?? {})}`)
  ) {
    return signInRequired({}, error);
  }
  return isBridgeError(error) ? error : new BridgeError("HOST_CALL_FAILED", describeError(error), { cause: error });
}
