import { appendFileSync, closeSync, openSync } from "node:fs";
import { BridgeError } from "../util/errors.js";
import { redact, redactString } from "./redact.js";

export type LogLevel = "error" | "warn" | "info" | "debug";
const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

export interface Logger {
  readonly level: LogLevel;
  error(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  debug(message: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  /** append to this file; otherwise write to stderr. Never stdout. */
  file?: string | undefined;
  scope?: string;
}

/** why `file` cannot be a log file (a directory, a missing directory, no permission), or undefined */
export function logFileProblem(file: string): string | undefined {
  try {
    closeSync(openSync(file, "a"));
    return undefined;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const what = `The log file ${file} (--log-file / ZCODE_ACP_LOG_FILE)`;
    if (e.code === "EISDIR") return `${what} is a directory; give the path of a file`;
    if (e.code === "ENOENT") return `${what} cannot be created: its directory does not exist`;
    return `${what} cannot be opened for writing (${e.code ?? e.message})`;
  }
}

/**
 * Diagnostic logger: one JSON line per record, redacted, to stderr or a file. A file that cannot
 * be opened is refused at once (USAGE, the CLI exits 2); one that fails later (a full disk,
 * /dev/full) is reported once on stderr, and the log continues on stderr.
 */
export function createLogger(options: LoggerOptions): Logger {
  const file = options.file;
  if (file !== undefined) {
    const problem = logFileProblem(file);
    if (problem !== undefined) throw new BridgeError("USAGE", `${problem}.`);
  }
  let fileFailed = false;
  const write = (line: string): void => {
    if (file !== undefined && !fileFailed) {
      try {
        appendFileSync(file, line);
        return;
      } catch (error) {
        // a log file we cannot write must not break the bridge: say so once, then use stderr
        fileFailed = true;
        const code = (error as NodeJS.ErrnoException).code ?? "write error";
        process.stderr.write(`zcode-acp: cannot write the log file ${file} (${code}); logging to stderr from now on\n`);
      }
    }
    process.stderr.write(line);
  };
  const make = (scope: string | undefined): Logger => {
    const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
      if (ORDER[level] > ORDER[options.level]) return;
      const record: Record<string, unknown> = { t: new Date().toISOString(), level, msg: redactString(message) };
      if (scope) record.scope = scope;
      if (fields) record.fields = redact(fields, { keepPromptText: options.level === "debug" });
      write(`${JSON.stringify(record)}\n`);
    };
    return {
      level: options.level,
      error: (m, f) => emit("error", m, f),
      warn: (m, f) => emit("warn", m, f),
      info: (m, f) => emit("info", m, f),
      debug: (m, f) => emit("debug", m, f),
      child: (s) => make(scope ? `${scope}.${s}` : s),
    };
  };
  return make(options.scope);
}

/** A logger that drops everything (tests of pure logic). */
export const silentLogger: Logger = createLogger({ level: "error", file: "/dev/null" });
