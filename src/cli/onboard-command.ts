/**
 * `zcode-acp onboard [--accept]` (docs/runtime-contract.md §6). Exit 0 when a candidate could be built (or a
 * manifest already verifies the install), 1 when not (with why) or when --accept cannot write,
 * 2 on a usage error. Without --accept nothing is written — except in a terminal, where the person
 * is asked (adr/0021): exit 0 once pinned, 1 when declined.
 */
import { commandLogger } from "./command-logger.js";
import type { Config } from "./config.js";
import { installOptionsFrom } from "./install-options.js";
import { formatOnboardReport } from "../onboard/format.js";
import { inspectForOnboarding } from "../onboard/inspect.js";
import { writeLocalManifest } from "../onboard/store.js";
import type { OnboardReport } from "../onboard/inspect.js";
import { confirm, isInteractive } from "./confirm-prompt.js";
import { describeError, isBridgeError } from "../util/errors.js";

export interface OnboardIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** the environment of the child runs of the ZCode executable */
  env: NodeJS.ProcessEnv;
  /** where a person answers the question (interactive mode only) */
  stdin?: NodeJS.ReadableStream;
  /** ask before pinning (adr/0021); default: stdin and stdout are terminals */
  interactive?: boolean;
}

export async function runOnboardCommand(
  config: Config,
  io: OnboardIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin },
): Promise<number> {
  const logger = commandLogger(config, io.stderr);
  if (!logger) return 2;
  try {
    const report = await inspectForOnboarding({ ...installOptionsFrom(config, io.env), logger });
    let written: string | undefined;
    const interactive =
      !config.accept && !config.json && (io.interactive ?? (io.stdin !== undefined && isInteractive(io.stdin, io.stdout)));
    if (interactive && report.outcome === "candidate" && report.candidate && io.stdin) {
      return await reviewAndConfirm(report, config, { ...io, stdin: io.stdin });
    }
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

/**
 * A person at the terminal: the review, then the question; "y" pins the candidate (as --accept,
 * exit 0), anything else writes nothing and exits 1 — the build is still not usable, which is what
 * a client running this for terminal auth must learn (ACP: only exit 0 means success).
 */
async function reviewAndConfirm(report: OnboardReport, config: Config, io: OnboardIo & { stdin: NodeJS.ReadableStream }): Promise<number> {
  io.stdout.write(formatOnboardReport(report, undefined, { interactive: true }));
  io.stdout.write("\n");
  const question =
    `Pin ZCode ${report.appVersion ?? "?"} (CLI ${report.cliVersion ?? "?"}) in your local manifest store, ` +
    `so that zcode-acp drives it from now on?`;
  const yes = await confirm(question, { input: io.stdin, output: io.stdout });
  if (!yes) {
    io.stdout.write("Nothing was written. Run `zcode-acp onboard` again to review it later.\n");
    return 1;
  }
  try {
    const written = await writeLocalManifest(report.candidate!, config.configDir);
    io.stdout.write(
      `Accepted: written to ${written}. \`zcode-acp check\` now verifies this install by that local manifest; delete the file to undo.\n`,
    );
    return 0;
  } catch (error) {
    io.stderr.write(`zcode-acp: ${isBridgeError(error) ? error.message : describeError(error)}\n`);
    return 1;
  }
}
