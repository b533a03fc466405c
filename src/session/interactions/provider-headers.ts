/**
 * `providerRuntimeHeaders.request` (docs/zcode-host.md §6.4): the host needs headers only the
 * desktop renderer can produce (the Start Plan captcha). Headless, answer
 * `headersApplied: false` at once, then stop the turn with a clear message. The ACP client is
 * never asked for header values.
 */
import { BridgeError, describeError } from "../../util/errors.js";
import type { NativeProviderHeadersRequest } from "./native-requests.js";
import type { InteractionContext } from "./types.js";

const PROVIDER_HEADERS_HOST_MESSAGE =
  "zcode-acp runs without the ZCode desktop window and cannot provide provider runtime headers (captcha)";

const PROVIDER_HEADERS_USER_MESSAGE =
  "this account or model needs a captcha that only the ZCode desktop app can show; switch to a coding-plan model or use the app";

export async function declineProviderHeaders(
  req: Pick<NativeProviderHeadersRequest, "requestId" | "providerId">,
  ctx: InteractionContext,
): Promise<void> {
  let sent: Promise<unknown> = Promise.resolve();
  if (ctx.native.incarnation === ctx.incarnation) {
    // issued before failTurn (so the host sees it before stopGeneration), not awaited before it
    sent = ctx.native
      .declineProviderHeaders({
        workspacePath: ctx.workspacePath,
        sessionId: ctx.sessionId,
        requestId: req.requestId,
        message: PROVIDER_HEADERS_HOST_MESSAGE,
      })
      .catch((error: unknown) =>
        ctx.logger.warn("provider headers: answering host failed", {
          sessionId: ctx.sessionId,
          requestId: req.requestId,
          error: describeError(error),
        }),
      );
  } else {
    ctx.logger.warn("provider headers: host restarted; not answered", { requestId: req.requestId });
  }
  ctx.failTurn(
    new BridgeError("PROVIDER_HEADERS_UNSUPPORTED", PROVIDER_HEADERS_USER_MESSAGE, {
      details: { requestId: req.requestId, ...(req.providerId ? { providerId: req.providerId } : {}) },
    }),
  );
  await sent;
}
