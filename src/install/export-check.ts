/**
 * The export check (contract §3 step 5): a short child run of the install's Electron executable
 * as Node that imports the RPC module by file URL and reports, for each required export name,
 * whether it exists and its shape. Plain Node cannot import from inside an asar archive; Electron
 * running as Node can, so the import always happens in the install's own executable.
 */
import { pathToFileURL } from "node:url";
import type { ArtifactDescriptor } from "../manifest/types.js";
import { excerpt, runElectronNode } from "./electron-node.js";

export type ExportRole = keyof NonNullable<ArtifactDescriptor["exports"]>;

export interface ExportFinding {
  name: string;
  present: boolean;
  /** typeof the export ("function", "object", …), "missing" when absent */
  type: string;
  /** for objects and functions: whether it has a toService function */
  hasToService: boolean;
}

export type ExportReport =
  | { imported: true; findings: Record<ExportRole, ExportFinding> }
  | { imported: false; error: string };

const MARKER = "__ZCODE_ACP_EXPORT_CHECK__";

/** Runs inside the Electron executable: argv[1] = module URL, argv[2] = JSON {role: name}. */
const PROBE = `
const marker = ${JSON.stringify(MARKER)};
const report = (value) => process.stdout.write("\\n" + marker + JSON.stringify(value) + "\\n", () => process.exit(0));
let names;
try { names = JSON.parse(process.argv[2]); } catch (e) { report({ imported: false, error: "bad probe arguments" }); }
if (names) import(process.argv[1]).then((mod) => {
  const findings = {};
  for (const [role, name] of Object.entries(names)) {
    const present = Object.prototype.hasOwnProperty.call(mod, name);
    const value = present ? mod[name] : undefined;
    const type = !present ? "missing" : value === null ? "null" : typeof value;
    const hasToService = (type === "object" || type === "function") && typeof value.toService === "function";
    findings[role] = { name, present, type, hasToService };
  }
  report({ imported: true, findings });
}, (error) => report({ imported: false, error: String((error && (error.code ? error.code + ": " : "") + error.message) || error).slice(0, 500) }));
`;

export interface ExportCheckOptions {
  executable: string;
  /** file path Electron-as-Node can import (inside the archive for a packed install) */
  modulePath: string;
  exports: NonNullable<ArtifactDescriptor["exports"]>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export async function probeExports(options: ExportCheckOptions): Promise<ExportReport> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const run = await runElectronNode(
    options.executable,
    ["-e", PROBE, pathToFileURL(options.modulePath).href, JSON.stringify(options.exports)],
    { env: options.env, cwd: options.cwd, timeoutMs, maxOutputBytes: 256 * 1024 },
  );
  const line = run.stdout.split("\n").find((l) => l.startsWith(MARKER));
  if (line !== undefined) {
    try {
      const parsed = JSON.parse(line.slice(MARKER.length)) as ExportReport;
      if (parsed.imported === false && typeof parsed.error === "string") return parsed;
      if (parsed.imported === true && typeof parsed.findings === "object" && parsed.findings !== null) return parsed;
    } catch {
      // fall through: an unreadable report is a failed check
    }
  }
  const why = run.failure ?? `exited with code ${String(run.exitCode)} without a report`;
  const detail = excerpt(run.stderr || run.stdout);
  return { imported: false, error: detail ? `${why}: ${detail}` : why };
}

/** Shapes required per role: protocol and client are classes (functions), service is an object with toService. */
export function exportShapeProblem(role: ExportRole, finding: ExportFinding | undefined): string | undefined {
  if (finding === undefined || !finding.present) return "missing";
  if (role === "service") return finding.type === "object" && finding.hasToService ? undefined : `is ${finding.type}${finding.hasToService ? "" : " without toService()"}, expected an object with toService()`;
  return finding.type === "function" ? undefined : `is ${finding.type}, expected a class (function)`;
}

export function expectedShape(role: ExportRole): string {
  return role === "service" ? "object with toService()" : "class (function)";
}
