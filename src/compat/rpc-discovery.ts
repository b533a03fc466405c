/**
 * Finding the RPC module by its exports (docs/runtime-contract.md §2.1, §7), shared by the check and `onboard`:
 *   1. candidates are the host index's static relative imports, resolved inside the app archive;
 *   2. a module whose path and SHA-256 are pinned (by the manifest, or by the first-use store) is
 *      looked up among them directly: no search, so other chunks that mention the RPC classes
 *      cannot make a pinned install ambiguous;
 *   3. without a pin, the imports whose text names both RPC classes (a necessary condition,
 *      nothing is imported yet) are imported one by one inside the install's Electron, and judged by
 *      the roles their exports hold: exactly one module may hold them (none: missing; two:
 *      ambiguous). A module that merely names the classes (the 3.12 host's companion that wraps a
 *      ChannelClient in typed service proxies) holds no role and is not the RPC module.
 * Only static imports of the verified host entry are ever imported: code the entry itself loads
 * (adr/0008, adr/0020).
 */
import { readMember, type MemberLocation } from "../install/app-archive.js";
import { cachedFact, type FingerprintCache } from "../install/fingerprint-cache.js";
import { resolveInArchive, staticRelativeImports } from "../install/host-imports.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import { isRoles, probeRoles, RPC_CLASS_NAMES, RPC_ROLES, type RoleReport, type RpcRole } from "../install/rpc-roles.js";

const MAX_MODULE_BYTES = 16 * 1024 * 1024;

export interface CandidateScan {
  /** archive paths of the host index's static relative imports */
  imports: string[];
  /** those of them whose text names both RPC classes (candidates to import, not yet the RPC module) */
  matches: string[];
}

const isPathList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean";

export async function scanRpcCandidates(
  install: ResolvedInstall,
  hostIndexPath: string,
  hostIndex: MemberLocation,
  cache: FingerprintCache,
): Promise<CandidateScan> {
  const key = `rpc-imports\u0000${hostIndex.file}\u0000${hostIndex.offset}\u0000${hostIndex.size}`;
  const imports = await cachedFact(cache, key, [hostIndex.file, install.archive.path], isPathList, async () => {
    const source = (await readMember(hostIndex, MAX_MODULE_BYTES)).toString("utf8");
    return (await staticRelativeImports(source, hostIndexPath)).map((spec) => resolveInArchive(hostIndexPath, spec));
  });
  const matches: string[] = [];
  for (const path of imports) {
    // each module's text is judged by its own stamps: a chunk edited in place is read again
    const location = await install.archive.locate(path);
    const names = `rpc-names\u0000${location.file}\u0000${location.offset}\u0000${location.size}`;
    const both = await cachedFact(cache, names, [location.file], isBoolean, async () => {
      const text = (await readMember(location, MAX_MODULE_BYTES)).toString("utf8");
      return RPC_CLASS_NAMES.every((name) => text.includes(name));
    });
    if (both) matches.push(path);
  }
  return { imports, matches };
}

export type RoleFinding =
  | { ok: true; exports: Record<RpcRole, string> }
  | { ok: false; problem: "import-failed" | "missing" | "ambiguous"; message: string; roles?: Record<RpcRole, string[]> };

/** Import the module in the install's Electron and find each role's export, exactly one each. */
export async function findRoles(
  install: ResolvedInstall,
  rpcModule: MemberLocation,
  cache: FingerprintCache,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<RoleFinding> {
  const key = `rpc-roles\u0000${rpcModule.importPath}\u0000${rpcModule.offset}\u0000${rpcModule.size}`;
  const report = await cachedFact(
    cache,
    key,
    [rpcModule.file, install.executable],
    (value): value is RoleReport => typeof value === "object" && value !== null && isRoles((value as { roles?: unknown }).roles),
    () => probeRoles({ executable: install.executable, modulePath: rpcModule.importPath, cwd: install.resourcesDir, env, timeoutMs }),
    (value) => value.imported,
  );
  if (!report.imported) return { ok: false, problem: "import-failed", message: report.error };
  const missing = RPC_ROLES.filter((role) => report.roles[role].length === 0);
  const several = RPC_ROLES.filter((role) => report.roles[role].length > 1);
  if (missing.length > 0)
    return { ok: false, problem: "missing", message: `no export has the shape of the ${missing.join(", ")} role`, roles: report.roles };
  if (several.length > 0) {
    return {
      ok: false,
      problem: "ambiguous",
      message: several.map((role) => `${role}: ${report.roles[role].join(", ")}`).join("; "),
      roles: report.roles,
    };
  }
  return { ok: true, exports: { protocol: report.roles.protocol[0]!, client: report.roles.client[0]!, service: report.roles.service[0]! } };
}

export function describeFound(path: string, exports: Record<RpcRole, string>): string {
  return `by shape: ${path}, protocol ${exports.protocol}, client ${exports.client}, service ${exports.service}`;
}

/** A candidate judged by the roles its exports hold. */
export interface JudgedCandidate {
  path: string;
  location: MemberLocation;
  finding: RoleFinding;
}

export interface RoleJudgement {
  /** the candidates whose exports hold every role, exactly one export each */
  holders: JudgedCandidate[];
  /** the candidates whose exports hold every role, but some role twice (ambiguous inside the module) */
  ambiguous: JudgedCandidate[];
  /** the candidates that hold no complete set of roles, or could not be imported */
  others: JudgedCandidate[];
}

/**
 * Imports each candidate (static imports of the verified host entry whose text names both RPC
 * classes) in its own child run of the install's Electron and sorts them by the roles they hold.
 */
export async function judgeCandidates(
  install: ResolvedInstall,
  paths: readonly string[],
  cache: FingerprintCache,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<RoleJudgement> {
  const judgement: RoleJudgement = { holders: [], ambiguous: [], others: [] };
  for (const path of paths) {
    const location = await install.archive.locate(path);
    const finding = await findRoles(install, location, cache, env, timeoutMs);
    const judged = { path, location, finding };
    if (finding.ok) judgement.holders.push(judged);
    else if (finding.problem === "ambiguous") judgement.ambiguous.push(judged);
    else judgement.others.push(judged);
  }
  return judgement;
}

/** "chunk-A.js (import-failed: …); chunk-B.js (missing: …)" for the candidates that hold no roles */
export function describeOthers(others: readonly JudgedCandidate[]): string {
  return others.map((o) => `${o.path} (${o.finding.ok ? "ok" : `${o.finding.problem}: ${o.finding.message}`})`).join("; ");
}
