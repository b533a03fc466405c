/**
 * `zcode-acp onboard [--accept]` (docs/runtime-contract.md §6). Exit 0 when a candidate could be built (or a
 * manifest already verifies the install), 1 when not (with why) or when --accept cannot write,
 * 2 on a usage error. Without --accept nothing is written.
 */
import { commandLogger } from "./command-logger.js";
import type { Config } from "./config.js";
import { installOptionsFrom } from "./install-options.js";
import { formatOnboardReport } from "../onboard/format.js";
import { inspectForOnboarding } from "../onboard/inspect.js";
import { writeLocalManifest } from "../onboard/store.js";
import { describeError, isBridgeError } from "../util/errors.js";

export interface OnboardIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** the environment of the child runs of the ZCode executable */
  env: NodeJS.ProcessEnv;
}

export async function runOnboardCommand(
  config: Config,
  io: OnboardIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const logger = commandLogger(config, io.stderr);
  if (!logger) return 2;
  try {
    const report = await inspectForOnboarding({ ...installOptionsFrom(config, io.env), logger });
    let written: string | undefined;
    if (config.accept && report.outcome === "candidate" && report.candidate) {
      try {
        written = await writeLocalManifest(report.candidate, config.configDir);
      } catch (error) {
        const message = isBridgeError(error) ? error.message : describeError(error);
        if (config.json) io.stdout.write(`${JSON.stringify({ ...report, accepted: false, error: message }, null, 2)}\n`);
        io.stderr.write(`zcode-acp: ${message}\n`);
        return 1;
      }
    }
    io.stdout.write(
      config.json
        ? `${JSON.stringify({ ...report, ...(written ? { accepted: true, written } : { accepted: false }) }, null, 2)}\n`
        : formatOnboardReport(report, written),
    );
    return report.outcome === "refused" ? 1 : 0;
  } catch (error) {
    const usage = isBridgeError(error, "USAGE") || isBridgeError(error, "INVALID_MANIFEST");
    const message = isBridgeError(error) ? error.message : `unexpected failure: ${describeError(error)}`;
    if (config.json)
      io.stdout.write(
        `${JSON.stringify({ outcome: "refused", error: isBridgeError(error) ? error.toJSON() : { code: "INTERNAL", message } }, null, 2)}\n`,
      );
    io.stderr.write(`zcode-acp: ${message}\n`);
    return usage ? 2 : 1;
  }
}
