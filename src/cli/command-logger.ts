/**
 * The logger of a command, from the resolved settings. An unusable `--log-file` (a directory, a
 * missing directory, no permission) is refused at start: one line with the reason on stderr, and
 * the command exits 2 (a usage error), before anything else runs.
 */
import { createLogger, type Logger } from "../log/logger.js";
import { describeError, isBridgeError } from "../util/errors.js";
import type { Config } from "./config.js";

/** the command's logger, or undefined after the reason was written to `stderr` (exit with 2) */
export function commandLogger(config: Config, stderr: NodeJS.WritableStream): Logger | undefined {
  try {
    return createLogger({ level: config.logLevel, file: config.logFile });
  } catch (error) {
    stderr.write(`zcode-acp: ${isBridgeError(error) ? error.message : describeError(error)}\n`);
    return undefined;
  }
}
