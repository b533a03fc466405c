/** The human-readable form of an Assessment (`zcode-acp check` without --json). */
import type { Advisory, Assessment, AssessmentStep, CliVersionSource, FilePinning } from "./types.js";
import { STEP_TITLES } from "./step-recorder.js";

/**
 * What `check` (which starts nothing) can say of the path (adr/0033): the manifest — for an
 * onboarded build, the host bundle's text — is the upper bound; the running host decides.
 */
export const RUNNING_HOST_DECIDES =
  "the running host decides (check starts nothing): the paths above are the manifest's upper bound; " +
  "a call or event the host does not serve is learned at its first use and the session falls back to V4 where allowed, " +
  "else fails naming it (`zcode-acp onboard --probe` shows what a running host serves)";

const MARK: Record<AssessmentStep["status"], string> = { pass: "ok  ", fail: "FAIL", diagnostic: "note", skipped: "skip" };

/** why a CLI version can be unknown: it is never run (adr/0020) */
export const CLI_UNREAD_WHY = "its SHA-256 is pinned nowhere and it declares no single version; zcode-acp does not run it";

/** why the version of a CLI a local manifest pins as "unknown" is not known */
export const CLI_UNKNOWN_PINNED_WHY = "it declares no single version and zcode-acp does not run it; a local manifest pins its SHA-256";

/** why the CLI version is unknown, by where it came from */
export function cliUnknownWhy(from: CliVersionSource | undefined): string {
  return from === "pinned CLI SHA-256" ? CLI_UNKNOWN_PINNED_WHY : CLI_UNREAD_WHY;
}

/** "CLI 0.16.5", or "CLI version unknown (…why…)" when it could not be read */
export function cliPhrase(version: string | undefined, from?: CliVersionSource): string {
  return version === undefined ? `CLI version unknown (${cliUnknownWhy(from)})` : `CLI ${version}`;
}

function show(value: unknown): string {
  if (value === undefined) return "-";
  if (Array.isArray(value)) return value.map((v) => show(v)).join(" | ");
  return typeof value === "string" ? value : JSON.stringify(value);
}

function formatPin(pin: FilePinning): string {
  const what = pin.path !== undefined ? `${pin.what} (${pin.path})` : pin.what;
  const when = pin.on !== undefined ? ` on ${pin.on}` : "";
  const record = pin.record !== undefined ? ` [${pin.record}]` : "";
  return `${what}: ${pin.how}${when}${record}${pin.note !== undefined ? ` (${pin.note})` : ""}`;
}

export function formatAssessment(report: Assessment): string {
  const lines: string[] = [];
  lines.push(
    `ZCode install check: ${report.supported ? "supported" : "NOT supported"}${report.cliIntegrity === "modified" ? " (agent CLI modified)" : ""}`,
  );
  lines.push(`  ${report.message}`);
  lines.push("");
  if (report.advisories !== undefined && report.advisories.length > 0) {
    lines.push(...formatAdvisories(report.advisories, report.appVersion), "");
  }
  const width = Math.max(...Object.values(STEP_TITLES).map((t) => t.length));
  for (const step of report.steps) {
    lines.push(`  [${MARK[step.status]}] ${STEP_TITLES[step.id].padEnd(width)}  ${step.summary}`);
    // evidence for what needs attention; passing steps stay one line
    if ((step.status === "fail" || step.status === "diagnostic") && step.evidence) {
      // only the pairs that differ (a step's evidence may also hold the pairs that matched before it failed)
      const pairs = Object.entries(step.evidence);
      const differing = pairs.filter(([, { expected, actual }]) => show(expected) !== show(actual));
      for (const [field, { expected, actual }] of differing.length > 0 ? differing : pairs) {
        lines.push(`         ${field}: expected ${show(expected)}, actual ${show(actual)}`);
      }
    }
  }
  lines.push("");
  if (report.installRoot !== undefined) lines.push(`  install root:     ${report.installRoot}`);
  if (report.systemPlatform !== undefined) lines.push(`  this system:      ${report.systemPlatform}`);
  if (report.manifest !== undefined) lines.push(`  manifest:         ${report.manifest.artifact.id} (${report.manifestFile ?? "?"})`);
  // which path the sessions take (issue 26)
  const paths = report.hostPaths;
  if (paths !== undefined) {
    lines.push(`  read path:        ${paths.read}`);
    lines.push(`  input path:       ${paths.input}`);
    lines.push(`  session list:     ${paths.sessionList}`);
    lines.push(`  context usage:    ${paths.contextUsage}`);
    lines.push(`  missing:          ${paths.missing.length > 0 ? paths.missing.join(", ") : "nothing this path needs"}`);
    lines.push(`  path chosen by:   ${RUNNING_HOST_DECIDES}`);
  }
  // which file is pinned how (adr/0020)
  (report.pinning ?? []).forEach((pin, i) => lines.push(`  ${i === 0 ? "pinned:" : ""}`.padEnd(20) + formatPin(pin)));
  if (report.appVersion !== undefined)
    lines.push(
      `  app version:      ${report.appVersion}${report.diagnostics.appBuild !== undefined ? ` (build ${report.diagnostics.appBuild})` : ""}`,
    );
  if (report.cliVersion !== undefined || report.cliVersionFrom !== undefined)
    lines.push(
      `  CLI version:      ${report.cliVersion ?? `unknown (${cliUnknownWhy(report.cliVersionFrom)})`}` +
        `${report.cliIntegrity !== undefined ? ` (${report.cliIntegrity})` : ""}`,
    );
  if (report.diagnostics.metadataSha256 !== undefined) lines.push(`  metadata SHA-256: ${report.diagnostics.metadataSha256}`);
  const cache = report.diagnostics.cache;
  if (cache !== undefined)
    lines.push(
      `  cache:            ${cache.hits} hit(s), ${cache.misses} miss(es)` +
        `${cache.rebuilt ? ", corrupt file rebuilt" : ""}${cache.file ? ` (${cache.file})` : " (in memory)"}`,
    );
  return `${lines.join("\n")}\n`;
}

/** The advisories of the release (adr/0021), as lines of `check`'s report. */
export function formatAdvisories(advisories: readonly Advisory[], appVersion: string | undefined): string[] {
  const lines = [`  Advisories for ZCode ${appVersion ?? "(unknown version)"}:`];
  for (const advisory of advisories) {
    lines.push(`  [${advisory.severity}] ${advisory.summary}`);
    lines.push(`         What you can do: ${advisory.action}`);
    if (advisory.fixedIn !== undefined) lines.push(`         Fixed in: ZCode ${advisory.fixedIn}`);
    lines.push(`         Source: ${advisory.source} (advisory ${advisory.id})`);
  }
  return lines;
}
