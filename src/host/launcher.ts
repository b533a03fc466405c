/**
 * Starts the install's Electron executable as Node (ELECTRON_RUN_AS_NODE=1) with our plain-JS
 * bootstrap, through execa (docs/runtime-contract.md §4). The internal NDJSON channel is the extra pipe
 * fd 3; the host's stdout and stderr are drained line by line into the diagnostic log (which
 * redacts) and never reach the bridge's stdout.
 */
import type { Duplex, Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import type { Assessment } from "../compat/types.js";
import type { Logger } from "../log/logger.js";
import { BridgeError, describeError } from "../util/errors.js";
import { electronNodeEnv, removedVariables } from "../install/child-environment.js";
import {
  BUILTIN_PROVIDER_CONFIG_ENV,
  buildBootstrapConfig,
  builtinProviderConfig,
  CHANNEL_FD,
  type BootstrapInstall,
} from "./bootstrap-config.js";

/** dist/runtime/bootstrap.js next to dist/host/ (src/runtime/bootstrap.js when run from sources) */
export const DEFAULT_BOOTSTRAP_SCRIPT = fileURLToPath(new URL("../runtime/bootstrap.js", import.meta.url));

const MAX_LOG_LINE = 2000;
/** provider-config paths a user may set in the environment; the host reads them (logged as paths, never contents) */
const PROVIDER_CONFIG_OVERRIDES = [BUILTIN_PROVIDER_CONFIG_ENV, "ZCODE_PERSONAL_PROVIDER_CONFIG_FILE"] as const;
const BOOTSTRAP_PREFIX = "[zcode-acp bootstrap";

export type SupportedInstall = BootstrapInstall;

/** The paths, manifest and RPC exports of a supported assessment; anything else is UNSUPPORTED_ZCODE. */
export function requireSupported(assessment: Assessment): SupportedInstall {
  if (!assessment.supported && assessment.unpinned && assessment.appVersion !== undefined) throw unpinnedBuild(assessment.appVersion);
  if (!assessment.supported)
    throw new BridgeError("UNSUPPORTED_ZCODE", assessment.message, { details: { failedStep: assessment.failedStep } });
  if (!assessment.paths || !assessment.manifest || !assessment.rpc) {
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      "the compatibility check passed without resolved install paths, a manifest or the RPC exports",
    );
  }
  return {
    paths: assessment.paths,
    manifest: assessment.manifest,
    rpcExports: assessment.rpc.exports,
    rpcModuleSha256: assessment.rpc.sha256,
  };
}

/** the command that reviews and pins a build no manifest covers (docs/runtime-contract.md §6) */
export const ONBOARD_COMMAND = "zcode-acp onboard";

/** A build no manifest covers, as the editor shows it (adr/0021): the version, and the command that reviews it. */
export function unpinnedBuild(appVersion: string): BridgeError {
  return new BridgeError(
    "UNSUPPORTED_ZCODE",
    `ZCode ${appVersion} is a build this zcode-acp has not verified, so it starts no session on it. ` +
      `To review it, run \`${ONBOARD_COMMAND}\` in a terminal (with this agent's settings): it shows how the build differs ` +
      `from the verified releases and asks before pinning it. Then start a new session. ` +
      `Or install a verified ZCode release, or update zcode-acp.`,
    { details: { failedStep: "version", appVersion, onboard: ONBOARD_COMMAND } },
  );
}

export interface HostProcessExit {
  exitCode: number | undefined;
  signal: string | undefined;
  /** spawn failure (ENOENT, EACCES, …) */
  spawnError?: string;
}

export interface LaunchedHost {
  readonly pid: number | undefined;
  /** the bridge's end of the internal channel (fd 3 of the child) */
  readonly channel: Duplex;
  /** resolves once the process is gone (exit event or spawn failure); never rejects */
  readonly exited: Promise<HostProcessExit>;
  hasExited(): boolean;
  kill(signal: NodeJS.Signals): void;
  /** release the stdio handles (after exit; grandchildren may hold the pipes open) */
  releaseStreams(): void;
}

export interface LaunchOptions {
  install: SupportedInstall;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  frameLimitBytes: number;
  disposeTimeoutMs: number;
  bootstrapScript?: string;
}

export function launchHost(options: LaunchOptions): LaunchedHost {
  const { paths, manifest } = options.install;
  const providerConfig = builtinProviderConfig(options.install, options.env);
  const config = buildBootstrapConfig(options.install, { ...options, builtinProviderConfig: providerConfig });
  const script = options.bootstrapScript ?? DEFAULT_BOOTSTRAP_SCRIPT;
  // the editor's Node/Electron preload and debug variables stay out of the host (adr/0021)
  const env: NodeJS.ProcessEnv = electronNodeEnv(options.env);
  if (providerConfig !== undefined) env[BUILTIN_PROVIDER_CONFIG_ENV] = providerConfig;
  const logger = options.logger;
  const removed = removedVariables(options.env);
  if (removed.length > 0) logger.info("variables of the editor's environment kept from the host", { names: removed });
  for (const name of PROVIDER_CONFIG_OVERRIDES) {
    const value = options.env[name];
    if (value) logger.info("provider config overridden from the environment", { variable: name, path: value });
  }
  logger.info("launching the ZCode host", { executable: paths.executable, bootstrap: script, manifest: manifest.artifact.id });
  const subprocess = execa(paths.executable, [script, JSON.stringify(config)], {
    env,
    extendEnv: false,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
    buffer: false,
    reject: false,
    cleanup: true,
    forceKillAfterDelay: false,
    windowsHide: true,
  });
  // execa's own promise: never rejects with reject:false, but keep it handled
  subprocess.catch(() => undefined);

  const channel = subprocess.stdio[CHANNEL_FD] as Duplex | undefined;
  if (!channel) {
    subprocess.kill("SIGKILL");
    throw new BridgeError("HOST_START_FAILED", "could not create the internal channel pipe for the host process");
  }
  drainLines(subprocess.stdout, (line) => logHostLine(logger, "stdout", line));
  drainLines(subprocess.stderr, (line) => logHostLine(logger, "stderr", line));

  let exitInfo: HostProcessExit | undefined;
  const exited = new Promise<HostProcessExit>((resolve) => {
    const settle = (info: HostProcessExit): void => {
      if (exitInfo) return;
      exitInfo = info;
      logger.info("ZCode host process ended", { pid: subprocess.pid, ...info });
      resolve(info);
    };
    subprocess.on("exit", (code, signal) => settle({ exitCode: code ?? undefined, signal: signal ?? undefined }));
    subprocess.on("error", (error) => {
      // a spawn failure emits "error" and no "exit"; a kill failure on a live process is only logged
      if (subprocess.pid === undefined || subprocess.exitCode !== null) {
        settle({ exitCode: undefined, signal: undefined, spawnError: describeError(error) });
      } else {
        logger.warn("host process error", { error: describeError(error) });
      }
    });
  });

  const streams = [channel, subprocess.stdout, subprocess.stderr].filter((s): s is NonNullable<typeof s> => s !== null);
  for (const stream of streams) stream.on("error", (error: Error) => logger.debug("host pipe error", { error: describeError(error) }));

  return {
    pid: subprocess.pid,
    channel,
    exited,
    hasExited: () => exitInfo !== undefined,
    kill: (signal) => {
      if (exitInfo) return;
      try {
        subprocess.kill(signal);
      } catch (error) {
        logger.warn("could not signal the host process", { signal, error: describeError(error) });
      }
    },
    releaseStreams: () => {
      for (const stream of streams) if (!stream.destroyed) stream.destroy();
    },
  };
}

function logHostLine(logger: Logger, stream: "stdout" | "stderr", line: string): void {
  if (line.startsWith(BOOTSTRAP_PREFIX)) logger.info("host runtime", { stream, line });
  else logger.debug("host output", { stream, line });
}

/** Split a byte stream into lines (bounded: long lines are cut) and hand each one to `onLine`. */
function drainLines(stream: Readable | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let partial = "";
  const emit = (line: string): void => {
    const trimmed = line.replace(/\r$/, "");
    if (trimmed !== "") onLine(trimmed.length > MAX_LOG_LINE ? `${trimmed.slice(0, MAX_LOG_LINE)}…` : trimmed);
  };
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    partial += chunk;
    let nl: number;
    while ((nl = partial.indexOf("\n")) !== -1) {
      emit(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
    if (partial.length > 16 * MAX_LOG_LINE) {
      emit(partial);
      partial = "";
    }
  });
  stream.on("end", () => {
    if (partial !== "") emit(partial);
    partial = "";
  });
}
