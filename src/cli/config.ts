/**
 * The settings of a run, resolved once at start-up from the command line and the environment
 * (a flag wins over its variable, a variable over the default) into one frozen object that the
 * commands hand down. Every `ZCODE_ACP_*` variable is read here and nowhere else; below src/cli/
 * modules get values, not the environment. (The environment the host and the short checks of the
 * install run with is this process's own, passed on as it is: that is not a setting.)
 *
 *   --zcode-install DIR  ZCODE_ACP_ZCODE_INSTALL   ZCode install root (default: the platform's)
 *   --manifest PATH      ZCODE_ACP_MANIFEST        manifests replacing the built-in ones
 *   --log-file FILE      ZCODE_ACP_LOG_FILE        diagnostic log (default: stderr)
 *   --log-level LEVEL    ZCODE_ACP_LOG_LEVEL       DEFAULT_LOG_LEVEL
 *                        ZCODE_ACP_CACHE_DIR       the user cache dir (./locations.ts)
 *                        ZCODE_ACP_CONFIG_DIR      the user config dir (./locations.ts)
 *                        ZCODE_ACP_TIMEOUTS_MS     the host timeout table (src/host/timeouts.ts)
 *                        ZCODE_ACP_CANCEL_GRACE_MS DEFAULT_CANCEL_GRACE_MS
 *                        ZCODE_ACP_MERGE_DELTAS    on ("0": off)
 *                        ZCODE_ACP_DIAGNOSTICS     off ("1": on)
 *                        ZCODE_ACP_PROTOCOL_V2     on ("0": off: every client gets ACP v1, adr/0028)
 */
import { LOG_LEVELS, type LogLevel } from "../log/logger.js";
import { cacheDirFrom, configDirFrom } from "./locations.js";
import { parseCommandLine, usageError, type CommandName } from "./options.js";
import { timeoutOverridesFrom } from "./timeout-overrides.js";

/** the log level without --log-level / ZCODE_ACP_LOG_LEVEL */
export const DEFAULT_LOG_LEVEL: LogLevel = "info";
/** how long a cancelled prompt waits for ZCode's own end of turn before it answers `cancelled` anyway: 30 s */
export const DEFAULT_CANCEL_GRACE_MS = 30_000;
/** the longest cancel grace ZCODE_ACP_CANCEL_GRACE_MS may set: ten minutes */
export const MAX_CANCEL_GRACE_MS = 600_000;

/** a tuning variable that was not usable (its default applies), for the log once there is one */
export interface ConfigWarning {
  readonly message: string;
  readonly fields?: Readonly<Record<string, unknown>>;
}

export interface Config {
  readonly command: CommandName;
  /** (check, onboard) the report as JSON on stdout */
  readonly json: boolean;
  /** (onboard) write the candidate to the local manifest store */
  readonly accept: boolean;
  /** (onboard) start the build's host and write a shareable report (src/onboard/probe.ts) */
  readonly probe: boolean;
  /** (onboard --probe) the report file; undefined: zcode-acp-probe-<version>.json in the current directory */
  readonly report: string | undefined;
  /** the ZCode install root; undefined: the platform's default location */
  readonly zcodeInstall: string | undefined;
  /** a manifest file or directory replacing the built-in manifests and the local store */
  readonly manifest: string | undefined;
  /** the diagnostic log file; undefined: stderr */
  readonly logFile: string | undefined;
  readonly logLevel: LogLevel;
  /** the fingerprint cache and Node's compile cache live here; undefined when no home directory is known */
  readonly cacheDir: string | undefined;
  /** the local manifest store is its manifests/ */
  readonly configDir: string;
  /** overrides of the host timeout table, by key */
  readonly timeouts: Readonly<Record<string, number>>;
  readonly cancelGraceMs: number;
  /** merge text chunks while the client is behind (off: the benchmark's baseline) */
  readonly mergeDeltas: boolean;
  /** the `_zcode/diagnostics` extension request */
  readonly diagnostics: boolean;
  /** a client whose first line is an ACP v2 `initialize` gets the experimental v2 agent (adr/0028); off: v1 for everyone */
  readonly protocolV2: boolean;
  /**
   * ZCODE_ACP_READ_PATH: how a ZCode release with both reads sessions — `legacy` (its
   * onDynamicSessionEvent stream, the default) or `v4` (its V4 conversation, adr/0024). A release
   * without the legacy stream always reads V4.
   */
  readonly readPath: "legacy" | "v4";
  /** unusable tuning variables (the ACP command, whose settings they are, logs them) */
  readonly warnings: readonly ConfigWarning[];
}

function logLevel(value: string, source: string): LogLevel {
  if ((LOG_LEVELS as string[]).includes(value)) return value as LogLevel;
  throw usageError(`${source} must be one of ${LOG_LEVELS.join(", ")}, got "${value}"`);
}

function readPath(raw: string | undefined, warn: (message: string, fields?: Record<string, unknown>) => void): "legacy" | "v4" {
  if (raw === undefined || raw === "" || raw === "legacy") return "legacy";
  if (raw === "v4") return "v4";
  warn('ZCODE_ACP_READ_PATH must be "legacy" or "v4"; using "legacy"', { value: raw });
  return "legacy";
}

function cancelGrace(raw: string | undefined, warn: (message: string, fields?: Record<string, unknown>) => void): number {
  if (raw === undefined || raw === "") return DEFAULT_CANCEL_GRACE_MS;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0 && value <= MAX_CANCEL_GRACE_MS) return value;
  warn(`ZCODE_ACP_CANCEL_GRACE_MS must be an integer between 1 and ${MAX_CANCEL_GRACE_MS}; using the default`, { value: raw });
  return DEFAULT_CANCEL_GRACE_MS;
}

/**
 * The settings of `argv` (without node and the script) and `env`. Throws USAGE (exit 2) for an
 * unknown option or command and for an invalid log level; an unusable tuning variable is a warning.
 */
export function resolveConfig(argv: readonly string[], env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Config {
  const line = parseCommandLine(argv);
  const level = line.logLevel
    ? logLevel(line.logLevel, "--log-level")
    : env.ZCODE_ACP_LOG_LEVEL
      ? logLevel(env.ZCODE_ACP_LOG_LEVEL, "ZCODE_ACP_LOG_LEVEL")
      : DEFAULT_LOG_LEVEL;
  const warnings: ConfigWarning[] = [];
  const warn = (message: string, fields?: Record<string, unknown>): void =>
    void warnings.push(Object.freeze(fields ? { message, fields: Object.freeze(fields) } : { message }));
  const timeouts = Object.freeze(timeoutOverridesFrom(env, { warn }));
  const cancelGraceMs = cancelGrace(env.ZCODE_ACP_CANCEL_GRACE_MS, warn);
  return Object.freeze({
    command: line.command,
    json: line.json,
    accept: line.accept,
    probe: line.probe,
    report: line.report,
    zcodeInstall: line.zcodeInstall ?? (env.ZCODE_ACP_ZCODE_INSTALL || undefined),
    manifest: line.manifest ?? (env.ZCODE_ACP_MANIFEST || undefined),
    logFile: line.logFile ?? (env.ZCODE_ACP_LOG_FILE || undefined),
    logLevel: level,
    cacheDir: cacheDirFrom(env, platform),
    configDir: configDirFrom(env),
    timeouts,
    cancelGraceMs,
    mergeDeltas: env.ZCODE_ACP_MERGE_DELTAS !== "0",
    diagnostics: env.ZCODE_ACP_DIAGNOSTICS === "1",
    protocolV2: env.ZCODE_ACP_PROTOCOL_V2 !== "0",
    readPath: readPath(env.ZCODE_ACP_READ_PATH, warn),
    warnings: Object.freeze(warnings),
  });
}
