/**
 * `zcode-acp check` (docs/runtime-contract.md §5): the ordered compatibility assessment, no launch.
 * Human-readable report on stdout by default, the Assessment as JSON with --json.
 * Exit 0 supported (a modified CLI is still 0), 1 unsupported, 2 usage or configuration error
 * (missing --manifest path, invalid manifest).
 */
import { commandLogger } from "./command-logger.js";
import type { Config } from "./config.js";
import { installOptionsFrom } from "./install-options.js";
import { assessInstall } from "../compat/assess.js";
import { formatAssessment } from "../compat/format-assessment.js";
import { describeError, isBridgeError } from "../util/errors.js";

export interface CheckIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** the environment of the child runs of the ZCode executable */
  env: NodeJS.ProcessEnv;
}

export async function runCheckCommand(
  config: Config,
  io: CheckIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const logger = commandLogger(config, io.stderr);
  if (!logger) return 2;
  try {
    const report = await assessInstall({ ...installOptionsFrom(config, io.env), logger });
    io.stdout.write(config.json ? `${JSON.stringify(report, null, 2)}\n` : formatAssessment(report));
    return report.supported ? 0 : 1;
  } catch (error) {
    const usage = isBridgeError(error, "USAGE") || isBridgeError(error, "INVALID_MANIFEST");
    const message = isBridgeError(error) ? error.message : `unexpected failure: ${describeError(error)}`;
    if (config.json) {
      const body = isBridgeError(error) ? error.toJSON() : { code: "INTERNAL", message };
      io.stdout.write(`${JSON.stringify({ supported: false, error: body }, null, 2)}\n`);
    }
    io.stderr.write(`zcode-acp: ${message}\n`);
    return usage ? 2 : 1;
  }
}
