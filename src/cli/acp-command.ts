/**
 * The default command: an ACP agent on stdio. Start-up is what users feel most (editors spawn an
 * agent per thread, Paseo one per probe), so this module loads almost nothing
 * (adr/0013-early-initialize-and-warm-up.md):
 *
 *   1. read the client's first line; if it is a well-formed `initialize`, answer it at once
 *      (src/cli/early-initialize.ts) — before the ACP SDK and zod are loaded, with the session
 *      management calls of the cached offer when the install is unchanged (./initialize-offer.ts),
 *      else after the warm-up's assessment;
 *   2. warm up: load the host modules and assess the install (no launch); if a session request
 *      (session/new, load, resume) is already waiting in the input, start the host now;
 *   3. load the SDK connection (acp-connection.ts) and hand it every byte of stdin; with a host
 *      starting, compile the session validators meanwhile.
 *
 * When the first line is anything else, nothing is answered early and the SDK gets the input
 * unchanged; the warm-up then starts once the SDK answered `initialize`.
 */
import { commandLogger } from "./command-logger.js";
import type { Assessment } from "../compat/types.js";
import type { Logger } from "../log/logger.js";
import { describeError } from "../util/errors.js";
import { earlyInitialize, initializeAnswerLine, opensSession, requestsProtocolV2 } from "./early-initialize.js";
import { EarlyInput } from "./early-input.js";
import { LazyHostClient } from "../host/lazy-host.js";
import type { Config } from "./config.js";
import { StopRequests } from "./stop-requests.js";
import { PACKAGE_VERSION } from "../version.js";
import { ReleaseAdvisories } from "./release-advisories.js";
import { InstallSessionCalls, SESSION_CALLS_WAIT_MS } from "./install-session-calls.js";
import { offerLocation } from "./initialize-offer.js";

/** a warm-up assessment older than this is done again at the launch */
const PREPARED_ASSESSMENT_MAX_AGE_MS = 10_000;
/** how long the SDK waits for the warm-up assessment (one from the fingerprint cache takes ~10 ms) */
const ASSESSMENT_WAIT_MS = 100;

/** The lazily created HostConnection; its warm-up assesses the install for the first launch. `env`: the host's and the checks' environment. */
export function createLazyHost(
  config: Config,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  advisories?: ReleaseAdvisories,
  sessionCalls?: InstallSessionCalls,
): LazyHostClient {
  let assess: (() => Promise<Assessment>) | undefined;
  /** a second assessment, seen by nobody else: it confirms the offer before it is cached */
  let confirm: (() => Promise<Assessment>) | undefined;
  let prepared: { assessment: Promise<Assessment>; at: number } | undefined;
  return new LazyHostClient(
    async () => {
      const [{ HostConnection }, { assessInstall }, { installOptionsFrom }] = await Promise.all([
        import("../host/host-connection.js"),
        import("../compat/assess.js"),
        import("./install-options.js"),
      ]);
      // the bridge's use records a first-use RPC module pin (adr/0020); `check` only reports it
      const options = { ...installOptionsFrom(config, env), logger, recordFirstUse: true };
      confirm = () => assessInstall(options);
      assess = () =>
        assessInstall(options).then((assessment) => {
          advisories?.observe(assessment);
          sessionCalls?.observe(assessment);
          return assessment;
        });
      return new HostConnection({
        resolveInstall: () => {
          const early = prepared;
          prepared = undefined;
          if (early && performance.now() - early.at <= PREPARED_ASSESSMENT_MAX_AGE_MS) return early.assessment;
          return assess!();
        },
        logger,
        env,
        timeouts: config.timeouts,
      });
    },
    {
      warm: () => {
        const assessment = assess!();
        assessment.catch(() => undefined); // reported by the launch that uses it
        prepared = { assessment, at: performance.now() };
        // what initialize advertised is cached for the next start, once a second assessment confirms it
        if (sessionCalls && confirm)
          void assessment.then(
            (first) => sessionCalls.remember(first, confirm!),
            () => undefined,
          );
        return assessment;
      },
    },
  );
}

export async function runAcpCommand(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const logger = commandLogger(config, process.stderr);
  if (!logger) return 2;
  const stop = new StopRequests(logger);
  logger.info("zcode-acp starting", { version: PACKAGE_VERSION, pid: process.pid });
  for (const warning of config.warnings) logger.warn(warning.message, warning.fields);
  const offerAt = offerLocation(config, env);
  const sessionCalls = new InstallSessionCalls(
    SESSION_CALLS_WAIT_MS,
    () =>
      logger.warn("the install was not assessed in time for initialize: session/delete and session/set_title are not advertised", {
        waitedMs: SESSION_CALLS_WAIT_MS,
      }),
    offerAt && {
      location: offerAt,
      onHit: (calls) => logger.debug("initialize offer read from the cache (the install is unchanged)", { ...calls }),
      onCached: (calls) => logger.debug("initialize offer cached for the next start", { ...calls }),
      onStale: (advertised, offered) =>
        logger.error("initialize advertised more than the install offers (a stale cached offer; it is dropped)", {
          advertised,
          offered,
        }),
    },
  );
  // the cached offer is read while the first line is awaited
  sessionCalls.prefetch();
  const input = new EarlyInput(process.stdin);
  const first = await Promise.race([input.firstLine(), stop.requested.then(() => undefined)]);
  if (first === undefined) {
    // stopped before the client said anything: nothing was started
    logger.info("shutting down", { reason: await stop.requested });
    stop.dispose();
    process.stdin.destroy();
    return 0;
  }
  // an ACP v2 client (adr/0028) is answered by the v2 agent, never early: the early answer is v1's
  const protocol = config.protocolV2 && first.line && requestsProtocolV2(first.line) ? 2 : 1;
  const early = first.line && protocol === 1 ? earlyInitialize(first.line) : undefined;
  const advisories = new ReleaseAdvisories(logger.child("release"));
  const host = createLazyHost(config, env, logger, advisories, sessionCalls);
  // stopping never waits for a host start (adr/0019): a stop ends a start in progress at once,
  // even before the ACP connection is loaded; a second signal SIGKILLs the host and exits
  stop.onForce(() => host.killNow());
  void stop.requested.then(() => host.refuseStarts()).catch(() => undefined);
  let sessionWaiting = false;
  if (early) {
    // the answer advertises what the install offers of session management: the cached offer of
    // an unchanged install, else the warm-up assessment (no launch) first, bounded
    // (./install-session-calls.ts, ./initialize-offer.ts)
    early.answer = initializeAnswerLine(early.id, early.clientCapabilities, await sessionCalls.get(() => host.prepare()));
    process.stdout.write(early.answer);
    logger.debug("initialize answered before the SDK loaded", { id: early.id });
    input.watch((line) => {
      if (!opensSession(line)) return false;
      logger.debug("a session request is waiting: starting the host");
      sessionWaiting = true;
      host.startEarly();
      return true;
    });
    const prepared = host.prepare();
    await host.loaded();
    // Node >= 22 loads ES modules synchronously: no input was read meanwhile. Two check phases
    // have a poll phase between them, so a session request that arrived during the load reaches
    // the watcher before the SDK is loaded (or not waited for).
    await new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    logger.debug("host modules loaded");
    // the launch is the long pole of that request: let the assessment run before the SDK's
    // module loading competes with it, and the SDK then load while the host starts. An
    // assessment that runs child processes (a cold fingerprint cache) is not waited for.
    if (sessionWaiting) {
      let timer: NodeJS.Timeout | undefined;
      const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, ASSESSMENT_WAIT_MS)));
      await Promise.race([prepared, budget]);
      clearTimeout(timer);
      logger.debug("SDK loading starts after the assessment (or its budget)");
    }
  }
  let serveAcp: typeof import("./acp-connection.js").serveAcp;
  try {
    ({ serveAcp } = await import("./acp-connection.js"));
  } catch (error) {
    logger.error("cannot load the ACP connection", { error: describeError(error) });
    await host.close().catch(() => undefined);
    throw error;
  }
  logger.debug("ACP connection loaded");
  return serveAcp({
    config,
    logger,
    host,
    input,
    early,
    protocol,
    stop,
    sessionWaiting,
    releaseNotices: () => advisories.notices(),
    sessionCalls: () => sessionCalls.get(() => host.prepare()),
  });
}
