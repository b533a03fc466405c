/**
 * `zcode-acp onboard` (docs/runtime-contract.md §6): for a build no pinned manifest covers, run the
 * compatibility order up to the fingerprints, find the RPC module by shape, choose the release line
 * the bundle shows, compare with the nearest pinned release, and build a candidate manifest with
 * every fingerprint pinned exactly. Inspect only: the host is never launched and nothing is written
 * under ZCode's data (writing the candidate, on --accept, is store.ts).
 */
import { silentLogger, type Logger } from "../log/logger.js";
import { assessInstall } from "../compat/assess.js";
import { hostPaths, missingPathMessage } from "../compat/host-paths.js";
import { compareVersions } from "../compat/select-manifest.js";
import { describeFound, describeOthers, judgeCandidates, scanRpcCandidates } from "../compat/rpc-discovery.js";
import type { Assessment } from "../compat/types.js";
import { readBundleMetadata } from "../install/bundle-metadata.js";
import { hashFile, hashMember } from "../install/cached-hash.js";
import { FingerprintCache } from "../install/fingerprint-cache.js";
import { CHILD_RUN_TIMEOUT_MS } from "../install/electron-node.js";
import { discoverInstallRoot } from "../install/discover.js";
import { isInstallPlatform, INSTALL_PLATFORMS, type InstallPlatform } from "../install/layout.js";
import { installPaths, resolveInstall, type ResolvedInstall } from "../install/resolve-install.js";
import { loadManifests, type LoadedManifest } from "../manifest/load-manifests.js";
import {
  acceptsOptionalParam,
  BUILTIN_PROVIDER_CONFIG,
  findLine,
  unpinnedLineDescriptor,
  V4_INPUT_METHODS,
} from "../manifest/release-lines.js";
import { UNKNOWN_CLI_VERSION } from "../manifest/manifest-schema.js";
import type { Manifest, RpcExports } from "../manifest/types.js";
import type { InstallPaths } from "../install/types.js";
import { validateManifest } from "../manifest/validate-manifest.js";
import { confinedEntry } from "../install/confine.js";
import { joinLayout } from "../install/layout.js";
import { isBridgeError } from "../util/errors.js";
import { PACKAGE_VERSION } from "../version.js";
import { allowedMethods, describeAllowed } from "./allowed-methods.js";
import { chooseLine, hostBundleText, lineEvidence, type LineEvidence } from "./line-evidence.js";
import { inheritedAdvisories } from "./inherited-advisories.js";

export const HOST_INDEX_PATH = "out/host/index.js";

export const UNVERIFIED_WARNING =
  "zcode-acp has NOT verified this ZCode build. Its files are pinned exactly as they are on this machine, " +
  "but nobody has checked that this release behaves like the releases zcode-acp was tested with. " +
  "Accept it only if you installed ZCode from the official download.";

export interface OnboardReport {
  /** candidate: a local manifest can be written; verified: a manifest already verifies the install; refused: no candidate */
  outcome: "candidate" | "verified" | "refused";
  message: string;
  installRoot?: string;
  systemPlatform: string;
  appVersion?: string;
  appBuild?: string;
  cliVersion?: string;
  cliSha256?: string;
  hostIndex?: { path: string; sha256: string };
  rpcModule?: { path: string; sha256: string; foundBy: string };
  roles?: RpcExports;
  line?: { id: string; why: string; evidence: LineEvidence[] };
  nearest?: { release: string; manifest: string; differences: string[] };
  /**
   * which paths the build would use (docs/runtime-contract.md §8): how prompts are sent, how sessions
   * are read; for a candidate also how the session list asks, where the context usage comes from, and
   * what the candidate's path lacks (src/compat/host-paths.ts, as `check` says it once accepted)
   */
  paths?: { input: string; read: string; sessionList?: string; contextUsage?: string; missing?: string[] };
  /** for a candidate: what `--accept` pins and how */
  pinned?: string;
  /** the host methods and events of the onboard checklist, by whether the host bundle names them */
  methods?: { named: string[]; notNamed: string[] };
  candidate?: Manifest;
  warning?: string;
}

/**
 * What the probe (src/cli/onboard-probe.ts) needs to start the candidate's host with the launcher
 * the bridge uses (the shape of src/host/launcher.ts SupportedInstall); never part of the printed report.
 */
export interface ProbeTarget {
  install: { paths: InstallPaths; manifest: Manifest; rpcExports: RpcExports; rpcModuleSha256: string };
  /** the Electron executable the host runs in */
  executable: string;
}

export interface OnboardOptions {
  /** install root; default: the platform's default root (src/install/layout.ts) */
  installRoot?: string;
  /** manifest file or directory replacing the built-in set, for the "already verified" assessment */
  manifestPath?: string;
  /** the local manifest store, for the "already verified" assessment; default: none */
  localManifestDir?: string;
  /** fingerprint cache file; default: none (in memory) */
  cacheFile?: string;
  /** environment of the child runs and of the platform's default root (as for assessInstall); the CLI passes its own */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  arch?: string;
  logger?: Logger;
  childTimeoutMs?: number;
  /** for the acceptance date (tests) */
  now?: () => Date;
  /** the first-use pin store, for the "already verified" assessment of a release whose RPC module is pinned on first use */
  pinDir?: string;
  /** ZCODE_ACP_READ_PATH, for the "already verified" assessment's path */
  readPath?: "legacy" | "v4";
}

class Refusal extends Error {}

export async function inspectForOnboarding(options: OnboardOptions): Promise<OnboardReport> {
  return (await inspectBuild(options)).report;
}

/** The review, and for a candidate what the probe starts (the candidate manifest stays in memory). */
export async function inspectBuild(options: OnboardOptions): Promise<{ report: OnboardReport; target?: ProbeTarget }> {
  const env = options.env;
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const logger = options.logger ?? silentLogger;
  const report: OnboardReport = { outcome: "refused", message: "", systemPlatform: `${platform}-${arch}` };
  const refuse = (message: string): never => {
    throw new Refusal(message);
  };
  try {
    if (!isInstallPlatform(platform)) refuse(`zcode-acp supports ZCode on ${INSTALL_PLATFORMS.join(", ")}; this system is ${platform}.`);
    const root = options.installRoot ?? (await discoverInstallRoot(platform as InstallPlatform, env));
    if (root === undefined) refuse("The default ZCode install location is unknown (LOCALAPPDATA is not set). Pass --zcode-install DIR.");
    report.installRoot = root;

    // an install a manifest already verifies needs nothing
    const { manifestPath, localManifestDir, cacheFile, childTimeoutMs, pinDir, readPath } = options;
    const assessment = await assessInstall({
      installRoot: root,
      manifestPath,
      localManifestDir,
      cacheFile,
      env,
      platform,
      arch,
      logger,
      childTimeoutMs,
      pinDir,
      readPath,
    });
    if (assessment.supported) return { report: verified(report, assessment, manifestPath !== undefined) };

    const cache = await FingerprintCache.load(cacheFile, logger);
    let target: ProbeTarget | undefined;
    try {
      target = await buildCandidate(
        report,
        assessment,
        {
          root: root!,
          platform: platform as InstallPlatform,
          env,
          cache,
          childTimeoutMs: childTimeoutMs ?? CHILD_RUN_TIMEOUT_MS,
          now: options.now ?? (() => new Date()),
        },
        refuse,
      );
    } finally {
      await cache.save();
    }
    return target ? { report, target } : { report };
  } catch (error) {
    if (error instanceof Refusal || isBridgeError(error, "UNSUPPORTED_ZCODE")) {
      report.outcome = "refused";
      report.message = error.message;
      return { report };
    }
    throw error;
  }
}

/** `givenManifest`: the manifests were given with --manifest / ZCODE_ACP_MANIFEST (they replace the pinned ones) */
function verified(report: OnboardReport, assessment: Assessment, givenManifest: boolean): OnboardReport {
  report.outcome = "verified";
  if (assessment.appVersion !== undefined) report.appVersion = assessment.appVersion;
  if (assessment.cliVersion !== undefined) report.cliVersion = assessment.cliVersion;
  const id = assessment.manifest?.artifact.id ?? "";
  const kind =
    assessment.manifestTrust === "local"
      ? "a local manifest you accepted earlier"
      : givenManifest
        ? `the manifest ${id} (given with --manifest / ZCODE_ACP_MANIFEST)`
        : `the pinned manifest ${id}`;
  report.message = `ZCode ${assessment.appVersion ?? ""} is already verified by ${kind}; there is nothing to onboard and nothing was written.`;
  // the path its sessions take, as `check` says it
  if (assessment.hostPaths !== undefined) report.paths = { ...assessment.hostPaths };
  return report;
}

interface Context {
  root: string;
  platform: InstallPlatform;
  env: NodeJS.ProcessEnv;
  cache: FingerprintCache;
  childTimeoutMs: number;
  now: () => Date;
}

async function buildCandidate(
  report: OnboardReport,
  assessment: Assessment,
  ctx: Context,
  refuse: (message: string) => never,
): Promise<ProbeTarget> {
  const pinned = (await loadManifests()).manifests;
  // 1. layout (the generic one; the line's own files are checked once the line is known)
  const install = await resolveInstall(ctx.platform, ctx.root);
  // 2./3. bundle metadata as on every pinned release, and for this system
  const meta = await readBundleMetadata(install.bundleMeta);
  const expected = pinned[0]!.manifest.artifact.metadata;
  for (const field of ["runtime", "entry", "source"] as const) {
    if (meta[field] !== expected[field]) {
      refuse(
        `The bundle metadata glm/.node-bundle-meta.json says ${field} ${JSON.stringify(meta[field] ?? "missing")}, ` +
          `but ZCode builds say ${JSON.stringify(expected[field])}. ` +
          `This is not a ZCode build zcode-acp can drive; nothing was written.`,
      );
    }
  }
  if (meta.platform !== report.systemPlatform)
    refuse(
      `This ZCode build is for ${typeof meta.platform === "string" ? meta.platform : "an unknown platform"}, ` +
        `but this system is ${report.systemPlatform}. Install the ZCode build for ${report.systemPlatform}.`,
    );
  // 4. versions: the assessment above read them (the CLI's without running it, adr/0020)
  const { appVersion } = assessment;
  if (appVersion === undefined) refuse(`${assessment.message} Nothing was written.`);
  // the CLI's version is a diagnostic: a CLI that declares no single version (a real bundled zcode.cjs
  // declares many) is "unknown", its SHA-256 pinned all the same; zcode-acp never runs it to ask
  const cliVersion = assessment.cliVersion ?? UNKNOWN_CLI_VERSION;
  const app = { version: appVersion, build: assessment.diagnostics.appBuild };
  report.appVersion = app.version;
  if (app.build !== undefined) report.appBuild = app.build;
  report.cliVersion = cliVersion;
  report.cliSha256 = await hashFile(ctx.cache, install.cli);
  const samePinned = pinned.find((m) => m.manifest.artifact.appVersion === app.version);
  if (samePinned) {
    refuse(
      `ZCode ${app.version} is pinned by this zcode-acp, but this install does not match it: ${assessment.message} ` +
        `A local manifest never replaces a pinned release; reinstall ZCode ${app.version} from the official download.`,
    );
  }
  // 5. fingerprints: host index, the RPC module by shape, its roles
  const hostIndex = await install.archive.locate(HOST_INDEX_PATH);
  report.hostIndex = { path: HOST_INDEX_PATH, sha256: await hashMember(ctx.cache, hostIndex) };
  const scan = await scanRpcCandidates(install, HOST_INDEX_PATH, hostIndex, ctx.cache);
  // the static imports that name both RPC classes are imported (the one documented exception to
  // "nothing unverified runs": code the host entry loads itself, adr/0020) and judged by their exports
  const judged = await judgeCandidates(install, scan.matches, ctx.cache, ctx.env, ctx.childTimeoutMs);
  const holders = [...judged.holders, ...judged.ambiguous];
  if (holders.length === 0)
    refuse(
      `No RPC module found: none of the ${scan.imports.length} modules ${HOST_INDEX_PATH} imports ` +
        `exports MessagePortProtocol, ChannelClient and a service proxy${judged.others.length > 0 ? ` (${describeOthers(judged.others)})` : ""}. ` +
        "zcode-acp cannot drive this build; nothing was written.",
    );
  if (holders.length > 1)
    refuse(
      `The RPC module is ambiguous: the exports of ${holders.map((h) => h.path).join(" and ")} all hold the RPC roles. ` +
        `zcode-acp cannot tell which one the host uses; nothing was written.`,
    );
  const rpcPath = holders[0]!.path;
  const rpcModule = holders[0]!.location;
  const rpcSha = await hashMember(ctx.cache, rpcModule);
  const roles = holders[0]!.finding;
  if (!roles.ok) refuse(`The RPC module ${rpcPath} failed the role check (${roles.problem}: ${roles.message}); nothing was written.`);
  const exports = roles.exports;
  report.rpcModule = { path: rpcPath, sha256: rpcSha, foundBy: describeFound(rpcPath, exports) };
  report.roles = exports;
  // the line the bundle shows
  const bundle = await hostBundleText(install, HOST_INDEX_PATH);
  report.methods = checklistMethods(bundle.text);
  const read = readPath(bundle.text);
  report.paths = { input: inputPath(bundle.text), read: read.path };
  const evidence = lineEvidence(bundle.text);
  const chosen = chooseLine(evidence);
  if (read.missing.length > 0 || !chosen) {
    const problems: string[] = [];
    if (read.missing.length > 0) problems.push(`${read.path}; missing: ${read.missing.join(", ")}`);
    if (!chosen)
      problems.push(
        `no release line this zcode-acp implements matches this build (${evidence.map((e) => `${e.id} lacks ${e.missing.join(", ")}`).join("; ")})`,
      );
    refuse(`A candidate would not run: ${problems.join(". ")}. Update zcode-acp; nothing was written.`);
  }
  report.line = {
    id: chosen.id,
    why: `the host bundle (${bundle.modules} modules) names every method and marker of ${chosen.id}: ${chosen.found.join(", ")}`,
    evidence,
  };
  const releaseLine = findLine(chosen.id)!;
  if (releaseLine.needsBuiltinProviderConfig) install.builtinProviderConfig = await requireLineFile(install);
  // the nearest pinned release of the line, and what differs; a line none of whose releases is
  // pinned yet (zcode-task-v3, 4.x) takes the line's own descriptor, and the review says so
  const nearest = nearestPinned(pinned, chosen.id, app.version);
  const lineDescriptor = nearest ? undefined : unpinnedLineDescriptor(releaseLine);
  if (!nearest && !lineDescriptor)
    refuse(`No pinned release of the line ${chosen.id} exists to take its protocol descriptor from; update zcode-acp.`);
  // the allowlist: the base's, less what this build does not name
  const allowed = allowedMethods(nearest ? nearest.manifest.protocol : lineDescriptor!, releaseLine, bundle.text);
  // the input path the candidate will use: V4 only where every V4 input method stays allowed
  report.paths.input =
    allowed.v4 === "named" ? "V4 input (sendConversationCommandV4 / sendText)" : "legacy sendPrompt (no steering or queueing)";
  report.nearest = nearest
    ? {
        release: nearest.manifest.artifact.appVersion,
        manifest: nearest.manifest.artifact.id,
        differences: [
          ...differences(nearest.manifest, {
            cliVersion,
            cliSha256: report.cliSha256,
            hostIndexSha: report.hostIndex.sha256,
            rpcPath,
            rpcSha,
            exports,
          }),
          ...describeAllowed(allowed),
        ],
      }
    : {
        release: "none",
        manifest: `no release of ${chosen.id} is pinned yet: the descriptor is the line's own, as this zcode-acp implements it`,
        differences: [
          `every file hash, the RPC module and its exports are this build's (there is no pinned release of ${chosen.id} to compare with)`,
          ...describeAllowed(allowed),
        ],
      };
  const candidate: Manifest = {
    schemaVersion: 1,
    trust: "local",
    acceptedAt: ctx.now().toISOString(),
    acceptedBy: `zcode-acp ${PACKAGE_VERSION}`,
    artifact: {
      id: `zcode-host-${app.version}-local`,
      appVersion: app.version,
      cliVersion,
      cliSha256: report.cliSha256,
      protocolId: chosen.id,
      hostIndex: { path: HOST_INDEX_PATH, sha256: report.hostIndex.sha256 },
      rpcModule: { path: rpcPath, sha256: rpcSha },
      exports: { ...exports },
      metadata: { ...expected },
    },
    protocol: allowed.protocol,
  };
  const advisories = inheritedAdvisories(pinned, candidate.artifact.hostIndex);
  if (advisories.length > 0) candidate.advisories = advisories;
  const validated = validateManifest(candidate, "(candidate)");
  const candidatePaths = hostPaths(validated);
  report.paths = {
    ...report.paths,
    sessionList: candidatePaths.sessionList,
    contextUsage: candidatePaths.contextUsage,
    missing: candidatePaths.missing,
  };
  // a candidate that could not run is never offered (nothing written)
  if (candidatePaths.missing.length > 0) refuse(`${missingPathMessage(validated, candidatePaths)} Nothing was written.`);
  report.candidate = validated;
  report.pinned =
    "out/host/index.js, the RPC module and glm/zcode.cjs by their SHA-256, exactly as on this machine " +
    "(on --accept, in a local manifest; `zcode-acp check` then re-verifies them before every start)";
  report.outcome = "candidate";
  report.warning = UNVERIFIED_WARNING;
  const cliNote =
    cliVersion === UNKNOWN_CLI_VERSION ? ": it declares no single version and is never run to ask; its SHA-256 is pinned" : "";
  report.message =
    `ZCode ${app.version} (CLI ${cliVersion}${cliNote}) ` +
    `can be onboarded as a local manifest of the ${chosen.id} line. ` +
    `Review the report; run \`zcode-acp onboard --accept\` to pin it.`;
  return {
    install: {
      paths: installPaths(install, hostIndex, rpcModule),
      manifest: report.candidate,
      rpcExports: { ...exports },
      rpcModuleSha256: rpcSha,
    },
    executable: install.executable,
  };
}

async function requireLineFile(install: ResolvedInstall): Promise<string> {
  return (await confinedEntry(install.rootReal, joinLayout(install.resourcesDir, BUILTIN_PROVIDER_CONFIG), BUILTIN_PROVIDER_CONFIG, "file"))
    .real;
}

/** the legacy session event this zcode-acp reads sessions through */
export const LEGACY_READ_EVENT = "onDynamicSessionEvent";
/** ZCode's V4 read path (subscriptions, frames, rows), read on the zcode-task-v3 line (adr/0024) */
export const V4_READ_NAMES = [
  "subscribeConversationV4",
  "onDynamicConversationFrame",
  "resyncConversationV4",
  "unsubscribeConversationV4",
  "conversationRowsRangeV4",
] as const;

/** How the build's sessions would be read, and what is missing for this zcode-acp to read them. */
export function readPath(bundle: string): { path: string; missing: string[] } {
  const v4 = V4_READ_NAMES.filter((name) => bundle.includes(name));
  if (bundle.includes(LEGACY_READ_EVENT))
    return {
      path:
        `legacy ${LEGACY_READ_EVENT}` +
        (v4.length > 0
          ? ` (the bundle also names the V4 read path: ${v4.join(", ")}; read only where the running host does not serve the legacy stream)`
          : ""),
      missing: [],
    };
  if (v4.length === V4_READ_NAMES.length) return { path: "V4 conversation frames (the zcode-task-v3 line)", missing: [] };
  if (v4.length > 0) {
    const lacking = V4_READ_NAMES.filter((name) => !v4.includes(name));
    return { path: `V4 conversation frames, incomplete (the host bundle names ${v4.join(", ")})`, missing: lacking };
  }
  return {
    path: `none this zcode-acp knows (the host bundle names neither ${LEGACY_READ_EVENT} nor ${V4_READ_NAMES.join(", ")})`,
    missing: [LEGACY_READ_EVENT],
  };
}

/** How the build would take prompts, from the bundle alone (the allowlist narrows it once a line is chosen). */
export function inputPath(bundle: string): string {
  if (V4_INPUT_METHODS.every((m) => bundle.includes(m))) return "V4 input (sendConversationCommandV4 / sendText)";
  if (bundle.includes("sendPrompt")) return "legacy sendPrompt (no steering or queueing)";
  return `none this zcode-acp knows (the host bundle names neither every V4 input call nor sendPrompt)`;
}

/** the host methods and events the onboard checklist records (zcode-3.16-4.0.md §4 item 7) */
export const CHECKLIST_METHODS = [
  "sendPrompt",
  "onDynamicSessionEvent",
  "respondPermission",
  "respondElicitation",
  "stopGeneration",
  "readSession",
  "readSessionMessages",
  "listSessions",
  "includeArchived",
  "getContextComposition",
  "stopSubagent",
  "syncAppRuntimePreferences",
  ...V4_INPUT_METHODS,
  ...V4_READ_NAMES,
] as const;

export function checklistMethods(bundle: string): { named: string[]; notNamed: string[] } {
  return {
    named: CHECKLIST_METHODS.filter((m) => bundle.includes(m)),
    notNamed: CHECKLIST_METHODS.filter((m) => !bundle.includes(m)),
  };
}

function nearestPinned(pinned: readonly LoadedManifest[], lineId: string, version: string): LoadedManifest | undefined {
  const ofLine = pinned
    .filter((m) => m.manifest.protocol.id === lineId)
    .sort((a, b) => compareVersions(a.manifest.artifact.appVersion, b.manifest.artifact.appVersion));
  const older = ofLine.filter((m) => compareVersions(m.manifest.artifact.appVersion, version) <= 0);
  return older.at(-1) ?? ofLine[0];
}

function differences(
  base: Manifest,
  found: {
    cliVersion: string;
    cliSha256: string;
    hostIndexSha: string;
    rpcPath: string;
    rpcSha: string;
    exports: RpcExports;
  },
): string[] {
  const a = base.artifact;
  const out: string[] = [];
  if (found.cliVersion === UNKNOWN_CLI_VERSION)
    out.push(`agent CLI ${a.cliVersion} → unknown (glm/zcode.cjs declares no single version; it is not run to ask; its SHA-256 is pinned)`);
  else if (found.cliVersion !== a.cliVersion) out.push(`agent CLI ${a.cliVersion} → ${found.cliVersion}`);
  if (!acceptsOptionalParam(found.cliVersion, "agent", "listSessions", "includeArchived"))
    out.push("listSessions is called without includeArchived (CLI 0.17.0 dropped it; an unknown CLI version is not sent it)");
  if (found.cliSha256 !== a.cliSha256) out.push("glm/zcode.cjs changed (SHA-256 differs)");
  if (found.hostIndexSha !== a.hostIndex.sha256) out.push(`${a.hostIndex.path} changed (SHA-256 differs)`);
  if (a.rpcModule.path === undefined) out.push(`RPC module ${found.rpcPath} (${a.appVersion} pins it on first use)`);
  else if (found.rpcPath !== a.rpcModule.path) out.push(`RPC chunk renamed: ${a.rpcModule.path} → ${found.rpcPath}`);
  else if (found.rpcSha !== a.rpcModule.sha256) out.push(`${a.rpcModule.path} changed (SHA-256 differs)`);
  if (a.exports) {
    const renamed = (["protocol", "client", "service"] as const).filter((r) => a.exports![r] !== found.exports[r]);
    if (renamed.length > 0) out.push(`RPC export letters ${renamed.map((r) => `${r} ${a.exports![r]} → ${found.exports[r]}`).join(", ")}`);
  } else {
    out.push(
      `RPC export letters (not pinned for ${a.appVersion}): ` +
        `protocol ${found.exports.protocol}, client ${found.exports.client}, service ${found.exports.service}`,
    );
  }
  return out;
}
