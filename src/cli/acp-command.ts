/**
 * The default command: an ACP agent on stdio. stdout carries ACP JSON-RPC only; logs
 * go to stderr or --log-file. The host starts lazily on the first request that needs it and is
 * stopped when stdin closes or on SIGTERM / SIGINT / SIGHUP.
 */
import { createZcodeAgent } from "../acp/agent-app.js";
import { incomingMessages } from "../acp/incoming-messages.js";
import { WireOrder } from "../acp/wire-order.js";
import { diagnosticsEnabled, registerDiagnostics } from "../acp/diagnostics.js";
import { LazyHostClient } from "../host/lazy-host.js";
import { LineApi } from "../native/line-api.js";
import { stdoutMessages } from "./stdout-messages.js";
import { timeoutOverridesFrom } from "./timeout-overrides.js";
import { createLogger, type Logger } from "../log/logger.js";
import { createInteractionBroker } from "../session/interactions/index.js";
import { describeError, isBridgeError } from "../util/errors.js";
import type { CliOptions } from "./options.js";
import { PACKAGE_VERSION } from "../version.js";

export const DEFAULT_CANCEL_GRACE_MS = 30_000;
/** signals that end the bridge gracefully: interactions denied, generation stopped, host stopped */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT", "SIGHUP"];
/** After shutdown, a last resort in case something still holds the event loop. */
const EXIT_BACKSTOP_MS = 5_000;

/** `ZCODE_ACP_CANCEL_GRACE_MS`: how long a cancelled turn may take to end natively. */
export function cancelGraceFrom(env: NodeJS.ProcessEnv, logger: Logger): number {
  const raw = env.ZCODE_ACP_CANCEL_GRACE_MS;
  if (raw === undefined || raw === "") return DEFAULT_CANCEL_GRACE_MS;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0 && value <= 600_000) return value;
  logger.warn("ZCODE_ACP_CANCEL_GRACE_MS must be an integer between 1 and 600000; using the default", { value: raw });
  return DEFAULT_CANCEL_GRACE_MS;
}

export async function runAcpCommand(options: CliOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let logger: Logger;
  try {
    logger = createLogger({ level: options.logLevel, file: options.logFile });
  } catch (error) {
    process.stderr.write(`zcode-acp: ${isBridgeError(error) ? error.message : describeError(error)}\n`);
    return 2;
  }
  logger.info("zcode-acp starting", { version: PACKAGE_VERSION, pid: process.pid });
  const host = new LazyHostClient(async () => {
    const [{ HostConnection }, { assessInstall }] = await Promise.all([import("../host/host-connection.js"), import("../compat/assess.js")]);
    return new HostConnection({
      resolveInstall: () =>
        assessInstall({
          ...(options.zcodeInstall !== undefined ? { installRoot: options.zcodeInstall } : {}),
          ...(options.manifest !== undefined ? { manifestPath: options.manifest } : {}),
          logger,
          env,
        }),
      logger,
      env,
      timeouts: timeoutOverridesFrom(env, logger),
    });
  });
  // wire order of cancels and interaction answers (src/acp/wire-order.ts); `agent` is bound below
  const wire = new WireOrder((sessionId) => agent.cancelSession(sessionId), logger.child("wire"));
  const agent = createZcodeAgent({
    native: new LineApi(host),
    logger,
    createBroker: (brokerLogger) => createInteractionBroker({ logger: brokerLogger }),
    cancelGraceMs: cancelGraceFrom(env, logger),
    tracker: wire,
  });
  if (diagnosticsEnabled(env)) registerDiagnostics(agent.app, { sessions: () => agent.diagnostics(), host: () => host.diagnostics() });
  // our writer (one string write per message, same bytes, far less garbage) and our reader
  // (a line over the limit is answered and skipped, not fatal; every line passes the wire gate)
  const writable = stdoutMessages(process.stdout, (message) => wire.outgoing(message));
  const replies = writable.getWriter();
  let inputFailure: Error | undefined;
  const readable = incomingMessages({
    input: process.stdin,
    reply: (message) => void replies.write(message).catch((e) => logger.warn("transport answer not written", { error: describeError(e) })),
    gate: (message) => wire.incoming(message),
    logger: logger.child("transport"),
    onEnd: (how) => {
      if (how !== "eof") inputFailure = how;
    },
  });
  const connection = agent.app.connect({ readable, writable });

  let stopping: Promise<void> | undefined;
  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info("shutting down", { reason });
      connection.close();
      await agent.shutdown();
      await host.close().catch((e) => logger.warn("host close failed", { error: describeError(e) }));
      process.stdin.destroy();
      setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_BACKSTOP_MS).unref();
    })();
    return stopping;
  };
  // the client went away abruptly (EPIPE): end like a closed stdin instead of crashing
  process.stdout.on("error", (error) => {
    logger.warn("stdout failed", { error: describeError(error) });
    void shutdown("stdout closed");
  });
  const onSignal = (signal: NodeJS.Signals): void => void shutdown(signal);
  // `on`, not `once`: while our listener is registered, execa's signal-exit does not re-raise the
  // signal (which would kill the bridge before it stops the host gracefully). SIGHUP (the
  // terminal or the client's session went away) ends the bridge the same graceful way.
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);

  await connection.closed.catch((e) => logger.warn("ACP connection failed", { error: describeError(e) }));
  if (inputFailure) logger.error("reading stdin failed; the ACP connection ended", { error: describeError(inputFailure) });
  await shutdown(inputFailure ? "stdin failed" : "stdin closed");
  for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  return inputFailure ? 1 : 0;
}
