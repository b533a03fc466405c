/**
 * The shareable report of `zcode-acp onboard --probe` (docs/runtime-contract.md §8): the review's
 * versions, hashes and method presence, plus what the probe's host start answered (V4 hello
 * protocol version and capabilities, listSessions without includeArchived). Redacted so that a
 * user can attach it to a bug report: no path under the home directory (shown as "~"), no account
 * data (the hello's `auth` and any session content are never copied; e-mail addresses and tokens
 * in error messages are masked), no install root outside the well-known defaults.
 */
import type { OnboardReport } from "./inspect.js";

export type ProbeStepStatus = "ok" | "failed" | "not tried";

export interface ProbeStep {
  status: ProbeStepStatus;
  /** one line for people: what was answered, or why it failed / was not tried */
  detail: string;
  /** the bridge's error code and the host's JSON-RPC code, when it failed */
  error?: { code: string; rpcCode?: number };
}

/** What the probe ran and what the host answered (src/cli/onboard-probe.ts fills it). */
export interface ProbeResult {
  /** SHA-256 of what ran: the Electron executable, the host entry and the RPC module (the bootstrap checks the last two again) */
  ran: { executable: string; hostIndex: { path: string; sha256: string }; rpcModule: { path: string; sha256: string } };
  start: ProbeStep;
  hello: ProbeStep & { protocolVersion?: unknown; clientMode?: unknown; deliveryProfile?: unknown; capabilities?: Record<string, unknown> };
  initialize: ProbeStep;
  /** listSessions({workspacePath}) without includeArchived: the parameter CLI 0.17.0 dropped */
  listSessions: ProbeStep & { sessions?: number };
  /**
   * what the running host serves of the candidate's optional and legacy calls (adr/0033): each probed
   * once with a params object naming no session; "Method not found" is not served. Absent: not probed.
   */
  served?: ProbeStep & { probed: string[]; notServed: string[] };
  /** how long the host took to answer ready, in ms */
  startupMs?: number;
}

export interface ShareableReport {
  kind: "zcode-acp onboard probe";
  schema: 1;
  zcodeAcp: string;
  createdAt: string;
  system: string;
  install: { root: string };
  zcode: { appVersion?: string; appBuild?: string; cliVersion?: string };
  hashes: { cli?: string; hostIndex?: { path: string; sha256: string }; rpcModule?: { path: string; sha256: string }; executable?: string };
  review: {
    outcome: OnboardReport["outcome"];
    line?: string;
    input?: string;
    read?: string;
    sessionList?: string;
    contextUsage?: string;
    missing?: string[];
    rpcRoles?: string;
    named: string[];
    notNamed: string[];
    nearestPinned?: string;
    differences: string[];
  };
  probe: Omit<ProbeResult, "ran">;
}

export interface RedactionContext {
  /** the home directory (HOME, USERPROFILE, …) shown as "~" */
  homes: readonly string[];
  /** the user's name, masked wherever it appears in a path */
  user?: string | undefined;
}

/** capability values kept in the report: booleans, numbers, short identifiers, lists of those */
function capabilityValue(value: unknown): unknown {
  if (typeof value === "boolean" || typeof value === "number") return value;
  if (typeof value === "string") return /^[A-Za-z0-9._:-]{1,64}$/.test(value) ? value : "(redacted)";
  if (Array.isArray(value)) return value.slice(0, 64).map(capabilityValue);
  if (typeof value === "object" && value !== null) return "(object)";
  return value === null ? null : "(redacted)";
}

/** The hello's capabilities, values reduced to what says nothing about the account (auth is never copied). */
export function shareableCapabilities(capabilities: unknown): Record<string, unknown> {
  if (typeof capabilities !== "object" || capabilities === null || Array.isArray(capabilities)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(capabilities as Record<string, unknown>).slice(0, 128)) {
    if (/^[A-Za-z0-9._-]{1,64}$/.test(key) && !/auth|token|secret|account|user|email|key/i.test(key)) out[key] = capabilityValue(value);
  }
  return out;
}

/** Mask what could identify the user in one string: the home directory, the user name in paths, e-mail addresses, long tokens. */
export function redactText(text: string, context: RedactionContext): string {
  let out = text;
  const homes = [...new Set(context.homes.flatMap((h) => [h, h.replaceAll("\\", "/")]))]
    .filter((h) => h.length > 1)
    .sort((a, b) => b.length - a.length);
  for (const home of homes) out = out.split(home).join("~");
  if (context.user !== undefined && context.user.length > 1) {
    const escaped = context.user.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`([\\\\/])${escaped}(?=[\\\\/]|$)`, "gi"), "$1<user>");
  }
  out = out.replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g, "<email>");
  out = out.replace(/\b(?:sk|pk|ey|gh[pousr])[A-Za-z0-9_-]{20,}\b/g, "<token>");
  // a path under a per-user directory that the home prefix did not catch (another account, a temp dir)
  out = out.replace(/(\/Users\/|\/home\/|[A-Za-z]:\\Users\\)[^/\\\s"']+/g, "$1<user>");
  return out;
}

/** Every string of a JSON value, redacted. */
export function redactDeep<T>(value: T, context: RedactionContext): T {
  if (typeof value === "string") return redactText(value, context) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactDeep(v, context)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactDeep(v, context);
    return out as T;
  }
  return value;
}

/** The report a user can share: the review's facts and the probe's answers, redacted. */
export function shareableReport(
  review: OnboardReport,
  probe: ProbeResult,
  meta: { zcodeAcp: string; now: Date; defaultRoots: readonly string[] },
  context: RedactionContext,
): ShareableReport {
  const { ran, ...answers } = probe;
  const root = review.installRoot;
  const report: ShareableReport = {
    kind: "zcode-acp onboard probe",
    schema: 1,
    zcodeAcp: meta.zcodeAcp,
    createdAt: meta.now.toISOString(),
    system: review.systemPlatform,
    install: {
      root:
        root === undefined
          ? "unknown"
          : meta.defaultRoots.includes(root)
            ? `${root} (a default location)`
            : "(given with --zcode-install or ZCODE_ACP_ZCODE_INSTALL)",
    },
    zcode: {
      ...(review.appVersion !== undefined ? { appVersion: review.appVersion } : {}),
      ...(review.appBuild !== undefined ? { appBuild: review.appBuild } : {}),
      ...(review.cliVersion !== undefined ? { cliVersion: review.cliVersion } : {}),
    },
    hashes: {
      ...(review.cliSha256 !== undefined ? { cli: review.cliSha256 } : {}),
      hostIndex: ran.hostIndex,
      rpcModule: ran.rpcModule,
      executable: ran.executable,
    },
    review: {
      outcome: review.outcome,
      ...(review.line ? { line: review.line.id } : {}),
      ...(review.paths ? { input: review.paths.input, read: review.paths.read } : {}),
      ...(review.paths?.sessionList !== undefined ? { sessionList: review.paths.sessionList } : {}),
      ...(review.paths?.contextUsage !== undefined ? { contextUsage: review.paths.contextUsage } : {}),
      ...(review.paths?.missing !== undefined ? { missing: review.paths.missing } : {}),
      ...(review.rpcModule ? { rpcRoles: review.rpcModule.foundBy } : {}),
      named: review.methods?.named ?? [],
      notNamed: review.methods?.notNamed ?? [],
      ...(review.nearest ? { nearestPinned: `${review.nearest.release} (${review.nearest.manifest})` } : {}),
      differences: review.nearest?.differences ?? [],
    },
    probe: answers,
  };
  return redactDeep(report, context);
}

/** The report as Markdown (a `.md` report file). */
export function probeMarkdown(report: ShareableReport): string {
  const lines: string[] = [];
  const code = (value: unknown): string => `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
  lines.push(`# zcode-acp onboard probe: ZCode ${report.zcode.appVersion ?? "unknown"}`, "");
  lines.push(`- zcode-acp: ${report.zcodeAcp}`, `- created: ${report.createdAt}`, `- system: ${report.system}`);
  lines.push(`- install root: ${report.install.root}`);
  lines.push(`- app version: ${report.zcode.appVersion ?? "unknown"}${report.zcode.appBuild ? ` (build ${report.zcode.appBuild})` : ""}`);
  lines.push(`- agent CLI version: ${report.zcode.cliVersion ?? "unknown"}`, "");
  lines.push("## SHA-256 of what ran", "");
  if (report.hashes.executable) lines.push(`- executable: ${code(report.hashes.executable)}`);
  if (report.hashes.hostIndex) lines.push(`- ${report.hashes.hostIndex.path}: ${code(report.hashes.hostIndex.sha256)}`);
  if (report.hashes.rpcModule) lines.push(`- ${report.hashes.rpcModule.path}: ${code(report.hashes.rpcModule.sha256)}`);
  if (report.hashes.cli) lines.push(`- glm/zcode.cjs (not run): ${code(report.hashes.cli)}`);
  lines.push("", "## Review", "");
  lines.push(`- outcome: ${report.review.outcome}`);
  if (report.review.line) lines.push(`- release line: ${report.review.line}`);
  if (report.review.input) lines.push(`- input path: ${report.review.input}`);
  if (report.review.read) lines.push(`- read path: ${report.review.read}`);
  if (report.review.sessionList) lines.push(`- session list: ${report.review.sessionList}`);
  if (report.review.contextUsage) lines.push(`- context usage: ${report.review.contextUsage}`);
  if (report.review.missing) lines.push(`- missing: ${report.review.missing.join(", ") || "nothing this path needs"}`);
  if (report.review.rpcRoles) lines.push(`- RPC roles: ${report.review.rpcRoles}`);
  lines.push(`- named in the host bundle: ${report.review.named.join(", ") || "none"}`);
  lines.push(`- not named: ${report.review.notNamed.join(", ") || "none"}`);
  if (report.review.nearestPinned) lines.push(`- nearest pinned release: ${report.review.nearestPinned}`);
  for (const difference of report.review.differences) lines.push(`  - ${difference}`);
  lines.push("", "## Probe (the host started, no model call)", "");
  const step = (name: string, s: ProbeStep): void => {
    lines.push(
      `- ${name}: ${s.status} — ${s.detail}${s.error ? ` (${s.error.code}${s.error.rpcCode !== undefined ? `, ${s.error.rpcCode}` : ""})` : ""}`,
    );
  };
  step("host start", report.probe.start);
  step("V4 hello", report.probe.hello);
  if (report.probe.hello.protocolVersion !== undefined) lines.push(`  - protocol version: ${code(report.probe.hello.protocolVersion)}`);
  if (report.probe.hello.capabilities) lines.push(`  - capabilities: ${code(report.probe.hello.capabilities)}`);
  step("V4 clientHello (initializeConversationV4)", report.probe.initialize);
  step("listSessions without includeArchived", report.probe.listSessions);
  if (report.probe.served) step("what the running host serves", report.probe.served);
  return `${lines.join("\n")}\n`;
}
