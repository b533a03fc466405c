/**
 * The ordered compatibility assessment (docs/runtime-contract.md §3), shared by `zcode-acp check` and the
 * host launcher (which launches only a `supported` install):
 *   1 layout → 2 metadata runtime/entry/source → 3 metadata platform → 4 app + CLI version select
 *   one manifest → 5 host index + RPC module SHA-256 and exports → 6 CLI SHA-256 (diagnostic).
 * The first failure decides; nothing after it is read or run. An unknown platform is rejected
 * before anything else is read. A bad manifest set throws INVALID_MANIFEST (a configuration
 * error, not a property of the install); a missing --manifest path throws USAGE.
 */
import { cliPhrase, cliUnknownWhy } from "./format-assessment.js";
import type { Assessment, Manifest } from "./types.js";
import { silentLogger, type Logger } from "../log/logger.js";
import { loadManifests, type LoadedManifest } from "../manifest/load-manifests.js";
import { isInstallPlatform, INSTALL_PLATFORMS } from "../install/layout.js";
import { discoverInstallRoot, installRootCandidates } from "../install/discover.js";
import { firstUsePinFile } from "./first-use-pins.js";
import type { AppArchive } from "../install/app-archive.js";
import { resolveInstall, installPaths, type ResolvedInstall } from "../install/resolve-install.js";
import { readBundleMetadata, type BundleMetadata } from "../install/bundle-metadata.js";
import { readAppVersionFromArchive, readAppVersionFromPlist } from "../install/app-version.js";
import { readCliVersionFromFile } from "../install/cli-version.js";
import { hashFile } from "../install/cached-hash.js";
import { cachedFact, FingerprintCache } from "../install/fingerprint-cache.js";
import { CHILD_RUN_TIMEOUT_MS } from "../install/electron-node.js";
import { StepRecorder } from "./step-recorder.js";
import { installProblem } from "../install/install-problem.js";
import { checkCliIntegrity, checkHostArtifacts, type HostArtifacts } from "./artifact-steps.js";
import { expectedValues, metadataMatches, METADATA_FIELDS, selectManifest } from "./select-manifest.js";
import { resolveLineLayout } from "./line-layout.js";
import { describeFound } from "./rpc-discovery.js";
import { findLine } from "../manifest/release-lines.js";
import { UNKNOWN_CLI_VERSION } from "../manifest/manifest-schema.js";
import { describePinning, unpinnedFiles, type ManifestKind } from "./pinning.js";
import { hostPaths, missingPathMessage } from "./host-paths.js";
import type { CliVersionSource } from "./types.js";

export interface AssessOptions {
  /** install root; default: the platform's default root (src/install/layout.ts) */
  installRoot?: string;
  /** manifest file or directory replacing the built-in set and the local store */
  manifestPath?: string;
  /** the local manifest store read beside the built-in set (without `manifestPath`); default: none */
  localManifestDir?: string;
  platform?: NodeJS.Platform;
  arch?: string;
  logger?: Logger;
  /** fingerprint cache file; default: none (the cache lives in memory for this assessment) */
  cacheFile?: string;
  /** environment of the child runs, where the platform's default root is looked up too (LOCALAPPDATA on win32); the CLI passes its own */
  env: NodeJS.ProcessEnv;
  /** bound of each child run of the ZCode executable (default CHILD_RUN_TIMEOUT_MS) */
  childTimeoutMs?: number;
  /** the first-use pin store (src/compat/first-use-pins.ts); without it a first-use manifest is refused */
  pinDir?: string;
  /** record the RPC module's first-use pin when there is none (the bridge); `check` only says it will be (adr/0020) */
  recordFirstUse?: boolean;
  /** the first-use pin's date (tests) */
  now?: () => Date;
  /** ZCODE_ACP_READ_PATH: how a release with both reads sessions (the path is stated, and refused when the manifest lacks it) */
  readPath?: "legacy" | "v4";
}

const isDeclared = (value: unknown): value is { version: string | null } => {
  const v = (value as { version?: unknown } | null)?.version;
  return typeof value === "object" && value !== null && (v === null || (typeof v === "string" && v.length > 0 && v.length < 100));
};

export async function assessInstall(options: AssessOptions): Promise<Assessment> {
  const env = options.env;
  const logger = (options.logger ?? silentLogger).child("compat");
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  const steps = new StepRecorder();
  const report: Assessment = { supported: false, message: "", steps: steps.steps, diagnostics: {}, systemPlatform: `${platform}-${arch}` };
  const finish = (): Assessment => {
    report.supported = steps.failure === undefined;
    if (report.supported) report.inputs = [...inputs].sort();
    if (steps.failure !== undefined) {
      report.failedStep = steps.failure.step;
      report.message = steps.failure.message;
    }
    logger.debug("install assessed", { supported: report.supported, failedStep: report.failedStep, root: report.installRoot });
    return report;
  };

  // 1a. the platform, before anything is read
  if (!isInstallPlatform(platform)) {
    steps.fail(
      "layout",
      `zcode-acp supports ZCode on ${INSTALL_PLATFORMS.join(", ")}; this system is ${platform}. Run zcode-acp on a machine where ZCode runs.`,
      {
        platform: { expected: INSTALL_PLATFORMS, actual: platform },
      },
    );
    return finish();
  }
  const set = await loadManifests(
    options.manifestPath,
    options.localManifestDir !== undefined ? { localDir: options.localManifestDir } : {},
  );
  // every path the verdict is read from (Assessment.inputs), kept on a supported verdict
  const inputs = new Set<string>(set.inputs);
  if (options.installRoot === undefined) for (const candidate of installRootCandidates(platform, env)) inputs.add(candidate);
  const root = options.installRoot ?? (await discoverInstallRoot(platform, env));
  if (root === undefined) {
    steps.fail(
      "layout",
      "The default ZCode install location is unknown (LOCALAPPDATA is not set). Pass --zcode-install DIR (or set ZCODE_ACP_ZCODE_INSTALL).",
      {
        root: { expected: "%LOCALAPPDATA%\\Programs\\ZCode", actual: "LOCALAPPDATA not set" },
      },
    );
    return finish();
  }
  report.installRoot = root;
  const cache = await FingerprintCache.load(options.cacheFile, logger);
  const run: AssessRun = { options, env, logger, platform, arch, root, steps, report, inputs, cache, set };
  try {
    await runSteps(run);
  } finally {
    await cache.save();
    report.diagnostics.cache = { hits: cache.stats.hits, misses: cache.stats.misses, rebuilt: cache.stats.corrupt };
    if (cache.file !== undefined) report.diagnostics.cache.file = cache.file;
  }
  return finish();
}

/** What every step reads and writes: the options, the verdict being built and its inputs. */
interface AssessRun {
  options: AssessOptions;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  platform: NodeJS.Platform;
  arch: string;
  root: string;
  steps: StepRecorder;
  report: Assessment;
  /** every path the verdict is read from (Assessment.inputs) */
  inputs: Set<string>;
  cache: FingerprintCache;
  set: Awaited<ReturnType<typeof loadManifests>>;
}

interface Layout {
  install: ResolvedInstall;
  /** the app version, when the layout step could read it */
  appRead: Awaited<ReturnType<typeof resolveLineLayout>> | undefined;
}

/** Steps 1–6, once the platform is supported and the root known (1a): the first failure decides, nothing after it runs. */
async function runSteps(run: AssessRun): Promise<void> {
  const layout = await checkLayout(run);
  if (layout === undefined) return;
  const metadata = await checkMetadata(run, layout.install);
  if (metadata === undefined) return;
  if (!checkPlatform(run, metadata.meta)) return;
  const manifest = await selectVersion(run, layout, metadata.candidates);
  if (manifest === undefined) return;
  const artifacts = await checkArtifacts(run, layout.install, manifest);
  if (artifacts === undefined) return;
  await checkCli(run, layout.install, manifest, artifacts);
}

/** The CLI version without running the CLI: the version of a manifest that pins its SHA-256, else the one its file declares. */
async function cliVersionOf(
  cache: FingerprintCache,
  cli: string,
  manifests: readonly LoadedManifest[],
): Promise<{ version: string | undefined; from: CliVersionSource }> {
  const sha = await hashFile(cache, cli);
  const pinned = manifests.find((m) => m.manifest.artifact.cliSha256 === sha);
  // a local manifest of a CLI that declares no single version pins its SHA-256 with the version "unknown"
  if (pinned !== undefined && pinned.manifest.artifact.cliVersion === UNKNOWN_CLI_VERSION)
    return { version: undefined, from: "pinned CLI SHA-256" };
  if (pinned !== undefined) return { version: pinned.manifest.artifact.cliVersion, from: "pinned CLI SHA-256" };
  const declared = await cachedFact(cache, `cli-declared-version\u0000${cli}`, [cli], isDeclared, async () => ({
    version: (await readCliVersionFromFile(cli)) ?? null,
  }));
  return declared.version === null ? { version: undefined, from: "not read" } : { version: declared.version, from: "CLI file text" };
}

/** Step 1, layout: the install's files inside its root (and the app version, read on the way). */
async function checkLayout(run: AssessRun): Promise<Layout | undefined> {
  const { steps, inputs, set, platform, root } = run;
  let appRead: Awaited<ReturnType<typeof resolveLineLayout>> | undefined;
  const install = await steps.run("layout", async () => {
    const resolved = await resolveInstall(platform as "darwin" | "linux" | "win32", root);
    resolved.archive = recordingMembers(resolved.archive, inputs);
    appRead = await resolveLineLayout(resolved, set.manifests);
    return resolved;
  });
  if (install === undefined) return undefined;
  for (const path of [
    root,
    install.rootReal,
    install.executable,
    install.resourcesDir,
    install.archive.path,
    install.cli,
    install.bundleMeta,
  ])
    inputs.add(path);
  if (install.infoPlist !== undefined) inputs.add(install.infoPlist);
  if (install.builtinProviderConfig !== undefined) inputs.add(install.builtinProviderConfig);
  steps.record(
    "layout",
    "pass",
    `ZCode install at ${install.rootReal} (${install.archive.kind === "asar" ? "packed app.asar" : "app.asar directory"}); ` +
      `executable, resources, app archive, CLI and bundle metadata present inside the root`,
  );
  return { install, appRead };
}

/** Step 2, metadata runtime / entry / source: the manifests whose metadata the bundle matches. */
async function checkMetadata(
  run: AssessRun,
  install: ResolvedInstall,
): Promise<{ meta: BundleMetadata; candidates: LoadedManifest[] } | undefined> {
  const { steps, report, set } = run;
  const meta = await steps.run("metadata", () => readBundleMetadata(install.bundleMeta));
  if (meta === undefined) return undefined;
  report.diagnostics.metadataSha256 = meta.rawSha256;
  const candidates: LoadedManifest[] = set.manifests.filter((m) => metadataMatches(m, meta));
  const metaEvidence = Object.fromEntries(
    METADATA_FIELDS.map((field) => [
      field,
      { expected: expectedValues(set.manifests, (m) => m.manifest.artifact.metadata[field]), actual: meta[field] ?? "missing" },
    ]),
  );
  if (candidates.length === 0) {
    const wrong = METADATA_FIELDS.filter((field) => !set.manifests.some((m) => m.manifest.artifact.metadata[field] === meta[field]));
    const shown = (wrong.length > 0 ? wrong : METADATA_FIELDS).map((f) => `${f} is ${JSON.stringify(meta[f] ?? "missing")}`).join(", ");
    steps.fail(
      "metadata",
      `The bundle metadata glm/.node-bundle-meta.json does not describe a verified ZCode build (${shown}). Reinstall ZCode from the official download.`,
      metaEvidence,
    );
    return undefined;
  }
  steps.record("metadata", "pass", "runtime, entry and source match a verified ZCode build", metaEvidence);
  return { meta, candidates };
}

/** Step 3, metadata platform: the bundle is built for this system. */
function checkPlatform(run: AssessRun, meta: BundleMetadata): boolean {
  const { steps, platform, arch } = run;
  const system = `${platform}-${arch}`;
  const platformEvidence = { platform: { expected: system, actual: meta.platform ?? "missing" } };
  if (meta.platform !== system) {
    steps.fail(
      "platform",
      `This ZCode build is for ${typeof meta.platform === "string" ? meta.platform : "an unknown platform"}, ` +
        `but this system is ${system}. Install the ZCode build for ${system}.`,
      platformEvidence,
    );
    return false;
  }
  steps.record("platform", "pass", `bundle platform ${system} matches this system`, platformEvidence);
  return true;
}

/** Step 4, app version and CLI version select exactly one manifest (and the path its sessions take). */
async function selectVersion(run: AssessRun, layout: Layout, candidates: LoadedManifest[]): Promise<Manifest | undefined> {
  const { install, appRead } = layout;
  const { steps, report, inputs, cache, options } = run;
  const selected = await steps.run("version", async () => {
    // read once by the layout step; read again here only to report why it could not be read
    const app =
      appRead ??
      (install.infoPlist !== undefined
        ? await readAppVersionFromPlist(install.infoPlist, "Contents/Info.plist")
        : await readAppVersionFromArchive(install.archive));
    report.appVersion = app.version;
    if (app.build !== undefined) report.diagnostics.appBuild = app.build;
    // the CLI is never run (adr/0020): a pinned CLI's version is its manifest's; else the version its file declares
    const { version: cliVersion, from: cliFrom } = await cliVersionOf(cache, install.cli, candidates);
    report.cliVersionFrom = cliFrom;
    if (cliVersion !== undefined) report.cliVersion = cliVersion;
    const selection = selectManifest(candidates, app.version, cliVersion);
    const evidence = {
      appVersion: { expected: expectedValues(candidates, (m) => m.manifest.artifact.appVersion), actual: app.version },
      cliVersion: {
        expected: expectedValues(candidates, (m) => m.manifest.artifact.cliVersion),
        actual: cliVersion ?? `not read (${cliUnknownWhy(cliFrom)})`,
      },
    };
    switch (selection.kind) {
      case "unknown-app":
        report.unpinned = true;
        throw installProblem(
          `ZCode ${app.version} is not pinned by this zcode-acp (verified releases: ${selection.verified.join(", ")}). ` +
            `Run \`zcode-acp onboard\` to review this build and, if you accept it, pin it locally; ` +
            `zcode-acp may not work with builds it has not verified. Or install a verified release, or update zcode-acp.`,
          evidence,
        );
      case "cli-mismatch":
        evidence.cliVersion.expected = selection.expectedCli.length === 1 ? selection.expectedCli[0]! : selection.expectedCli;
        throw installProblem(
          `ZCode ${app.version} reports agent CLI ${cliVersion}, ` +
            `but the verified ZCode ${app.version} ships CLI ${selection.expectedCli.join(" or ")}. Reinstall ZCode ${app.version}.`,
          evidence,
        );
      case "ambiguous":
        throw installProblem(
          `ZCode ${app.version} with ${cliPhrase(cliVersion)} matches several manifests ` +
            `(${selection.matches.map((m) => m.file).join(", ")}); this is ambiguous, so none is used. ` +
            `Keep exactly one per release (delete the extra local manifest files).`,
          evidence,
        );
      case "selected": {
        evidence.appVersion.expected = selection.manifest.manifest.artifact.appVersion;
        evidence.cliVersion.expected = selection.manifest.manifest.artifact.cliVersion;
        // the path the sessions take, from the manifest; one that lacks something is refused here, before anything runs
        const paths = hostPaths(selection.manifest.manifest, options.readPath);
        report.hostPaths = paths;
        if (paths.missing.length > 0)
          throw installProblem(missingPathMessage(selection.manifest.manifest, paths), {
            ...evidence,
            missing: { expected: "allowed by the manifest", actual: paths.missing },
          });
        return { selected: selection.manifest, evidence, cliFrom };
      }
    }
  });
  if (selected === undefined) return undefined;
  const { manifest, file } = selected.selected;
  if (options.pinDir !== undefined) inputs.add(firstUsePinFile(options.pinDir, manifest.artifact.id));
  report.manifest = manifest;
  report.manifestFile = file;
  report.manifestTrust = manifest.trust === "local" ? "local" : "pinned";
  const cliShown =
    report.cliVersion === undefined
      ? `an unread CLI version (${cliUnknownWhy(selected.cliFrom)})`
      : `CLI ${report.cliVersion} (${selected.cliFrom === "pinned CLI SHA-256" ? "known from its pinned SHA-256" : "declared in its file"}, not run)`;
  steps.record(
    "version",
    "pass",
    `ZCode ${report.appVersion} with ${cliShown} selects manifest ${manifest.artifact.id}`,
    selected.evidence,
  );
  return manifest;
}

/** Step 5, host index + RPC module SHA-256, then the exports (./artifact-steps.ts). */
async function checkArtifacts(run: AssessRun, install: ResolvedInstall, manifest: Manifest): Promise<HostArtifacts | undefined> {
  const { steps, report, cache, set, options, env, logger } = run;
  const manifestKind: ManifestKind =
    manifest.trust === "local"
      ? { kind: "local", acceptedOn: (manifest.acceptedAt ?? "").slice(0, 10) || "an unknown date" }
      : set.source === "built-in"
        ? { kind: "built-in" }
        : { kind: "given" };
  const artifacts = await steps.run("host-artifacts", () =>
    checkHostArtifacts({
      install,
      manifest,
      manifestKind,
      cache,
      env,
      childTimeoutMs: options.childTimeoutMs ?? CHILD_RUN_TIMEOUT_MS,
      recordFirstUse: options.recordFirstUse === true,
      ...(options.pinDir !== undefined ? { pinDir: options.pinDir } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
    }),
  );
  if (artifacts === undefined) return undefined;
  report.paths = installPaths(install, artifacts.hostIndex, artifacts.rpcModule);
  report.rpc = artifacts.rpc;
  if (artifacts.recordedPin !== undefined)
    logger.info("RPC module pinned on first use", {
      module: artifacts.rpc.path,
      sha256: artifacts.rpc.sha256,
      file: artifacts.recordedPin,
    });
  report.pinning = [...artifacts.pinning, ...unpinnedFiles(findLine(manifest.protocol.id) ?? { needsBuiltinProviderConfig: false })];
  // the advisories speak of the release's host entry: stated once its bytes are the verified ones
  report.advisories = [...(manifest.advisories ?? [])];
  steps.record("host-artifacts", "pass", artifacts.summary, artifacts.evidence);
  return artifacts;
}

/** Step 6, CLI SHA-256: `modified` is a diagnostic, never a failure; then the verdict's message. */
async function checkCli(run: AssessRun, install: ResolvedInstall, manifest: Manifest, artifacts: HostArtifacts): Promise<void> {
  const { steps, report, cache, set } = run;
  const cli = await checkCliIntegrity(install, manifest, cache);
  report.cliIntegrity = cli.integrity;
  steps.record("cli-integrity", cli.integrity === "verified" ? "pass" : "diagnostic", cli.summary, cli.evidence);
  const note =
    cli.integrity === "modified"
      ? " Note: its agent CLI glm/zcode.cjs differs from the verified build (modified); this does not block, and reinstalling ZCode restores it."
      : "";
  const by =
    manifest.trust === "local"
      ? `by a local manifest you accepted on ${(manifest.acceptedAt ?? "").slice(0, 10) || "an unknown date"}`
      : set.source === "built-in"
        ? `by the pinned manifest ${manifest.artifact.id}`
        : `by the manifest ${manifest.artifact.id} given with --manifest`;
  report.message =
    `ZCode ${report.appVersion} (${cliPhrase(report.cliVersion, report.cliVersionFrom)}) at ${install.rootReal} is verified ${by} ` +
    `(release line ${manifest.protocol.id}, RPC module found ${describeFound(artifacts.rpc.path, artifacts.rpc.exports)}); ` +
    `zcode-acp can use it. Pinned: ${describePinning(report.pinning ?? [])}.${note}`;
}

/**
 * The archive, recording every member it is asked for in `inputs`: the path asked for (a member
 * of an app.asar directory, or of app.asar.unpacked/ beside a packed archive) and the file the
 * member was found in (a packed member's is the archive, whose header says where members are).
 */
function recordingMembers(archive: AppArchive, inputs: Set<string>): AppArchive {
  return {
    kind: archive.kind,
    path: archive.path,
    locate: async (member) => {
      // asked before it is located: a member that is not there yet is an input too
      if (archive.kind === "directory") inputs.add(`${archive.path}/${member}`);
      const location = await archive.locate(member);
      inputs.add(location.file);
      if (archive.kind === "asar" && location.file !== archive.path) inputs.add(`${archive.path}.unpacked/${member}`);
      return location;
    },
  };
}
