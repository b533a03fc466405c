import { writeSync } from "node:fs";
import { redact, redactString } from "./redact.js";
import { openLogFile } from "./log-file.js";

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

/**
 * Diagnostic logger: one JSON line per record, redacted, to stderr or a file. A file that cannot
 * be opened is refused at once (USAGE, the CLI exits 2); one that fails later (a full disk,
 * /dev/full) is reported once on stderr, and the log continues on stderr.
 */
export function createLogger(options: LoggerOptions): Logger {
  const file = options.file;
  // opened once (0600, no symlink: ./log-file.ts); a file that cannot be used throws USAGE here
  const opened = file !== undefined ? openLogFile(file) : undefined;
  let fileFailed = false;
  const write = (line: string): void => {
    if (opened !== undefined && !fileFailed) {
      try {
        const bytes = Buffer.from(line);
        for (let done = 0; done < bytes.length;) done += writeSync(opened.fd, bytes, done);
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
  const logger = make(options.scope);
  if (opened?.tightened !== undefined) logger.warn(`the log file's mode was ${opened.tightened} (it holds session details)`, { file });
  return logger;
}

/** A logger that drops everything (tests of pure logic). */
export const silentLogger: Logger = createLogger({ level: "error", file: "/dev/null" });
