/**
 * Checks what a simulated install sends against the schemas transcribed from ZCode's source
 * (legacy.ts, v4.ts; adr/0035). The simulator records what it sends when ZCODE_SIM_EMIT_LOG names a
 * file (fixtures/sim/app/out/host/sim-emit-log.js); `checkEmitLog` reads that file and returns every
 * violation with its exact path, e.g. `legacy-event turn.completed: payload.resultType: Invalid option`.
 */
import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { sessionEvent, stateUpdatedNotification, subagentsResult } from "./legacy.js";
import { commandAck, conversationFrame, rowsRange, subscribeAck, wireFrame } from "./v4.js";

export * as legacy from "./legacy.js";
export * as v4 from "./v4.js";

/** The record kinds of sim-emit-log.js and the ZCode schema each is checked against. */
export const EMIT_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  "legacy-event": sessionEvent,
  "legacy-state-updated": stateUpdatedNotification,
  "v4-frame": conversationFrame,
  "v4-wire": wireFrame,
  "v4-ack": commandAck,
  "v4-rows-range": rowsRange,
  "v4-subscribe-ack": subscribeAck,
  "subagent-directory": subagentsResult,
};

export interface Violation {
  /** the record kind (sim-emit-log.js EMIT) */
  kind: string;
  /** the legacy event type, the V4 payload kind or the ack status: where to look */
  label: string;
  /** dotted path inside the record's value, e.g. `payload.deltas.3.row.marker` */
  path: string;
  message: string;
}

/** `a.b.3.c` */
export function pathOf(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join(".");
}

function labelOf(kind: string, value: unknown): string {
  const v = value as Record<string, unknown> | undefined;
  if (kind === "legacy-event") return String(v?.type);
  if (kind === "v4-frame") return String((v?.payload as Record<string, unknown> | undefined)?.kind);
  if (kind === "v4-wire") return String(v?.kind);
  if (kind === "v4-ack") return String(v?.status);
  return kind;
}

/**
 * Check one record. Unions report the member whose discriminator matched; a failing union with no
 * matching member is reported at the union's path. One violation per issue.
 */
export function checkRecord(kind: string, value: unknown): Violation[] {
  const schema = EMIT_SCHEMAS[kind];
  const label = labelOf(kind, value);
  if (!schema) return [{ kind, label, path: "", message: `unknown emit-log kind ${JSON.stringify(kind)}` }];
  const parsed = schema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({
    kind,
    label,
    path: pathOf(issue.path),
    message: issue.code === "unrecognized_keys" ? `unknown key(s) ${issue.keys.join(", ")}` : issue.message,
  }));
}

export function formatViolation(v: Violation): string {
  return `${v.kind} ${v.label}: ${v.path || "(root)"}: ${v.message}`;
}

/**
 * A violation that another branch owns and fixes (the lead deletes the entry at merge time).
 * `kind`, `label` and `path` must match exactly, `message` is matched as a substring.
 */
export interface KnownViolation {
  kind: string;
  label: string;
  /** the path with array indexes replaced by `*` (`payload.deltas.*.row.marker`) */
  path: string;
  message: string;
  owner: string;
  reason: string;
}

/** Array indexes to `*`, so one entry covers every occurrence. */
export function pathPattern(path: string): string {
  return path
    .split(".")
    .map((p) => (/^\d+$/.test(p) ? "*" : p))
    .join(".");
}

export function isKnown(v: Violation, known: readonly KnownViolation[]): KnownViolation | undefined {
  const pattern = pathPattern(v.path);
  return known.find((k) => k.kind === v.kind && k.label === v.label && k.path === pattern && v.message.includes(k.message));
}

export interface EmitLogReport {
  records: number;
  byKind: Record<string, number>;
  /** records by `kind label` (`v4-wire fragment`, `legacy-event turn.steerQueued`) */
  byLabel: Record<string, number>;
  violations: Violation[];
  /** true when the simulator's bound was reached (the record is short) */
  full: boolean;
}

/** Read an emit log and check every record in it. */
export async function checkEmitLog(file: string): Promise<EmitLogReport> {
  let text = "";
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const report: EmitLogReport = { records: 0, byKind: {}, byLabel: {}, violations: [], full: false };
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const { kind, value } = JSON.parse(line) as { kind: string; value: unknown };
    if (kind === "emit-log-full") {
      report.full = true;
      continue;
    }
    report.records += 1;
    report.byKind[kind] = (report.byKind[kind] ?? 0) + 1;
    const label = `${kind} ${labelOf(kind, value)}`;
    report.byLabel[label] = (report.byLabel[label] ?? 0) + 1;
    report.violations.push(...checkRecord(kind, value));
  }
  return report;
}
