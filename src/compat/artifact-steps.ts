/**
 * Steps 5 and 6 (contract §3): host index and RPC module SHA-256 exactly as the manifest says,
 * then the required exports present with their shape (checked inside the install's Electron
 * executable, only after the hashes matched: unverified code is never imported); then the CLI
 * SHA-256, whose difference is the non-blocking diagnostic `modified`.
 */
import type { Manifest } from "./types.js";
import type { Evidence } from "../install/install-problem.js";
import type { MemberLocation } from "../install/app-archive.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import { cachedFact, type FingerprintCache } from "../install/fingerprint-cache.js";
import { hashFile, hashMember } from "../install/cached-hash.js";
import { expectedShape, exportShapeProblem, probeExports, type ExportReport, type ExportRole } from "../install/export-check.js";
import { StepFailure } from "./step-recorder.js";

export interface ArtifactContext {
  install: ResolvedInstall;
  manifest: Manifest;
  cache: FingerprintCache;
  env: NodeJS.ProcessEnv;
  childTimeoutMs: number;
}

export interface HostArtifacts {
  hostIndex: MemberLocation;
  rpcModule: MemberLocation;
  summary: string;
  evidence: Evidence;
}

const ROLES: readonly ExportRole[] = ["protocol", "client", "service"];

function isPassedReport(value: unknown): value is ExportReport {
  const report = value as ExportReport | null;
  return typeof report === "object" && report !== null && report.imported === true && typeof report.findings === "object";
}

export async function checkHostArtifacts(ctx: ArtifactContext): Promise<HostArtifacts> {
  const { artifact } = ctx.manifest;
  const version = `ZCode ${artifact.appVersion}`;
  const hostIndex = await ctx.install.archive.locate(artifact.hostIndex.path);
  const rpcModule = await ctx.install.archive.locate(artifact.rpcModule.path);
  const evidence: Evidence = {
    [`sha256 ${artifact.hostIndex.path}`]: { expected: artifact.hostIndex.sha256, actual: await hashMember(ctx.cache, hostIndex) },
    [`sha256 ${artifact.rpcModule.path}`]: { expected: artifact.rpcModule.sha256, actual: await hashMember(ctx.cache, rpcModule) },
  };
  const differing = Object.entries(evidence)
    .filter(([, e]) => e.expected !== e.actual)
    .map(([k]) => k.slice("sha256 ".length));
  if (differing.length > 0) {
    throw new StepFailure(
      `The ${version} host files differ from the verified release (SHA-256 mismatch: ${differing.join(", ")}). The install was modified or is a different build; reinstall ZCode ${artifact.appVersion} from the official download.`,
      evidence,
    );
  }

  // the export check imports the (now verified) RPC module inside the install's executable
  const names = artifact.exports;
  if (names === undefined) {
    throw new StepFailure(`The RPC exports of ${version} are found by shape, which this build of zcode-acp does not do yet.`, evidence);
  }
  const key = `exports\u0000${rpcModule.importPath}\u0000${rpcModule.offset}\u0000${rpcModule.size}\u0000${JSON.stringify(names)}`;
  const passed = (report: ExportReport) => report.imported && ROLES.every((role) => exportShapeProblem(role, report.findings[role]) === undefined);
  const report = await cachedFact(
    ctx.cache,
    key,
    [rpcModule.file, ctx.install.executable],
    isPassedReport,
    () => probeExports({ executable: ctx.install.executable, modulePath: rpcModule.importPath, exports: names, cwd: ctx.install.resourcesDir, env: ctx.env, timeoutMs: ctx.childTimeoutMs }),
    passed,
  );
  if (!report.imported) {
    evidence["export check"] = { expected: `import of ${artifact.rpcModule.path} inside the ZCode executable`, actual: `import failed: ${report.error}` };
    throw new StepFailure(
      `The export check failed: the ZCode executable could not import the RPC module ${rpcModule.label} (${report.error}). The executable ${ctx.install.executable} must be the Electron of ZCode ${artifact.appVersion}; reinstall ZCode.`,
      evidence,
    );
  }
  const problems: string[] = [];
  for (const role of ROLES) {
    const finding = report.findings[role];
    const problem = exportShapeProblem(role, finding);
    evidence[`export ${names[role]} (${role})`] = { expected: expectedShape(role), actual: finding?.present ? finding.type + (finding.hasToService ? " with toService()" : "") : "missing" };
    if (problem !== undefined) problems.push(`"${names[role]}" (${role}) ${problem}`);
  }
  if (problems.length > 0) {
    throw new StepFailure(
      `The RPC module ${artifact.rpcModule.path} does not provide the required exports: ${problems.join("; ")}. The install does not match the verified ZCode ${artifact.appVersion}; reinstall ZCode.`,
      evidence,
    );
  }
  return {
    hostIndex,
    rpcModule,
    evidence,
    summary: `${artifact.hostIndex.path} and ${artifact.rpcModule.path} match the verified SHA-256; exports ${ROLES.map((r) => names[r]).join(", ")} present with the expected shape`,
  };
}

export interface CliIntegrity {
  integrity: "verified" | "modified" | "unknown";
  summary: string;
  evidence: Evidence;
}

export async function checkCliIntegrity(install: ResolvedInstall, manifest: Manifest, cache: FingerprintCache): Promise<CliIntegrity> {
  const expected = manifest.artifact.cliSha256;
  let actual: string;
  try {
    actual = await hashFile(cache, install.cli);
  } catch (error) {
    return {
      integrity: "unknown",
      summary: `glm/zcode.cjs could not be hashed (${(error as Error).message}); CLI integrity unknown (diagnostic only)`,
      evidence: { "sha256 glm/zcode.cjs": { expected, actual: "unreadable" } },
    };
  }
  const evidence: Evidence = { "sha256 glm/zcode.cjs": { expected, actual } };
  return actual === expected
    ? { integrity: "verified", summary: "glm/zcode.cjs matches the verified SHA-256", evidence }
    : {
        integrity: "modified",
        summary: "glm/zcode.cjs differs from the verified build (modified). This is a diagnostic and does not block; reinstalling ZCode restores the verified CLI.",
        evidence,
      };
}
