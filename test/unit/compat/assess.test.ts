import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assessInstall, type AssessOptions } from "../../../src/compat/assess.js";
import { formatAssessment } from "../../../src/compat/format-assessment.js";
import type { Assessment, Manifest, StepId } from "../../../src/compat/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import { loadManifests } from "../../../src/manifest/load-manifests.js";
import { createSimulatedInstall } from "../../../fixtures/sim-install.js";
import { editMember, flipOneByte, patchMetadata, writeManifest } from "../../support/tamper.js";
import { pinnedManifest } from "../../support/verified-releases.js";

type Sim = Awaited<ReturnType<typeof createSimulatedInstall>>;
const STEPS: StepId[] = ["layout", "metadata", "platform", "version", "host-artifacts", "cli-integrity"];

/** the first failing step decides; everything before passed, everything after was skipped */
function expectFailedAt(report: Assessment, step: StepId, message?: RegExp): void {
  expect(report.supported).toBe(false);
  expect(report.failedStep).toBe(step);
  expect(report.steps.map((s) => s.id)).toEqual(STEPS);
  const at = STEPS.indexOf(step);
  expect(report.steps.map((s) => s.status)).toEqual(STEPS.map((_, i) => (i < at ? "pass" : i === at ? "fail" : "skipped")));
  if (message) expect(report.message).toMatch(message);
  expect(report.steps[at]!.summary).toBe(report.message);
}

/** the packed form with the plain-Node stand-in: verified up to the hashes, then the export check cannot import */
function expectPackedExportCheckFailure(report: Assessment): void {
  expectFailedAt(
    report,
    "host-artifacts",
    /^The RPC module out\/host\/chunk-KGXW6KHC\.js failed the role check: the ZCode executable could not import it/,
  );
  const evidence = report.steps[4]!.evidence!;
  for (const key of ["sha256 out/host/index.js", "sha256 out/host/chunk-KGXW6KHC.js"]) {
    expect(evidence[key]!.actual).toBe(evidence[key]!.expected);
  }
  // the pinned path, looked up among the host index's static imports (no search), then hash-checked, before any import
  expect(evidence["RPC module (pinned path)"]).toEqual({ expected: "out/host/chunk-KGXW6KHC.js", actual: "out/host/chunk-KGXW6KHC.js" });
  expect(String(evidence["RPC roles"]!.actual)).toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND/);
  // `check` prints only the evidence that differs: the hashes that matched are not listed as if they were wrong
  const text = formatAssessment(report);
  expect(text).toMatch(/RPC roles: expected/);
  expect(text).not.toMatch(/sha256 out\/host\/index\.js: expected/);
}

const forms = [
  { form: "directory", packed: false },
  { form: "packed asar", packed: true },
];

describe.each(forms)("assessment of a simulated install ($form)", ({ packed }) => {
  let sim: Sim;
  let work: string;
  beforeEach(async () => {
    sim = await createSimulatedInstall({ packed });
    work = await mkdtemp(join(tmpdir(), "zcode-acp-assess-"));
  });
  afterEach(async () => {
    await sim.cleanup();
    await rm(work, { recursive: true, force: true });
  });
  const assess = (extra: Partial<AssessOptions> = {}) =>
    assessInstall({
      installRoot: sim.root,
      manifestPath: sim.manifestPath,
      cacheFile: join(work, "cache.json"),
      logger: silentLogger,
      env: { ...process.env, ZCODE_ACP_MANIFEST: "", ZCODE_ACP_ZCODE_INSTALL: "" },
      ...extra,
    });
  const manifestCopy = (): Manifest => structuredClone(sim.manifest);

  it("is verified up to the export check (packed) / supported (directory)", async () => {
    const report = await assess();
    expect(report.appVersion).toBe("3.11.2");
    expect(report.cliVersion).toBe("0.16.5");
    expect(report.manifest?.artifact.id).toBe(sim.manifest.artifact.id);
    expect(report.diagnostics.metadataSha256).toMatch(/^[0-9a-f]{64}$/);
    if (packed) return expectPackedExportCheckFailure(report);
    expect(report.supported).toBe(true);
    expect(report.failedStep).toBeUndefined();
    expect(report.steps.map((s) => s.status)).toEqual(["pass", "pass", "pass", "pass", "pass", "pass"]);
    expect(report.cliIntegrity).toBe("verified");
    expect(report.message).toMatch(/^ZCode 3\.11\.2 \(CLI 0\.16\.5\) at .* is verified/);
    expect(report.paths).toMatchObject({ platform: "linux", appArchiveIsDirectory: true });
  });

  it("a supported verdict names every path it was read from (the cached initialize offer is keyed by them)", async () => {
    const dir = join(work, "manifests");
    await mkdir(dir);
    const manifestFile = await writeManifest(dir, "sim.json", sim.manifest);
    const pins = join(work, "config", "pins");
    const report = await assess({ manifestPath: dir, pinDir: pins, recordFirstUse: true });
    if (packed) return expect(report.inputs).toBeUndefined(); // an unsupported verdict names none
    expect(report.supported).toBe(true);
    const paths = report.paths!;
    const inputs = new Set(report.inputs);
    // the manifest directory (a file added there changes the set) and its file
    expect(inputs.has(dir)).toBe(true);
    expect(inputs.has(manifestFile)).toBe(true);
    // the built-in set and the local store, which does not exist yet
    const local = join(work, "config", "manifests");
    const set = await loadManifests(undefined, { localDir: local });
    expect(set.inputs).toContain(local);
    expect(set.inputs.filter((p) => /\/manifests\/zcode-[^/]+\.json$/.test(p)).length).toBe(set.manifests.length);
    for (const path of [sim.root, paths.executable, paths.resourcesDir, paths.appArchive, paths.cli, paths.bundleMeta])
      expect(inputs.has(path)).toBe(true);
    // every archive member it located: the app's package.json, the host entry, the RPC module and the entry's other imports
    expect(inputs.has(join(paths.appArchive, "package.json"))).toBe(true);
    expect(inputs.has(paths.hostIndex)).toBe(true);
    expect(inputs.has(paths.rpcModule)).toBe(true);
    expect([...inputs].some((p) => p.startsWith(join(pins, sim.manifest.artifact.id)))).toBe(true);
  });

  it("host index with one byte changed → host-artifacts fails with the differing hash", async () => {
    await editMember(sim, sim.manifest.artifact.hostIndex.path, flipOneByte);
    const report = await assess();
    expectFailedAt(report, "host-artifacts", /SHA-256 mismatch: out\/host\/index\.js\)/);
    const e = report.steps[4]!.evidence!["sha256 out/host/index.js"]!;
    expect(e.expected).toBe(sim.manifest.artifact.hostIndex.sha256);
    expect(e.actual).not.toBe(e.expected);
    expect(report.steps[4]!.evidence!["export check"]).toBeUndefined(); // tampered code is never imported
  });

  it("RPC module changed → host-artifacts fails before any import", async () => {
    await editMember(sim, sim.flavour.rpcModule, (t) => `${t}\nexport const injected = 1;\n`);
    expectFailedAt(await assess(), "host-artifacts", /SHA-256 mismatch: out\/host\/chunk-KGXW6KHC\.js\)/);
  });

  it.each(["runtime", "entry", "source"])("metadata %s wrong → metadata fails", async (field) => {
    await patchMetadata(sim, { [field]: "something-else" });
    const report = await assess();
    expectFailedAt(report, "metadata", new RegExp(`${field} is "something-else"`));
    expect(report.steps[1]!.evidence![field]).toEqual({
      expected: sim.manifest.artifact.metadata[field as "runtime"],
      actual: "something-else",
    });
  });

  it("metadata platform of another system → platform fails", async () => {
    await patchMetadata(sim, { platform: "darwin-arm64" });
    const report = await assess();
    expectFailedAt(
      report,
      "platform",
      new RegExp(
        `^This ZCode build is for darwin-arm64, but this system is ${process.platform}-${process.arch}\\. Install the ZCode build for`,
      ),
    );
    expect(report.steps[2]!.evidence!.platform).toEqual({ expected: `${process.platform}-${process.arch}`, actual: "darwin-arm64" });
  });

  it("running on another architecture → platform fails", async () => {
    expectFailedAt(await assess({ arch: "ia32" }), "platform", /but this system is linux-ia32/);
  });

  it("unknown app version → version fails and names the verified releases", async () => {
    const other = await createSimulatedInstall({ packed, appVersion: "3.12.0" });
    try {
      const dir = join(work, "manifests");
      await mkdir(dir);
      const pinned = manifestCopy();
      pinned.artifact.appVersion = "3.11.2";
      await writeManifest(dir, "sim.json", pinned);
      await copyFile(pinnedManifest("3.10.2").path, join(dir, "zcode-3.10.2.json"));
      const report = await assess({ installRoot: other.root, manifestPath: dir });
      expectFailedAt(report, "version");
      expect(report.message).toBe(
        "ZCode 3.12.0 is not pinned by this zcode-acp (verified releases: 3.10.2, 3.11.2). " +
          "Run `zcode-acp onboard` to review this build and, if you accept it, pin it locally; " +
          "zcode-acp may not work with builds it has not verified. Or install a verified release, or update zcode-acp.",
      );
      expect(report.steps[3]!.evidence!.appVersion).toEqual({ expected: ["3.10.2", "3.11.2"], actual: "3.12.0" });
    } finally {
      await other.cleanup();
    }
  });

  it("CLI version not the one of the release (declared in an unpinned CLI, never run) → version fails", async () => {
    const cli = join(sim.resourcesDir, "glm", "zcode.cjs");
    await writeFile(cli, (await readFile(cli, "utf8")).replace('const version = "0.16.5";', 'const version = "0.16.4";'));
    const report = await assess();
    expect(report.cliVersionFrom).toBe("CLI file text");
    expectFailedAt(report, "version", /^ZCode 3\.11\.2 reports agent CLI 0\.16\.4, but the verified ZCode 3\.11\.2 ships CLI 0\.16\.5\./);
  });

  it("a CLI whose SHA-256 a manifest pins has that manifest's version (nothing is read or run)", async () => {
    const m = manifestCopy();
    m.artifact.cliVersion = "0.16.4";
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expect(report).toMatchObject({ cliVersion: "0.16.4", cliVersionFrom: "pinned CLI SHA-256" });
    if (!packed) expect(report.cliIntegrity).toBe("verified");
  });

  it("two manifests for the same release → version fails as ambiguous", async () => {
    const dir = join(work, "two");
    await mkdir(dir);
    await writeManifest(dir, "a.json", manifestCopy());
    const b = manifestCopy();
    b.artifact.id = "another-id";
    await writeManifest(dir, "b.json", b);
    expectFailedAt(await assess({ manifestPath: dir }), "version", /matches several manifests/);
  });

  it("a CLI symlinked outside the root → layout fails", async () => {
    const cli = join(sim.resourcesDir, "glm", "zcode.cjs");
    const outside = join(work, "zcode.cjs");
    await rename(cli, outside);
    await symlink(outside, cli);
    const report = await assess();
    expectFailedAt(report, "layout", /^glm\/zcode\.cjs resolves to .*, outside the install root/);
    expect(report.steps[0]!.evidence!["glm/zcode.cjs"]!.actual).toBe(outside);
  });

  it("app.asar symlinked outside the root → layout fails", async () => {
    const outside = join(work, "app.asar");
    await rename(sim.appArchive, outside);
    await symlink(outside, sim.appArchive);
    expectFailedAt(await assess(), "layout", /^app\.asar resolves to .*, outside the install root/);
  });

  it("an install reached through a symlinked root is still itself", async () => {
    const link = join(work, "link-to-install");
    await symlink(sim.root, link);
    const report = await assess({ installRoot: link });
    expect(report.installRoot).toBe(link);
    if (packed) expectPackedExportCheckFailure(report);
    else expect(report.supported).toBe(true);
  });

  it("bundle metadata that is not a readable file → layout fails", async () => {
    const meta = join(sim.resourcesDir, "glm", ".node-bundle-meta.json");
    await rm(meta);
    await mkdir(meta);
    expectFailedAt(await assess(), "layout", /glm\/\.node-bundle-meta\.json is a directory, expected a readable regular file/);
  });

  it("a FIFO in place of the CLI → layout fails without blocking", async () => {
    const cli = join(sim.resourcesDir, "glm", "zcode.cjs");
    await rm(cli);
    execFileSync("mkfifo", [cli]);
    expectFailedAt(await assess(), "layout", /glm\/zcode\.cjs is not a regular file/);
  });

  it("missing executable → layout fails", async () => {
    await rm(sim.executable);
    const report = await assess();
    expectFailedAt(report, "layout", /^The ZCode install is incomplete: zcode is missing/);
  });

  it("executable without the execute bit → layout fails", async () => {
    await chmod(sim.executable, 0o644);
    expectFailedAt(await assess(), "layout", /zcode is not executable/);
  });

  it("a missing install root says how to point at the install", async () => {
    const report = await assess({ installRoot: join(work, "nowhere") });
    expectFailedAt(
      report,
      "layout",
      /^No ZCode install found at .*nowhere \(missing\)\. Install ZCode there, or point zcode-acp at it with --zcode-install DIR/,
    );
  });

  it("an unknown platform is refused before anything is read", async () => {
    const report = await assess({ platform: "freebsd", installRoot: "/nonexistent", manifestPath: "/nonexistent/manifest.json" });
    expectFailedAt(report, "layout", /^zcode-acp supports ZCode on darwin, linux, win32; this system is freebsd\./);
    expect(report.installRoot).toBeUndefined();
  });

  it("a CLI whose version cannot be read without running it → the app version selects; CLI not read, modified", async () => {
    await writeFile(join(sim.resourcesDir, "glm", "zcode.cjs"), "throw new Error('no');\n");
    const report = await assess();
    expect(report.cliVersionFrom).toBe("not read");
    if (!packed) expect(report.cliIntegrity).toBe("modified");
    expect(report.cliVersion).toBeUndefined();
    expect(report.steps[3]!.summary).toMatch(/an unread CLI version .*zcode-acp does not run it/);
    if (packed) expectPackedExportCheckFailure(report);
    else {
      expect(report.supported).toBe(true);
      expect(report.message).toMatch(
        /^ZCode \S+ \(CLI version unknown \(its SHA-256 is pinned nowhere .*zcode-acp does not run it\)\) at /,
      );
    }
    // `check`'s text says why, and never "CLI undefined"
    const text = formatAssessment(report);
    expect(text).not.toMatch(/undefined/);
    expect(text).toMatch(/ {2}CLI version: {6}unknown \(its SHA-256 is pinned nowhere/);
  });

  it("an unread CLI version with two manifests for the release → ambiguous, and the message says the CLI version is unknown", async () => {
    await writeFile(join(sim.resourcesDir, "glm", "zcode.cjs"), "throw new Error('no');\n");
    const dir = join(work, "two-unread");
    await mkdir(dir);
    await writeManifest(dir, "a.json", manifestCopy());
    const b = manifestCopy();
    b.artifact.id = "another-id";
    await writeManifest(dir, "b.json", b);
    const report = await assess({ manifestPath: dir });
    expectFailedAt(report, "version", /with CLI version unknown \(its SHA-256 is pinned nowhere.*\) matches several manifests/);
    expect(formatAssessment(report)).not.toMatch(/undefined/);
  });

  it("a malformed manifest is a configuration error naming the file and field", async () => {
    const m = manifestCopy() as unknown as { artifact: { rpcModule: Record<string, unknown> } };
    m.artifact.rpcModule.note = "x";
    const file = await writeManifest(work, "bad.json", m);
    await expect(assess({ manifestPath: file })).rejects.toMatchObject({
      code: "INVALID_MANIFEST",
      details: { file, field: "artifact.rpcModule.note" },
    });
  });

  it("an artifact whose protocolId does not name its protocol is refused", async () => {
    const m = manifestCopy();
    m.artifact.protocolId = "zcode-task-v0";
    const file = await writeManifest(work, "mismatch.json", m);
    await expect(assess({ manifestPath: file })).rejects.toMatchObject({
      code: "INVALID_MANIFEST",
      details: { file, field: "artifact.protocolId" },
    });
  });

  it("a repeated check hits the cache; a changed file is rehashed", async () => {
    const first = await assess();
    // the one hit: the CLI's SHA-256, computed for its version (step 4) and reused by step 6 (packed: not reached)
    expect(first.diagnostics.cache).toMatchObject({ hits: packed ? 0 : 1, rebuilt: false });
    expect(first.diagnostics.cache!.misses).toBeGreaterThanOrEqual(3);
    const second = await assess();
    // packed: a failed export check is never cached, so it is the one recomputed fact
    const lookups = first.diagnostics.cache!.misses + first.diagnostics.cache!.hits;
    expect(second.diagnostics.cache).toMatchObject({ hits: lookups - (packed ? 1 : 0), misses: packed ? 1 : 0 });
    expect(second.steps).toEqual(first.steps);
    await editMember(sim, sim.manifest.artifact.hostIndex.path, flipOneByte);
    const third = await assess();
    expect(third.diagnostics.cache!.misses).toBeGreaterThanOrEqual(1);
    expectFailedAt(third, "host-artifacts", /SHA-256 mismatch/);
  });

  it("a corrupt cache is ignored and rebuilt", async () => {
    await writeFile(join(work, "cache.json"), "\u0000garbage{");
    const report = await assess();
    expect(report.diagnostics.cache).toMatchObject({ hits: packed ? 0 : 1, rebuilt: true });
    const again = await assess();
    expect(again.diagnostics.cache).toMatchObject({ rebuilt: false });
    expect(again.diagnostics.cache!.hits).toBeGreaterThan(0);
    expect(JSON.parse(await readFile(join(work, "cache.json"), "utf8"))).toMatchObject({ version: 1 });
  });
});

describe("assessment of the directory form only (the stand-in can import it)", () => {
  let sim: Sim;
  let work: string;
  beforeEach(async () => {
    sim = await createSimulatedInstall();
    work = await mkdtemp(join(tmpdir(), "zcode-acp-assess-"));
  });
  afterEach(async () => {
    await sim.cleanup();
    await rm(work, { recursive: true, force: true });
  });
  const assess = (extra: Partial<AssessOptions> = {}) =>
    assessInstall({
      installRoot: sim.root,
      manifestPath: sim.manifestPath,
      cacheFile: join(work, "cache.json"),
      env: process.env,
      ...extra,
    });
  const rpcPath = () => sim.flavour.rpcModule;

  it("a changed CLI is `modified`, a diagnostic that still allows the launch", async () => {
    await writeFile(
      join(sim.resourcesDir, "glm", "zcode.cjs"),
      `${await readFile(join(sim.resourcesDir, "glm", "zcode.cjs"), "utf8")}\n// local patch\n`,
    );
    const report = await assess();
    expect(report.supported).toBe(true);
    expect(report.cliIntegrity).toBe("modified");
    expect(report.steps[5]).toMatchObject({ id: "cli-integrity", status: "diagnostic" });
    expect(report.message).toMatch(/differs from the verified build \(modified\); this does not block/);
  });

  it("a role without an export of its shape → host-artifacts fails naming the role", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule.sha256 = await editMember(sim, rpcPath(), (t) => {
      expect(t).toContain("  fromService(service) {");
      return t.replace("  fromService(service) {", "  fromServiceRenamed(service) {");
    });
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expectFailedAt(
      report,
      "host-artifacts",
      /failed the role check: its exports do not have the RPC roles \(missing: no export has the shape of the service role\)/,
    );
  });

  it("two exports of one role's shape → host-artifacts fails as ambiguous", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule.sha256 = await editMember(
      sim,
      rpcPath(),
      (t) => `${t}\nexport const proxyTwin = { toService() {}, fromService() {} };\n`,
    );
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expectFailedAt(report, "host-artifacts", /\(ambiguous: service: [a-z]+, proxyTwin\)/);
  });

  it("pinned export names other than the ones found → host-artifacts fails naming them", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.exports!.service = "g";
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expectFailedAt(
      report,
      "host-artifacts",
      /exports its roles under other names than the verified ZCode 3\.11\.2 \(service is "j", pinned "g"\)/,
    );
  });

  it("the pinned module without the client class → host-artifacts fails its role check (missing)", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule.sha256 = await editMember(sim, rpcPath(), (t) => t.replaceAll("ChannelClient", "ChanClient"));
    expectFailedAt(
      await assess({ manifestPath: await writeManifest(work, "m.json", m) }),
      "host-artifacts",
      /^The RPC module out\/host\/chunk-KGXW6KHC\.js failed the role check: .*missing: no export has the shape of the client role/,
    );
  });

  it("a second module naming the RPC classes does not matter to a pinned module: no search, nothing else imported", async () => {
    const m = structuredClone(sim.manifest);
    await writeFile(
      join(sim.appArchive, "out", "host", "chunk-TWIN.js"),
      "export class MessagePortProtocol {}\nexport class ChannelClient {}\nprocess.exit(9);\n",
    );
    m.artifact.hostIndex.sha256 = await editMember(sim, m.artifact.hostIndex.path, (t) => `import "./chunk-TWIN.js";\n${t}`);
    const report = await assess({ manifestPath: await writeManifest(work, "m.json", m) });
    expect(report.supported).toBe(true);
    expect(report.rpc).toMatchObject({ path: rpcPath(), foundBy: "pinned path" });
  });

  it("a pinned RPC module the host index does not import → host-artifacts fails naming it", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.rpcModule.path = "out/host/chunk-OTHER.js";
    expectFailedAt(
      await assess({ manifestPath: await writeManifest(work, "m.json", m) }),
      "host-artifacts",
      /^The verified ZCode 3\.11\.2 host entry does not import the pinned RPC module out\/host\/chunk-OTHER\.js/,
    );
  });

  it("a host index importing a module outside the archive → host-artifacts refuses it", async () => {
    const m = structuredClone(sim.manifest);
    m.artifact.hostIndex.sha256 = await editMember(sim, m.artifact.hostIndex.path, (t) => `import "../../../../escape.js";\n${t}`);
    expectFailedAt(
      await assess({ manifestPath: await writeManifest(work, "m.json", m) }),
      "host-artifacts",
      /imports \.\.\/\.\.\/\.\.\/\.\.\/escape\.js, which lies outside the app archive/,
    );
  });

  it("an RPC module symlinked outside the root → host-artifacts refuses it", async () => {
    const file = join(sim.appArchive, rpcPath());
    const outside = join(work, "chunk.js");
    await rename(file, outside);
    await symlink(outside, file);
    expectFailedAt(await assess(), "host-artifacts", /chunk-KGXW6KHC\.js resolves to .*, outside the install root/);
  });

  it("a missing host index → host-artifacts fails", async () => {
    await rm(join(sim.appArchive, sim.manifest.artifact.hostIndex.path));
    expectFailedAt(await assess(), "host-artifacts", /app\.asar\/out\/host\/index\.js is missing/);
  });
});

describe("darwin layout", () => {
  it("reads the app version and build from Contents/Info.plist and runs ZCode Helper", async () => {
    const sim = await createSimulatedInstall({ platform: "darwin" });
    const work = await mkdtemp(join(tmpdir(), "zcode-acp-assess-"));
    try {
      // the generator writes the metadata platform of the machine it runs on; a darwin build says darwin
      await patchMetadata(sim, { platform: `darwin-${process.arch}` });
      const report = await assessInstall({
        platform: "darwin",
        installRoot: sim.root,
        manifestPath: sim.manifestPath,
        cacheFile: join(work, "cache.json"),
        env: process.env,
      });
      expect(report.supported).toBe(true);
      expect(report.appVersion).toBe("3.11.2");
      expect(report.diagnostics.appBuild).toBe("3.11.2.1105");
      expect(report.paths).toMatchObject({
        platform: "darwin",
        executable: sim.executable,
        infoPlist: join(sim.root, "Contents", "Info.plist"),
      });
      expect(report.paths!.executable).toMatch(/Contents\/Frameworks\/ZCode Helper\.app\/Contents\/MacOS\/ZCode Helper$/);
      await rm(join(sim.root, "Contents", "Info.plist"));
      expectFailedAt(
        await assessInstall({
          platform: "darwin",
          installRoot: sim.root,
          manifestPath: sim.manifestPath,
          cacheFile: join(work, "cache.json"),
          env: process.env,
        }),
        "layout",
        /Contents\/Info\.plist is missing/,
      );
    } finally {
      await sim.cleanup();
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe("win32 layout", () => {
  it("uses ZCode.exe and resources/ (a linux simulated install reshaped as win32)", async () => {
    const sim = await createSimulatedInstall();
    const work = await mkdtemp(join(tmpdir(), "zcode-acp-assess-"));
    try {
      await rename(sim.executable, join(sim.root, "ZCode.exe"));
      await patchMetadata(sim, { platform: "win32-x64" });
      const opts = {
        platform: "win32" as const,
        arch: "x64",
        installRoot: sim.root,
        manifestPath: sim.manifestPath,
        cacheFile: join(work, "cache.json"),
        env: process.env,
      };
      const report = await assessInstall(opts);
      expect(report.supported).toBe(true);
      expect(report.paths).toMatchObject({ platform: "win32", executable: join(sim.root, "ZCode.exe") });
      // the linux executable name means nothing on win32
      await rename(join(sim.root, "ZCode.exe"), sim.executable);
      expectFailedAt(await assessInstall(opts), "layout", /ZCode\.exe is missing/);
      // without --zcode-install and LOCALAPPDATA, the default root is unknown
      const noRoot = await assessInstall({ ...opts, installRoot: undefined, env: { PATH: process.env.PATH } });
      expectFailedAt(noRoot, "layout", /LOCALAPPDATA is not set\)\. Pass --zcode-install DIR/);
      const defaulted = await assessInstall({ ...opts, installRoot: undefined, env: { LOCALAPPDATA: work } });
      // joined with this machine's separator (src/install/layout.ts): win32.join on Windows
      expect(defaulted.installRoot).toBe(join(work, "Programs", "ZCode"));
    } finally {
      await sim.cleanup();
      await rm(work, { recursive: true, force: true });
    }
  });
});
