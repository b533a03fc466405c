import { appendFileSync } from "node:fs";
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

/** Diagnostic logger: one JSON line per record, redacted, to stderr or a file. */
export function createLogger(options: LoggerOptions): Logger {
  const write = (line: string): void => {
    if (options.file) {
      try {
        appendFileSync(options.file, line);
        return;
      } catch {
        // fall through to stderr: a log file we cannot write must not break the bridge
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
