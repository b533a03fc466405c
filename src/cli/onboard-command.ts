/**
 * `zcode-acp onboard [--accept]` (docs/runtime-contract.md §6). Exit 0 when a candidate could be built (or a
 * manifest already verifies the install), 1 when not (with why) or when --accept cannot write,
 * 2 on a usage error. Without --accept nothing is written — except in a terminal, where the person
 * is asked (adr/0021): exit 0 once pinned, 1 when declined.
 */
import { commandLogger } from "./command-logger.js";
import { DEFAULT_LOG_LEVEL, type Config } from "./config.js";
import { installOptionsFrom } from "./install-options.js";
import { formatOnboardReport } from "../onboard/format.js";
import { inspectForOnboarding } from "../onboard/inspect.js";
import { writeLocalManifest } from "../onboard/store.js";
import type { OnboardReport } from "../onboard/inspect.js";
import { confirm, isInteractive } from "./confirm-prompt.js";
import { describeError, isBridgeError } from "../util/errors.js";
import { chmod, writeFile } from "node:fs/promises";
import { homedir, userInfo } from "node:os";
import { resolve } from "node:path";
import type { Logger } from "../log/logger.js";
import { isInstallPlatform } from "../install/layout.js";
import { installRootCandidates } from "../install/discover.js";
import { inspectBuild } from "../onboard/inspect.js";
import { probeMarkdown, shareableReport, type RedactionContext } from "../onboard/probe-report.js";
import { PACKAGE_VERSION } from "../version.js";
import { runProbe } from "./onboard-probe.js";

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
  // the probe's review is read in the terminal: its progress logs (info) stay out of it unless a
  // log file or a level other than the default was asked for (warnings and errors still show)
  const quiet = config.probe && config.logFile === undefined && config.logLevel === DEFAULT_LOG_LEVEL;
  const logger = commandLogger(quiet ? { ...config, logLevel: "warn" } : config, io.stderr);
  if (!logger) return 2;
  try {
    if (config.probe) return await probeCommand(config, io, logger);
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

/** what the probe says before it runs anything (docs/runtime-contract.md §8) */
export const PROBE_WARNING =
  "The probe starts this build's ZCode host (out/host/index.js and the modules it imports) in ZCode's own executable, " +
  "under your account and with ZCode's data directory: it runs code of a build zcode-acp has NOT verified. " +
  "It makes no model call, sends no prompt and pins nothing; it does the V4 handshake and lists this directory's sessions (counted, not copied).";

function redactionContext(env: NodeJS.ProcessEnv): RedactionContext {
  const homes = [
    env.HOME,
    env.USERPROFILE,
    (() => {
      try {
        return homedir();
      } catch {
        return undefined;
      }
    })(),
  ].filter((h): h is string => typeof h === "string" && h !== "");
  let user = env.USER || env.USERNAME || undefined;
  try {
    user ??= userInfo().username;
  } catch {
    // no user name known: the home directories are masked all the same
  }
  return { homes, user };
}

/**
 * `onboard --probe`: the review, the warning, the question (or --accept), the host start, the report file.
 * Exit 0 when the host started and the report was written, 1 when nothing could be started (with
 * why) or the host failed to start (the report says how), 2 on a usage error.
 */
async function probeCommand(config: Config, io: OnboardIo, logger: Logger): Promise<number> {
  const { report, target } = await inspectBuild({ ...installOptionsFrom(config, io.env), logger });
  const say = (text: string): void => void (config.json ? io.stderr : io.stdout).write(text);
  say(formatOnboardReport(report, undefined, { interactive: true }));
  if (!target) {
    const why =
      report.outcome === "verified"
        ? "The probe is for builds no manifest verifies; this one is verified, so nothing was started (`zcode-acp check` describes it)."
        : "The probe starts only a build the review could make a candidate of; nothing was started.";
    say(`\n${why}\n`);
    if (config.json) io.stdout.write(`${JSON.stringify({ ...report, probed: false }, null, 2)}\n`);
    return report.outcome === "verified" ? 0 : 1;
  }
  say(`\n  PROBE: ${PROBE_WARNING}\n\n`);
  if (!config.accept) {
    const interactive = !config.json && (io.interactive ?? (io.stdin !== undefined && isInteractive(io.stdin, io.stdout)));
    if (!interactive || !io.stdin) {
      io.stderr.write(
        "zcode-acp: nothing was started: the probe runs this build's code; run `zcode-acp onboard --probe --accept` to start it without asking.\n",
      );
      return 1;
    }
    const yes = await confirm(`Start the host of ZCode ${report.appVersion ?? "?"} to probe it?`, { input: io.stdin, output: io.stdout });
    if (!yes) {
      io.stdout.write("Nothing was started.\n");
      return 1;
    }
  }
  const probe = await runProbe(target, { env: io.env, logger, workspacePath: process.cwd(), timeouts: config.timeouts });
  const platform = process.platform;
  const shareable = shareableReport(
    report,
    probe,
    {
      zcodeAcp: PACKAGE_VERSION,
      now: new Date(),
      defaultRoots: isInstallPlatform(platform) ? installRootCandidates(platform, io.env) : [],
    },
    redactionContext(io.env),
  );
  const file = resolve(config.report ?? `zcode-acp-probe-${report.appVersion ?? "unknown"}.json`);
  const text = file.toLowerCase().endsWith(".md") ? probeMarkdown(shareable) : `${JSON.stringify(shareable, null, 2)}\n`;
  try {
    await writeFile(file, text, { mode: 0o600 });
    await chmod(file, 0o600);
  } catch (error) {
    io.stderr.write(`zcode-acp: cannot write the probe report to ${file}: ${describeError(error)}\n`);
    return 1;
  }
  const line = (label: string, step: { status: string; detail: string }): string => `  ${label.padEnd(36)}${step.status}: ${step.detail}\n`;
  say(
    "Probe:\n" +
      line("host start:", probe.start) +
      line("V4 hello:", probe.hello) +
      line("V4 clientHello:", probe.initialize) +
      line("listSessions (no includeArchived):", probe.listSessions) +
      (probe.served ? line("served by the running host:", probe.served) : "") +
      `\nReport written to ${file} (mode 0600). It holds versions, hashes and what is present or missing, ` +
      "no path under your home directory and no account data: attach it to a bug report. Nothing was pinned.\n",
  );
  if (config.json) io.stdout.write(`${JSON.stringify({ ...shareable, written: file }, null, 2)}\n`);
  return probe.start.status === "ok" ? 0 : 1;
}
