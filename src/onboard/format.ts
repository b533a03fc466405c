/** The human-readable form of an onboarding report (`zcode-acp onboard` without --json). */
import { formatAdvisories } from "../compat/format-assessment.js";
import type { OnboardReport } from "./inspect.js";

/** `interactive`: the question follows (src/cli/onboard-command.ts), so the closing hint about --accept is left out */
export function formatOnboardReport(report: OnboardReport, written?: string, options: { interactive?: boolean } = {}): string {
  const lines: string[] = [];
  const title = { candidate: "candidate found", verified: "already verified", refused: "NO candidate" }[report.outcome];
  lines.push(`ZCode onboarding: ${title}`);
  lines.push(`  ${report.message}`);
  lines.push("");
  const row = (label: string, value: string | undefined): void => {
    if (value !== undefined) lines.push(`  ${label.padEnd(18)}${value}`);
  };
  row("install root:", report.installRoot);
  row("this system:", report.systemPlatform);
  row("app version:", report.appVersion && `${report.appVersion}${report.appBuild ? ` (build ${report.appBuild})` : ""}`);
  row("CLI version:", report.cliVersion && `${report.cliVersion}${report.cliSha256 ? ` (SHA-256 ${report.cliSha256})` : ""}`);
  row("host index:", report.hostIndex && `${report.hostIndex.path} (SHA-256 ${report.hostIndex.sha256})`);
  row("RPC module:", report.rpcModule && `${report.rpcModule.path} (SHA-256 ${report.rpcModule.sha256})`);
  row("RPC roles:", report.rpcModule?.foundBy);
  if (report.line) {
    row("release line:", report.line.id);
    row("  why:", report.line.why);
    for (const other of report.line.evidence.filter((e) => e.id !== report.line!.id))
      row(`  not ${other.id}: `, other.missing.length > 0 ? missingWords(other.missing) : "also complete, less specific");
  }
  if (report.paths) {
    row("input path:", report.paths.input);
    row("read path:", report.paths.read);
    row("session list:", report.paths.sessionList);
    row("context usage:", report.paths.contextUsage);
    if (report.paths.missing !== undefined)
      row("missing:", report.paths.missing.length > 0 ? report.paths.missing.join(", ") : "nothing this path needs");
  }
  row("pinned:", report.pinned);
  if (report.methods) {
    row("named in bundle:", report.methods.named.join(", ") || "none");
    row("not named:", report.methods.notNamed.join(", ") || "none");
  }
  if (report.nearest) {
    row("nearest pinned:", `${report.nearest.release} (${report.nearest.manifest})`);
    for (const difference of report.nearest.differences) lines.push(`    - ${difference}`);
  }
  const advisories = report.candidate?.advisories ?? [];
  if (advisories.length > 0) lines.push("", ...formatAdvisories(advisories, report.appVersion));
  if (report.warning) {
    lines.push("");
    lines.push(`  WARNING: ${report.warning}`);
  }
  if (report.outcome === "candidate" && !options.interactive) {
    lines.push("");
    lines.push(
      written
        ? `  Accepted: written to ${written}. \`zcode-acp check\` now verifies this install by that local manifest; delete the file to undo.`
        : "  Nothing was written. Run `zcode-acp onboard --accept` to pin this build in your local manifest store.",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** what a line misses, in words: "no X" (a line that needs X absent) reads "has X", anything else "lacks X" */
function missingWords(missing: readonly string[]): string {
  const has = missing.filter((m) => m.startsWith("no ")).map((m) => m.slice(3));
  const lacks = missing.filter((m) => !m.startsWith("no "));
  return [...(lacks.length > 0 ? [`lacks ${lacks.join(", ")}`] : []), ...(has.length > 0 ? [`has ${has.join(", ")}`] : [])].join("; ");
}
