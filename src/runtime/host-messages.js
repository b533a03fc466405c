// Messages the host posts to process.parentPort, as they arrive raw on worker.on("message")
// (docs/runtime-contract.md §4 step 5). The three reverse requests are refused at once. Of a
// browser-execute-request (and of a plugin-sandbox request) only `type` and `requestId` are ever read: the rest of the payload
// is not read, stored, forwarded or logged. database-startup-state is the readiness signal.

const BROWSER_UNAVAILABLE = "Browser control is unavailable in zcode-acp (headless host)";
const MEDIA_UNAVAILABLE = "Local media preview is unavailable in zcode-acp (headless host)";
const FEEDBACK_UNAVAILABLE = "Feedback log archives are unavailable in zcode-acp (headless host)";
const PLUGIN_SANDBOX_UNAVAILABLE = "Plugin UI sandboxes are unavailable in zcode-acp (headless host)";

/**
 * The plugin-sandbox registration request of 3.12+ (docs/runtime-contract.md §4.1). Public sources name
 * only the result type; the request's name is pinned here, in one place.
 */
export const PLUGIN_SANDBOX_REQUEST = "plugin-sandbox-register-request";
export const PLUGIN_SANDBOX_RESULT = "plugin-sandbox-register-result";

function requestIdOf(message) {
  const requestId = message.requestId;
  return typeof requestId === "string" && requestId !== "" ? requestId : undefined;
}

function shortString(value) {
  return typeof value === "string" && value !== "" ? value.slice(0, 200) : undefined;
}

/**
 * @param {{ answer: (data: object) => void,
 *   onReady: () => void,
 *   onStartupFailed: (info: { failedPhase?: string, errorCode?: string }) => void }} handlers
 * @returns {(message: unknown) => void}
 */
export function createHostMessageHandler(handlers) {
  let startup = "pending"; // → "ready" | "failed"
  return (message) => {
    if (message === null || typeof message !== "object") return;
    switch (message.type) {
      case "browser-execute-request": {
        const requestId = requestIdOf(message);
        if (requestId === undefined) return;
        handlers.answer({
          type: "browser-execute-result",
          requestId,
          result: { ok: false, elapsedMs: 0, error: { code: "backend_unavailable", message: BROWSER_UNAVAILABLE, sideEffect: "none" } },
        });
        return;
      }
      case "local-media-preview-path-authorize-request": {
        const requestId = requestIdOf(message);
        if (requestId === undefined) return;
        handlers.answer({ type: "local-media-preview-path-authorize-result", requestId, ok: false, error: MEDIA_UNAVAILABLE });
        return;
      }
      case "feedback-log-archive-request": {
        const requestId = requestIdOf(message);
        if (requestId === undefined) return;
        handlers.answer({ type: "feedback-log-archive-result", requestId, ok: false, error: FEEDBACK_UNAVAILABLE });
        return;
      }
      case PLUGIN_SANDBOX_REQUEST: {
        // like the browser request: only type and requestId are read
        const requestId = requestIdOf(message);
        if (requestId === undefined) return;
        handlers.answer({ type: PLUGIN_SANDBOX_RESULT, requestId, ok: false, error: PLUGIN_SANDBOX_UNAVAILABLE });
        return;
      }
      case "database-startup-state": {
        if (startup !== "pending") return;
        const state = message.state;
        if (state === null || typeof state !== "object") return;
        if (state.phase === "ready") {
          startup = "ready";
          handlers.onReady();
        } else if (state.phase === "failed") {
          startup = "failed";
          handlers.onStartupFailed({ failedPhase: shortString(state.failedPhase), errorCode: shortString(state.errorCode) });
        }
        return;
      }
      default:
        // log, telemetry, counts, wake requests, unknown types: ignored
        return;
    }
  };
}
