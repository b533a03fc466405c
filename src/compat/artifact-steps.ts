/**
 * Steps 5 and 6 (docs/runtime-contract.md §3, §7): the host index's SHA-256; the RPC module — at the
 * path a manifest or the first-use store pins (no search), or, on first use, the one static import
 * of the verified entry whose exports hold the roles — with its SHA-256 and its roles (checked
 * inside the install's Electron executable); then the CLI SHA-256, whose difference is the
 * non-blocking diagnostic `modified`.
 */
import type { FilePinning, Manifest, RpcFound } from "./types.js";
import { installProblem, type Evidence } from "../install/install-problem.js";
import type { MemberLocation } from "../install/app-archive.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import type { FingerprintCache } from "../install/fingerprint-cache.js";
import { hashFile, hashMember } from "../install/cached-hash.js";
import { RPC_CLASS_NAMES, RPC_ROLES, ROLE_SHAPES, type RpcRole } from "../install/rpc-roles.js";
import { describeFound, describeOthers, findRoles, judgeCandidates, scanRpcCandidates, type RoleFinding } from "./rpc-discovery.js";
import { firstUsePinFile, readFirstUsePin, recordFirstUsePin, type FirstUsePin } from "./first-use-pins.js";
import { manifestPinHow, type ManifestKind } from "./pinning.js";

export interface ArtifactContext {
  install: ResolvedInstall;
  manifest: Manifest;
  /** where the selected manifest came from (how its fingerprints are pinned) */
  manifestKind: ManifestKind;
  cache: FingerprintCache;
  env: NodeJS.ProcessEnv;
  childTimeoutMs: number;
  /** the first-use pin store; without it a first-use manifest cannot be verified */
  pinDir?: string;
  /** record a first-use pin when none exists (the bridge's use); `check` only reports that it will be */
  recordFirstUse: boolean;
  now?: () => Date;
}

export interface HostArtifacts {
  hostIndex: MemberLocation;
  rpcModule: MemberLocation;
  rpc: RpcFound;
  /** how the host entry and the RPC module are pinned */
  pinning: FilePinning[];
  /** the first-use pin file this check recorded (undefined: none was recorded now) */
  recordedPin?: string;
  summary: string;
  evidence: Evidence;
}

/** The RPC module's pin in force: from the manifest, or from the first-use store. */
interface ModulePin {
  path: string;
  sha256: string;
  /** the first-use pin and its file, when the pin comes from the store */
  firstUse?: { pin: FirstUsePin; file: string };
}

/** The verified host entry and what the later parts of step 5 share (its evidence, the messages' words). */
interface VerifiedEntry {
  hostIndex: MemberLocation;
  hostSha: string;
  hostPinning: FilePinning;
  evidence: Evidence;
  /** "ZCode <version>" */
  version: string;
  /** what to do about a mismatch */
  reinstall: string;
}

/** The RPC module found (pinned or on first use), before its roles are judged. */
interface ModuleFound {
  rpcPath: string;
  rpcModule: MemberLocation;
  rpcSha: string;
  roles: RoleFinding;
  rpcPinning: FilePinning;
  /** the first-use pin file recorded now */
  recordedPin?: string;
}

type RpcScan = Awaited<ReturnType<typeof scanRpcCandidates>>;

/**
 * Step 5: the host index's SHA-256; the RPC module at its pinned path (or found by its exports on
 * first use) with the pinned (or recorded) SHA-256; its roles, whose export names must be the
 * pinned ones where the manifest pins them. Each part is one function below, in this order.
 */
export async function checkHostArtifacts(ctx: ArtifactContext): Promise<HostArtifacts> {
  const { artifact } = ctx.manifest;
  const entry = await verifyHostEntry(ctx);
  const scan = await scanRpcCandidates(ctx.install, artifact.hostIndex.path, entry.hostIndex, ctx.cache);
  const { pin, pinFile } = await modulePinInForce(ctx, entry);
  const found = pin !== undefined ? await checkPinnedModule(ctx, entry, scan, pin) : await findModuleOnFirstUse(ctx, entry, scan, pinFile!);
  const exports = checkRoles(ctx, entry, found);
  const { rpcPath, rpcModule, rpcSha, rpcPinning, recordedPin } = found;
  const { hostIndex, hostPinning, evidence } = entry;
  const pinned = artifact.exports;
  const how = describeFound(rpcPath, exports);
  const state =
    rpcPinning.how === "will be pinned on first use"
      ? `${rpcPath} found by its exports (${RPC_CLASS_NAMES.join(", ")}), SHA-256 ${rpcSha}: it will be pinned on first use`
      : rpcPinning.how === "pinned on first use"
        ? `${rpcPath} matches the SHA-256 pinned on first use on ${rpcPinning.on ?? "?"} (${rpcPinning.record ?? "?"})`
        : `${rpcPath} matches the verified SHA-256`;
  return {
    hostIndex,
    rpcModule,
    rpc: { path: rpcPath, sha256: rpcSha, exports, foundBy: pin !== undefined ? "pinned path" : "exports" },
    pinning: [hostPinning, rpcPinning],
    ...(recordedPin !== undefined ? { recordedPin } : {}),
    evidence,
    summary: `${artifact.hostIndex.path} matches the verified SHA-256; ${state}; RPC roles ${how}${pinned ? " (the pinned export names)" : ""}`,
  };
}

/** 5a. The host entry: its SHA-256 must be the manifest's. */
async function verifyHostEntry(ctx: ArtifactContext): Promise<VerifiedEntry> {
  const { artifact } = ctx.manifest;
  const version = `ZCode ${artifact.appVersion}`;
  const reinstall = `reinstall ZCode ${artifact.appVersion} from the official download`;
  const hostIndex = await ctx.install.archive.locate(artifact.hostIndex.path);
  const hostSha = await hashMember(ctx.cache, hostIndex);
  const evidence: Evidence = { [`sha256 ${artifact.hostIndex.path}`]: { expected: artifact.hostIndex.sha256, actual: hostSha } };
  if (hostSha !== artifact.hostIndex.sha256) {
    throw installProblem(
      `The ${version} host files differ from the verified release (SHA-256 mismatch: ${artifact.hostIndex.path}). ` +
        `The install was modified or is a different build; ${reinstall}.`,
      evidence,
    );
  }
  const hostPinning: FilePinning = { what: "host entry", path: artifact.hostIndex.path, ...manifestPinHow(ctx.manifestKind) };
  return { hostIndex, hostSha, evidence, hostPinning, version, reinstall };
}

/** 5b. The RPC module's pin in force: the manifest's, else the first-use store's (none yet: first use). */
async function modulePinInForce(
  ctx: ArtifactContext,
  entry: VerifiedEntry,
): Promise<{ pin: ModulePin | undefined; pinFile: string | undefined }> {
  const { artifact } = ctx.manifest;
  const { version, reinstall, hostSha, evidence } = entry;
  let pin: ModulePin | undefined;
  let pinFile: string | undefined;
  if (artifact.rpcModule.pin === undefined) pin = { path: artifact.rpcModule.path, sha256: artifact.rpcModule.sha256 };
  else {
    if (ctx.pinDir === undefined) {
      throw installProblem(
        `${version} leaves its RPC module to be pinned on first use, but no first-use pin store is configured. Set ZCODE_ACP_CONFIG_DIR.`,
        evidence,
      );
    }
    pinFile = firstUsePinFile(ctx.pinDir, artifact.id);
    const recorded = await readFirstUsePin(pinFile);
    if (recorded !== undefined) {
      if (
        recorded.hostIndex.sha256 !== hostSha ||
        recorded.hostIndex.path !== artifact.hostIndex.path ||
        recorded.manifest !== artifact.id
      ) {
        evidence[`pin ${pinFile}`] = { expected: `${artifact.id}, ${artifact.hostIndex.path} ${hostSha}`, actual: recorded.hostIndex };
        throw installProblem(
          `The first-use pin ${pinFile} was recorded for another ${artifact.hostIndex.path} than the verified ${version} entry. ` +
            `zcode-acp will not guess which RPC module to trust: delete that file to pin the module again at the next use ` +
            `(only if you trust this ZCode install).`,
          evidence,
        );
      }
      if (artifact.rpcModule.path !== undefined && recorded.rpcModule.path !== artifact.rpcModule.path) {
        evidence[`pin ${pinFile}`] = { expected: artifact.rpcModule.path, actual: recorded.rpcModule.path };
        throw installProblem(
          `The first-use pin ${pinFile} names the RPC module ${recorded.rpcModule.path}, but the public record of ${version} names ` +
            `${artifact.rpcModule.path}. The install is a different build; ${reinstall} (and delete that file).`,
          evidence,
        );
      }
      pin = { path: recorded.rpcModule.path, sha256: recorded.rpcModule.sha256, firstUse: { pin: recorded, file: pinFile } };
    }
  }
  return { pin, pinFile };
}

/** 5c. A pinned module: looked up among the entry's static imports (no search), its SHA-256 the pinned one. */
async function checkPinnedModule(ctx: ArtifactContext, entry: VerifiedEntry, scan: RpcScan, pin: ModulePin): Promise<ModuleFound> {
  const { artifact } = ctx.manifest;
  const { version, reinstall, evidence } = entry;
  evidence["RPC module (pinned path)"] = { expected: pin.path, actual: scan.imports.includes(pin.path) ? pin.path : scan.imports };
  if (!scan.imports.includes(pin.path)) {
    throw installProblem(
      `The verified ${version} host entry does not import the pinned RPC module ${pin.path}` +
        `${pin.firstUse ? ` (pinned on first use in ${pin.firstUse.file})` : ""}. The install is a different build; ${reinstall}.`,
      evidence,
    );
  }
  const rpcPath = pin.path;
  const rpcModule = await ctx.install.archive.locate(rpcPath);
  const rpcSha = await hashMember(ctx.cache, rpcModule);
  evidence[`sha256 ${rpcPath}`] = { expected: pin.sha256, actual: rpcSha };
  if (rpcSha !== pin.sha256) {
    if (pin.firstUse) {
      const on = pin.firstUse.pin.pinnedAt.slice(0, 10);
      throw installProblem(
        `The RPC module ${rpcPath} of ${version} changed since it was pinned on first use on ${on} ` +
          `(SHA-256 ${rpcSha}, pinned ${pin.sha256} in ${pin.firstUse.file}). Its host entry is still the verified one, ` +
          `so the module was modified after it was pinned: zcode-acp refuses it. Reinstall ZCode ${artifact.appVersion} from the official download; ` +
          `if you are sure the new bytes are genuine, delete ${pin.firstUse.file} to pin the module again at the next use.`,
        evidence,
      );
    }
    throw installProblem(
      `The ${version} host files differ from the verified release (SHA-256 mismatch: ${rpcPath}). ` +
        `The install was modified or is a different build; ${reinstall}.`,
      evidence,
    );
  }
  const roles = await findRoles(ctx.install, rpcModule, ctx.cache, ctx.env, ctx.childTimeoutMs);
  const rpcPinning: FilePinning = pin.firstUse
    ? {
        what: "RPC module",
        path: rpcPath,
        how: "pinned on first use",
        on: pin.firstUse.pin.pinnedAt.slice(0, 10),
        record: pin.firstUse.file,
      }
    : { what: "RPC module", path: rpcPath, ...manifestPinHow(ctx.manifestKind) };
  return { rpcPath, rpcModule, rpcSha, roles, rpcPinning };
}

/** 5d. First use: the one static import of the verified entry whose exports hold the roles (recorded as the pin for the bridge). */
async function findModuleOnFirstUse(ctx: ArtifactContext, entry: VerifiedEntry, scan: RpcScan, pinFile: string): Promise<ModuleFound> {
  const { artifact } = ctx.manifest;
  const { version, reinstall, hostSha, evidence } = entry;
  const judged = await judgeCandidates(ctx.install, scan.matches, ctx.cache, ctx.env, ctx.childTimeoutMs);
  const holders = [...judged.holders, ...judged.ambiguous];
  evidence["RPC module (by its exports)"] = {
    expected: artifact.rpcModule.path ?? "one static import of the host entry whose exports hold the roles",
    actual: holders.length === 1 ? holders[0]!.path : holders.map((h) => h.path),
  };
  if (holders.length === 0) {
    const others = judged.others.length > 0 ? ` (${describeOthers(judged.others)})` : "";
    throw installProblem(
      `No RPC module found: of the ${scan.imports.length} modules the host index imports, none exports ${RPC_ROLES.map((r) => ROLE_SHAPES[r]).join(", ")}` +
        `${others}. The install is not the verified ${version}; ${reinstall}.`,
      evidence,
    );
  }
  if (holders.length > 1) {
    throw installProblem(
      `The RPC module is ambiguous: the exports of ${holders.map((h) => h.path).join(" and ")} all hold the RPC roles. ` +
        `The install is not the verified ${version}; ${reinstall}.`,
      evidence,
    );
  }
  const found = holders[0]!;
  if (artifact.rpcModule.path !== undefined && found.path !== artifact.rpcModule.path) {
    throw installProblem(
      `The RPC module found by its exports is ${found.path}, but the public record of ${version} names ${artifact.rpcModule.path}. ` +
        `The install is a different build; ${reinstall}.`,
      evidence,
    );
  }
  const rpcPath = found.path;
  const rpcModule = found.location;
  const rpcSha = await hashMember(ctx.cache, rpcModule);
  const roles = found.finding;
  evidence[`sha256 ${rpcPath}`] = { expected: "pinned on first use", actual: rpcSha };
  let rpcPinning: FilePinning = { what: "RPC module", path: rpcPath, how: "will be pinned on first use", record: pinFile };
  let recordedPin: string | undefined;
  if (ctx.recordFirstUse && roles.ok) {
    const now = (ctx.now ?? (() => new Date()))();
    const kept = await recordFirstUsePin(
      pinFile,
      {
        manifest: artifact.id,
        appVersion: artifact.appVersion,
        hostIndex: { path: artifact.hostIndex.path, sha256: hostSha },
        rpcModule: { path: rpcPath, sha256: rpcSha },
      },
      now,
    );
    if (kept.rpcModule.path !== rpcPath || kept.rpcModule.sha256 !== rpcSha) {
      evidence[`pin ${pinFile}`] = { expected: kept.rpcModule, actual: { path: rpcPath, sha256: rpcSha } };
      throw installProblem(
        `The RPC module ${rpcPath} (SHA-256 ${rpcSha}) differs from the one another zcode-acp pinned on first use a moment ago ` +
          `(${kept.rpcModule.path}, SHA-256 ${kept.rpcModule.sha256}, in ${pinFile}). zcode-acp refuses it; run \`zcode-acp check\`.`,
        evidence,
      );
    }
    rpcPinning = { what: "RPC module", path: rpcPath, how: "pinned on first use", on: kept.pinnedAt.slice(0, 10), record: pinFile };
    if (kept.pinnedAt === now.toISOString()) recordedPin = pinFile;
  }
  return { rpcPath, rpcModule, rpcSha, roles, rpcPinning, ...(recordedPin !== undefined ? { recordedPin } : {}) };
}

/** 5e. The module's roles: importable in the install's Electron, with the pinned export names where the manifest pins them. */
function checkRoles(ctx: ArtifactContext, entry: VerifiedEntry, found: ModuleFound): Record<RpcRole, string> {
  const { artifact } = ctx.manifest;
  const { version, reinstall, evidence } = entry;
  const { rpcPath, roles } = found;
  if (!roles.ok) {
    evidence["RPC roles"] = { expected: RPC_ROLES.map((r) => ROLE_SHAPES[r]).join("; "), actual: roles.message };
    const why =
      roles.problem === "import-failed"
        ? `the ZCode executable could not import it (${roles.message}). The executable ${ctx.install.executable} must be the Electron of ${version}`
        : `its exports do not have the RPC roles (${roles.problem}: ${roles.message}). The install does not match the verified ${version}`;
    throw installProblem(`The RPC module ${rpcPath} failed the role check: ${why}; reinstall ZCode.`, evidence);
  }
  for (const role of RPC_ROLES)
    evidence[`export ${role}`] = { expected: artifact.exports?.[role] ?? ROLE_SHAPES[role], actual: roles.exports[role] };
  const pinned = artifact.exports;
  if (pinned !== undefined) {
    const differing = RPC_ROLES.filter((role: RpcRole) => pinned[role] !== roles.exports[role]);
    if (differing.length > 0) {
      const detail = differing.map((role) => `${role} is "${roles.exports[role]}", pinned "${pinned[role]}"`).join("; ");
      throw installProblem(
        `The RPC module ${rpcPath} exports its roles under other names than the verified ${version} (${detail}); ${reinstall}.`,
        evidence,
      );
    }
  }
  return roles.exports;
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
