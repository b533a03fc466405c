/**
 * The command line (docs/runtime-contract.md §5), as typed: the command and the flags' raw values.
 * Unknown options are a usage error (exit 2), never ignored. The environment and the defaults
 * are merged in by resolveConfig (./config.ts), where the flag wins.
 */
import { BridgeError } from "../util/errors.js";

export type CommandName = "acp" | "check" | "onboard" | "help" | "version";

export interface CommandLine {
  command: CommandName;
  json: boolean;
  /** onboard only: write the candidate to the local manifest store */
  accept: boolean;
  /** onboard only: start the build's host (no model call) and write a shareable report */
  probe: boolean;
  /** the value flags as given (never empty) */
  zcodeInstall?: string;
  manifest?: string;
  logFile?: string;
  logLevel?: string;
  /** onboard --probe only: the report file */
  report?: string;
}

const VALUE_FLAGS = {
  "--zcode-install": "zcodeInstall",
  "--manifest": "manifest",
  "--log-file": "logFile",
  "--log-level": "logLevel",
  "--report": "report",
} as const;

export const USAGE = `Usage:
  zcode-acp [options]              ACP agent on stdio (the default command)
  zcode-acp check [options]        fingerprint and compatibility check, no launch of the host
  zcode-acp onboard [--accept]     review a ZCode build no pinned manifest covers; asks in a terminal,
                                   --accept pins it without asking (scripts)
  zcode-acp onboard --probe [--accept] [--report FILE]
                                   also start that build's host (no model call, nothing pinned) and
                                   write a redacted report to attach to a bug report; asks first,
                                   --accept runs it without asking (scripts)
  zcode-acp --version | --help | help

Options (each also read from the environment):
  --zcode-install DIR   ZCODE_ACP_ZCODE_INSTALL  ZCode install root
  --manifest PATH       ZCODE_ACP_MANIFEST       manifest file or directory replacing the built-in ones
  --json                                         (check, onboard) machine-readable report on stdout
  --accept                                       (onboard only) write the local manifest; with --probe:
                                                 run the build's host without asking (writes no manifest)
  --probe                                        (onboard only) start the host, V4 handshake, report
  --report FILE                                  (onboard --probe) report file: .md Markdown, else JSON;
                                                 default zcode-acp-probe-<version>.json here (mode 0600)
  --log-file FILE       ZCODE_ACP_LOG_FILE       diagnostic log (redacted); otherwise stderr
  --log-level LEVEL     ZCODE_ACP_LOG_LEVEL      error | warn | info | debug (default info)
`;

/** said on stderr when the ACP agent is started by hand in a terminal (stdin is a TTY): it waits for an editor's JSON-RPC */
export const TTY_HINT =
  "zcode-acp speaks ACP (JSON-RPC) on stdin/stdout; start it from an editor — see `zcode-acp --help`. " +
  "To check your ZCode install, run `zcode-acp check`. Press Ctrl-D to quit.\n";

export function usageError(message: string): BridgeError {
  return new BridgeError("USAGE", `${message}. Run "zcode-acp --help" for the options.`);
}

export function parseCommandLine(argv: readonly string[]): CommandLine {
  const values: Partial<Record<(typeof VALUE_FLAGS)[keyof typeof VALUE_FLAGS], string>> = {};
  let command: CommandName | undefined;
  let json = false;
  let accept = false;
  let probe = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    if (flag in VALUE_FLAGS) {
      const key = VALUE_FLAGS[flag as keyof typeof VALUE_FLAGS];
      const value = eq > 0 && flag !== arg ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === "") throw usageError(`${flag} needs a value`);
      values[key] = value;
    } else if (arg === "--json") json = true;
    else if (arg === "--accept") accept = true;
    else if (arg === "--probe") probe = true;
    else if (arg === "--help" || arg === "-h") command = "help";
    else if (arg === "--version" || arg === "-v") command = command === "help" ? "help" : "version";
    else if (arg === "help" && command === undefined) command = "help";
    else if (arg === "check" && command === undefined) command = "check";
    else if (arg === "onboard" && command === undefined) command = "onboard";
    else if (arg.startsWith("-")) throw usageError(`Unknown option "${arg}"`);
    else throw usageError(`Unknown command "${arg}"`);
  }
  command ??= "acp";
  if (json && command === "acp") throw usageError(`--json is only valid with "check" and "onboard"`);
  if (accept && command !== "onboard") throw usageError(`--accept is only valid with "onboard"`);
  if (probe && command !== "onboard") throw usageError(`--probe is only valid with "onboard"`);
  if (values.report !== undefined && !probe) throw usageError(`--report is only valid with "onboard --probe"`);
  return { command, json, accept, probe, ...values };
}
