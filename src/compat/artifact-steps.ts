/**
 * Steps 5 and 6 (docs/runtime-contract.md §3): host index SHA-256, the RPC module found by shape with its pinned
 * path and SHA-256, then its roles (checked inside the install's Electron executable, only after
 * the hashes matched: unverified code is never imported); then the CLI SHA-256, whose difference
 * is the non-blocking diagnostic `modified`.
 */
import type { Manifest } from "./types.js";
import { installProblem, type Evidence } from "../install/install-problem.js";
import type { MemberLocation } from "../install/app-archive.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import type { FingerprintCache } from "../install/fingerprint-cache.js";
import { hashFile, hashMember } from "../install/cached-hash.js";
import { RPC_CLASS_NAMES, RPC_ROLES, ROLE_SHAPES, type RpcRole } from "../install/rpc-roles.js";
import { describeFound, findRoles, scanRpcCandidates } from "./rpc-discovery.js";

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
  rpc: { path: string; exports: Record<RpcRole, string>; foundBy: "shape" };
  summary: string;
  evidence: Evidence;
}

/**
 * Step 5: the host index's SHA-256; the RPC module found by shape among its static imports, at the
 * pinned path with the pinned SHA-256; then (only then) imported to find its roles, whose export
 * names must be the pinned ones where the manifest pins them.
 */
export async function checkHostArtifacts(ctx: ArtifactContext): Promise<HostArtifacts> {
  const { artifact } = ctx.manifest;
  const version = `ZCode ${artifact.appVersion}`;
  const reinstall = `reinstall ZCode ${artifact.appVersion} from the official download`;
  const hostIndex = await ctx.install.archive.locate(artifact.hostIndex.path);
  const evidence: Evidence = {
    [`sha256 ${artifact.hostIndex.path}`]: { expected: artifact.hostIndex.sha256, actual: await hashMember(ctx.cache, hostIndex) },
  };
  if (evidence[`sha256 ${artifact.hostIndex.path}`]!.actual !== artifact.hostIndex.sha256) {
    throw installProblem(
      `The ${version} host files differ from the verified release (SHA-256 mismatch: ${artifact.hostIndex.path}). ` +
        `The install was modified or is a different build; ${reinstall}.`,
      evidence,
    );
  }

  const scan = await scanRpcCandidates(ctx.install, artifact.hostIndex.path, hostIndex, ctx.cache);
  evidence["RPC module (by shape)"] = {
    expected: artifact.rpcModule.path,
    actual: scan.matches.length === 1 ? scan.matches[0] : scan.matches,
  };
  if (scan.matches.length === 0) {
    throw installProblem(
      `No RPC module found: none of the ${scan.imports.length} modules the host index imports defines ${RPC_CLASS_NAMES.join(" and ")}. ` +
        `The install is not the verified ${version}; ${reinstall}.`,
      evidence,
    );
  }
  if (scan.matches.length > 1) {
    throw installProblem(
      `The RPC module is ambiguous: ${scan.matches.join(", ")} all define ${RPC_CLASS_NAMES.join(" and ")}. ` +
        `The install is not the verified ${version}; ${reinstall}.`,
      evidence,
    );
  }
  const found = scan.matches[0]!;
  if (found !== artifact.rpcModule.path) {
    throw installProblem(
      `The RPC module found by shape is ${found}, but the verified ${version} has ${artifact.rpcModule.path}. The install is a different build; ${reinstall}.`,
      evidence,
    );
  }
  const rpcModule = await ctx.install.archive.locate(found);
  const rpcSha = await hashMember(ctx.cache, rpcModule);
  evidence[`sha256 ${found}`] = { expected: artifact.rpcModule.sha256, actual: rpcSha };
  if (rpcSha !== artifact.rpcModule.sha256) {
    throw installProblem(
      `The ${version} host files differ from the verified release (SHA-256 mismatch: ${found}). ` +
        `The install was modified or is a different build; ${reinstall}.`,
      evidence,
    );
  }

  // only now, with its bytes verified, is the module imported (inside the install's executable)
  const roles = await findRoles(ctx.install, rpcModule, ctx.cache, ctx.env, ctx.childTimeoutMs);
  if (!roles.ok) {
    evidence["RPC roles"] = { expected: RPC_ROLES.map((r) => ROLE_SHAPES[r]).join("; "), actual: roles.message };
    const why =
      roles.problem === "import-failed"
        ? `the ZCode executable could not import it (${roles.message}). The executable ${ctx.install.executable} must be the Electron of ${version}`
        : `its exports do not have the RPC roles (${roles.problem}: ${roles.message}). The install does not match the verified ${version}`;
    throw installProblem(`The RPC module ${found} failed the role check: ${why}; reinstall ZCode.`, evidence);
  }
  for (const role of RPC_ROLES)
    evidence[`export ${role}`] = { expected: artifact.exports?.[role] ?? ROLE_SHAPES[role], actual: roles.exports[role] };
  const pinned = artifact.exports;
  if (pinned !== undefined) {
    const differing = RPC_ROLES.filter((role) => pinned[role] !== roles.exports[role]);
    if (differing.length > 0) {
      const detail = differing.map((role) => `${role} is "${roles.exports[role]}", pinned "${pinned[role]}"`).join("; ");
      throw installProblem(
        `The RPC module ${found} exports its roles under other names than the verified ${version} (${detail}); ${reinstall}.`,
        evidence,
      );
    }
  }
  const how = describeFound(found, roles.exports);
  return {
    hostIndex,
    rpcModule,
    rpc: { path: found, exports: roles.exports, foundBy: "shape" },
    evidence,
    summary: `${artifact.hostIndex.path} and ${found} match the verified SHA-256; RPC module found ${how}${pinned ? " (the pinned export names)" : ""}`,
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
        summary:
          "glm/zcode.cjs differs from the verified build (modified). This is a diagnostic and does not block; reinstalling ZCode restores the verified CLI.",
        evidence,
      };
}
