/**
 * `_zcode/diagnostics`: an ACP extension request for leak checks and benchmarks, registered only
 * when ZCODE_ACP_DIAGNOSTICS=1. It answers counts only (sessions, running turns, pending
 * interactions, queued updates, host channel requests and routes, listeners, active handles,
 * memory), never content: no prompts, paths or payloads.
 *
 * `host.largestFrameBytes` is the largest frame the bridge received on the internal channel from
 * any host of this process, whichever read path carried it (the legacy event stream or ZCode's V4
 * conversation frames), next to `host.frameLimitBytes`, the channel's limit: docs/history.md says
 * what keeps the first far under the second whatever the history.
 *
 * `v4Rows` counts the rows the V4 read path holds (docs/zcode-host.md §16.5): `heldRows` /
 * `heldBytes` over every live subscription of this process now, `peakHeldRows` / `peakHeldBytes`
 * the most one subscription held after any frame since the process started, `evictedRows` how many
 * finished rows it let go of, and the bounds `maxHeldRows` / `maxHeldBytes` the peaks stay under.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type * as acpV2 from "@agentclientprotocol/sdk/experimental/v2";

export const DIAGNOSTICS_METHOD = "_zcode/diagnostics";

/** Active libuv resources by kind (Timeout, PipeWrap, ProcessWrap, …) and a few listener counts. */
export function processDiagnostics(): Record<string, unknown> {
  const resources: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
  const memory = process.memoryUsage();
  return {
    resources,
    listeners: {
      SIGTERM: process.listenerCount("SIGTERM"),
      SIGINT: process.listenerCount("SIGINT"),
      exit: process.listenerCount("exit"),
      stdoutError: process.stdout.listenerCount("error"),
      stdoutDrain: process.stdout.listenerCount("drain"),
      stdinData: process.stdin.listenerCount("data"),
    },
    memory: { rss: memory.rss, heapUsed: memory.heapUsed, external: memory.external },
  };
}

/** Register the request on `app` (before it connects); each source is called on every request. */
export function registerDiagnostics(app: acp.AgentApp, sources: Record<string, () => unknown>): void {
  app.onRequest(
    DIAGNOSTICS_METHOD,
    (params: unknown) => params,
    () => diagnosticsOf(sources),
  );
}

/** The same request on an ACP v2 connection's app (adr/0028). */
export function registerDiagnosticsV2(app: acpV2.AgentApp, sources: Record<string, () => unknown>): void {
  app.onRequest(
    DIAGNOSTICS_METHOD,
    (params: unknown) => params,
    () => diagnosticsOf(sources),
  );
}

function diagnosticsOf(sources: Record<string, () => unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = { process: processDiagnostics() };
  for (const [name, source] of Object.entries(sources)) result[name] = source();
  return result;
}
