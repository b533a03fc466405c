/**
 * `zcode-acp onboard [--accept]` (runtime contract §6). Exit 0 when a candidate could be built (or a
 * manifest already verifies the install), 1 when not (with why) or when --accept cannot write,
 * 2 on a usage error. Without --accept nothing is written.
 */
import type { CliOptions } from "./options.js";
import { createLogger } from "../log/logger.js";
import { formatOnboardReport } from "../onboard/format.js";
import { inspectForOnboarding } from "../onboard/inspect.js";
import { writeLocalManifest } from "../onboard/store.js";
import { describeError, isBridgeError } from "../util/errors.js";

export interface OnboardIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

export async function runOnboardCommand(options: CliOptions, io: OnboardIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  const logger = createLogger({ level: options.logLevel, file: options.logFile });
  try {
    const report = await inspectForOnboarding({ ...(options.zcodeInstall !== undefined ? { installRoot: options.zcodeInstall } : {}), env: io.env, logger });
    let written: string | undefined;
    if (options.accept && report.outcome === "candidate" && report.candidate) {
      try {
        written = await writeLocalManifest(report.candidate, io.env);
      } catch (error) {
        const message = isBridgeError(error) ? error.message : describeError(error);
        if (options.json) io.stdout.write(`${JSON.stringify({ ...report, accepted: false, error: message }, null, 2)}\n`);
        io.stderr.write(`zcode-acp: ${message}\n`);
        return 1;
      }
    }
    io.stdout.write(options.json ? `${JSON.stringify({ ...report, ...(written ? { accepted: true, written } : { accepted: false }) }, null, 2)}\n` : formatOnboardReport(report, written));
    return report.outcome === "refused" ? 1 : 0;
  } catch (error) {
    const usage = isBridgeError(error, "USAGE") || isBridgeError(error, "INVALID_MANIFEST");
    const message = isBridgeError(error) ? error.message : `unexpected failure: ${describeError(error)}`;
    if (options.json) io.stdout.write(`${JSON.stringify({ outcome: "refused", error: isBridgeError(error) ? error.toJSON() : { code: "INTERNAL", message } }, null, 2)}\n`);
    io.stderr.write(`zcode-acp: ${message}\n`);
    return usage ? 2 : 1;
  }
}
