import { describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import plist from "plist";
import { createSimulatedInstall, flavourProtocol, SIM_RELEASES, type SimInstall, type SimRelease } from "../../fixtures/sim-install.js";
import { loadRpcModule, waitUntil } from "./support/host-harness.js";
import { MANIFESTS_DIR, verifiedReleases } from "../support/verified-releases.js";
import { EventCollector, onCleanup, promptToEnd, sessionRig, WS } from "./support/session-helpers.js";
import { rowsOf, v4Command, v4Rig } from "./support/v4-read-helpers.js";
import type { Any } from "./support/host-harness.js";

const run = promisify(execFile);
const sha256 = (data: Buffer | string): string => createHash("sha256").update(data).digest("hex");
const pinned = async (file: string) => JSON.parse(await readFile(join(MANIFESTS_DIR, file), "utf8"));
const WORKER_ENTRY = fileURLToPath(new URL("./support/host-worker.mjs", import.meta.url));
const STANDIN_LAUNCH = fileURLToPath(new URL("./support/standin-launch.mjs", import.meta.url));
const RELEASES = Object.keys(SIM_RELEASES) as SimRelease[];

async function make(release: SimRelease, options: Parameters<typeof createSimulatedInstall>[0] = {}): Promise<SimInstall> {
  const install = await createSimulatedInstall({ release, ...options });
  onCleanup(() => install.cleanup());
  return install;
}

/** Static relative imports of a module's text (import … from, export … from, bare import). */
function staticRelativeImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s(?:[^;"']*?\sfrom\s*)?["'](\.\.?\/[^"']+)["']/gm)) found.push(match[1]!);
  return found;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const bothClassNames = (text: string): boolean => text.includes("MessagePortProtocol") && text.includes("ChannelClient");

describe("release flavours (fixtures/sim-releases.ts)", () => {
  it("the table: lines, chunk names, letters and CLI versions as the brief and the public records say", () => {
    expect(RELEASES).toEqual(["3.10.2", "3.11.2", "3.12.3", "3.14.4", "3.14.5", "3.16.2", "3.16.3", "3.18.2", "4.0.0", "4.0.1"]);
    // the held-out flavours (adr/0033): bundles that name calls their hosts do not serve, onboarded only
    expect(SIM_RELEASES["3.16.3"]).toMatchObject({
      line: "zcode-task-v2",
      hostFeatures: ["cli-0.17"],
      namedNotServed: ["context-composition"],
      manifestInEnv: false,
    });
    expect(SIM_RELEASES["4.0.1"]).toMatchObject({ line: "zcode-task-v3", namedNotServed: ["session-events"], manifestInEnv: false });
    // after 3.15 (shared/reference/zcode-3.16-4.0.md): CLI 0.17.x, no public fingerprint (first-use, the
    // simulator's own manifest), 3.18.2's RPC module renamed away from chunk-*, 4.0.0 on zcode-task-v3
    expect(SIM_RELEASES["3.16.2"]).toMatchObject({
      line: "zcode-task-v2",
      cliVersion: "0.17.0",
      rpcPin: "first-use",
      hostFeatures: ["cli-0.17", "subagent-directory", "task-delete"],
    });
    expect(SIM_RELEASES["3.18.2"]).toMatchObject({
      line: "zcode-task-v2",
      cliVersion: "0.17.1",
      rpcPin: "first-use",
      hostFeatures: ["cli-0.17", "context-composition", "stop-subagent", "subagent-directory", "task-delete"],
    });
    expect(SIM_RELEASES["3.18.2"].rpcModule).not.toMatch(/\/chunk-/);
    expect(SIM_RELEASES["4.0.0"]).toMatchObject({ line: "zcode-task-v3", rpcPin: "first-use", manifestInEnv: true });
    expect(SIM_RELEASES["3.14.5"].manifestInEnv).toBe(false);
    for (const release of ["3.10.2", "3.11.2"] as const) {
      expect(SIM_RELEASES[release]).toMatchObject({
        line: "zcode-task-v1",
        rpcModule: "out/host/chunk-KGXW6KHC.js",
        exports: { protocol: "g", client: "i", service: "j" },
        cliVersion: "0.16.5",
      });
    }
    expect(SIM_RELEASES["3.12.3"]).toMatchObject({
      line: "zcode-task-v2",
      rpcModule: "out/host/chunk-PRPNU2MC.js",
      cliVersion: "0.16.5",
      appBuild: "3.12.3.7463",
    });
    expect(SIM_RELEASES["3.14.5"]).toMatchObject({
      line: "zcode-task-v2",
      rpcModule: "out/host/chunk-BMP2VTTL.js",
      helper: { path: "out/host/chunk-HH7N2YVI.js" },
      cliVersion: "0.16.9",
    });
    // 3.14.4: two of its sixteen public chunk names, the 3.14.3 Windows letters (d, e, c) and no uploader to simulate
    expect(SIM_RELEASES["3.14.4"]).toMatchObject({
      line: "zcode-task-v2",
      rpcModule: "out/host/chunk-LL2TIAQ2.js",
      helper: { path: "out/host/chunk-3SE4EMXI.js" },
      exports: { protocol: "d", client: "e", service: "a" },
      cliVersion: "0.16.9",
      appBuild: "3.14.4.7912",
      rpcPin: "first-use",
    });
    // the 3.12 line's hosts import a companion chunk that names both RPC classes
    expect(SIM_RELEASES["3.12.3"].companion).toEqual({ path: "out/host/chunk-3CQYXRMM.js" });
    for (const release of ["3.14.4", "3.14.5"] as const) expect(SIM_RELEASES[release].companion?.path).toMatch(/^out\/host\/chunk-/);
    for (const release of ["3.12.3", "3.14.4", "3.14.5"] as const) {
      const { exports, rpcExports } = SIM_RELEASES[release];
      for (const letter of Object.values(exports)) expect(["g", "i", "j"]).not.toContain(letter);
      expect(rpcExports).toMatchObject({
        MessagePortProtocol: exports.protocol,
        ChannelClient: exports.client,
        ProxyChannel: exports.service,
        SocketProtocol: "c",
      });
      expect(new Set(Object.values(rpcExports)).size).toBe(Object.keys(rpcExports).length);
    }
    expect(SIM_RELEASES["3.12.3"].exports).not.toEqual(SIM_RELEASES["3.14.5"].exports);
    expect(SIM_RELEASES["3.14.4"].exports).not.toEqual(SIM_RELEASES["3.14.5"].exports);
  });

  it("an unknown release is refused with the list of known ones", async () => {
    await expect(createSimulatedInstall({ release: "3.13.0" as SimRelease })).rejects.toThrow(
      /Unknown simulated ZCode release "3\.13\.0".*3\.10\.2, 3\.11\.2, 3\.12\.3, 3\.14\.4, 3\.14\.5/,
    );
  });
});

describe.each(RELEASES)("the %s install", (release) => {
  const flavour = SIM_RELEASES[release];
  // v2 and later lines share the v2 install layout (builtin provider config, exports found by shape)
  const v2 = flavour.line !== "zcode-task-v1";

  it("holds the RPC chunk under the release's name: its exports have the release's letters and the role shapes", async () => {
    const install = await make(release);
    expect({ release: install.release, line: install.line }).toEqual({ release, line: flavour.line });
    const mod = await import(pathToFileURL(join(install.appArchive, flavour.rpcModule)).href);
    const protocol = mod[flavour.exports.protocol];
    const client = mod[flavour.exports.client];
    const service = mod[flavour.exports.service];
    expect(protocol.name).toBe("MessagePortProtocol");
    expect(typeof protocol.prototype.send === "function" && typeof protocol.prototype.disconnect === "function").toBe(true);
    expect(client.name).toBe("ChannelClient");
    expect(typeof client.prototype.getChannel === "function" && typeof client.prototype.dispose === "function").toBe(true);
    expect(
      service !== null &&
        typeof service === "object" &&
        typeof service.toService === "function" &&
        typeof service.fromService === "function",
    ).toBe(true);
    expect(Object.keys(mod).sort()).toEqual(Object.values(flavour.rpcExports).sort());
    const roles = Object.entries(mod as Record<string, unknown>).map(([, value]) => value);
    expect(roles.filter((v) => typeof v === "function" && v.name === "MessagePortProtocol")).toHaveLength(1);
    expect(roles.filter((v) => typeof v === "function" && v.name === "ChannelClient")).toHaveLength(1);
    expect(
      roles.filter((v) => v !== null && typeof v === "object" && typeof (v as { toService?: unknown }).toService === "function"),
    ).toHaveLength(1);
    if (v2) expect(mod[flavour.rpcExports.SocketProtocol!].name).toBe("SocketProtocol");
    if (release === "3.12.3" || release.startsWith("3.14.")) expect(mod.c.name).toBe("SocketProtocol");
  });

  it("index.js imports the RPC chunk directly; besides it only the 3.12 line's companion chunk names both classes, and its exports hold no role", async () => {
    const install = await make(release);
    const hostDir = join(install.appArchive, "out/host");
    const imports = staticRelativeImports(await readFile(join(hostDir, "index.js"), "utf8"));
    expect(imports).toContain(`./${flavour.rpcModule.split("/").at(-1)}`);
    const naming = [flavour.rpcModule, ...(flavour.companion ? [flavour.companion.path] : [])].map((p) => `./${p.split("/").at(-1)}`);
    const candidates = await Promise.all(imports.map(async (spec) => ({ spec, text: await readFile(join(hostDir, spec), "utf8") })));
    expect(candidates.filter((c) => bothClassNames(c.text)).map((c) => c.spec)).toEqual(naming);
    const all = await filesUnder(install.root);
    const withBoth: string[] = [];
    for (const file of all) if (bothClassNames(await readFile(file, "utf8"))) withBoth.push(relative(install.appArchive, file));
    expect(withBoth.sort()).toEqual(naming.map((n) => `out/host/${n.slice(2)}`).sort());
    if (flavour.companion) {
      // typed service proxies over a ChannelClient: one export, RemoteServiceAccess, which holds no role
      const companion = (await import(pathToFileURL(join(install.appArchive, flavour.companion.path)).href)) as Record<string, unknown>;
      expect(Object.keys(companion)).toEqual(["a"]);
      expect((companion.a as { name: string }).name).toBe("RemoteServiceAccess");
      expect(Object.getOwnPropertyNames((companion.a as { prototype: object }).prototype)).toEqual(
        expect.arrayContaining(["zcodeAgentService", "modelSelectionService", "dispose"]),
      );
    }
    if (flavour.helper) {
      const chunkText = await readFile(join(install.appArchive, flavour.rpcModule), "utf8");
      expect(staticRelativeImports(chunkText)).toEqual([`./${flavour.helper.path.split("/").at(-1)}`]);
    }
  });

  it("its index.js names the legacy session event and 3.18's calls exactly where the release has them or names them unserved", async () => {
    const install = await make(release);
    const index = await readFile(join(install.appArchive, "out/host/index.js"), "utf8");
    const named = flavour.namedNotServed ?? [];
    expect(index.includes("onDynamicSessionEvent")).toBe(flavour.line !== "zcode-task-v3" || named.includes("session-events"));
    expect(index.includes("getContextComposition")).toBe(
      flavour.hostFeatures?.includes("context-composition") === true || named.includes("context-composition"),
    );
  });

  it("writes the manifest of exactly these files, the protocol of the line's pinned manifest, exports only on v1", async () => {
    const install = await make(release);
    const reference = await pinned(flavour.protocolFrom);
    const manifest = JSON.parse(await readFile(install.manifestPath, "utf8"));
    expect(manifest).toEqual(install.manifest);
    expect(manifest.protocol).toEqual(flavourProtocol(flavour, reference.protocol));
    expect(manifest.protocol.allowlist.agent.includes("getContextComposition")).toBe(
      flavour.hostFeatures?.includes("context-composition") === true,
    );
    expect(manifest.protocol.allowlist.agent.includes("stopSubagent")).toBe(flavour.hostFeatures?.includes("stop-subagent") === true);
    expect(manifest.protocol.allowlist.agent.includes("listSessionSubagents")).toBe(
      flavour.hostFeatures?.includes("subagent-directory") === true,
    );
    // the desktop's real delete from 3.16.2 on (GUESS after 3.15.1), ZCode's rows pages from 3.14 on
    expect(manifest.protocol.allowlist.task.includes("deleteTask")).toBe(flavour.hostFeatures?.includes("task-delete") === true);
    expect(manifest.protocol.allowlist.agent.includes("conversationRowsRangeV4")).toBe(!["3.10.2", "3.11.2", "3.12.3"].includes(release));
    expect(manifest.artifact).toMatchObject({
      appVersion: release,
      cliVersion: flavour.cliVersion,
      protocolId: flavour.line,
      metadata: reference.artifact.metadata,
    });
    expect(manifest.artifact.hostIndex).toEqual({
      path: "out/host/index.js",
      sha256: sha256(await readFile(join(install.appArchive, "out/host/index.js"))),
    });
    const rpcSha = sha256(await readFile(join(install.appArchive, flavour.rpcModule)));
    expect(install.rpcModuleSha256).toBe(rpcSha);
    // a first-use flavour pins the host entry only, like the pinned 3.14 manifests
    expect(manifest.artifact.rpcModule).toEqual(
      flavour.rpcPin === "first-use" ? { pin: "first-use" } : { path: flavour.rpcModule, sha256: rpcSha },
    );
    expect(manifest.artifact.cliSha256).toBe(sha256(await readFile(join(install.resourcesDir, "glm", "zcode.cjs"))));
    if (v2) expect("exports" in manifest.artifact).toBe(false);
    else expect(manifest.artifact.exports).toEqual({ protocol: "g", client: "i", service: "j" });
    expect(install.env.ZCODE_ACP_CONFIG_DIR).toBe(join(dirname(install.manifestPath), "config"));
    expect(install.env.ZCODE_ACP_MANIFEST).toBe(flavour.manifestInEnv ? install.manifestPath : undefined);
    // every release with a pinned manifest names its simulated one; of the others only 3.14.5 does not
    if (verifiedReleases().includes(release)) expect(flavour.manifestInEnv).toBe(true);
  });

  it("has the builtin provider config on v2 only (resources/config/provider/zcode-builtin.json), without secrets", async () => {
    const install = await make(release);
    const path = join(install.resourcesDir, "config/provider/zcode-builtin.json");
    if (!v2) {
      expect(install.builtinProviderConfigPath).toBeUndefined();
      await expect(readFile(path)).rejects.toMatchObject({ code: "ENOENT" });
      return;
    }
    expect(install.builtinProviderConfigPath).toBe(path);
    const config = JSON.parse(await readFile(path, "utf8"));
    expect(config.providers.map((p: { providerName: string }) => p.providerName)).toEqual(["Z.ai - Coding Plan", "BigModel - Start Plan"]);
    expect(JSON.stringify(config)).not.toMatch(/sk-|apiKey|Authorization/);
  });

  it("writes the same host bytes every time (index.js, chunks, manifest fingerprints)", async () => {
    const parentDir = await mkdtemp(join(tmpdir(), "zcode-sim-det-"));
    onCleanup(() => rm(parentDir, { recursive: true, force: true }));
    const [a, b] = await Promise.all([make(release), make(release, { parentDir })]);
    const generated = ["out/host/index.js", flavour.rpcModule, ...(flavour.helper ? [flavour.helper.path] : [])];
    for (const path of generated)
      expect(sha256(await readFile(join(a.appArchive, path)))).toBe(sha256(await readFile(join(b.appArchive, path))));
    expect(a.manifest.artifact.hostIndex).toEqual(b.manifest.artifact.hostIndex);
    expect(a.manifest.artifact.rpcModule).toEqual(b.manifest.artifact.rpcModule);
  });

  it("runs under the Electron stand-in (worker + parentPort shim + the install's own RPC chunk)", async () => {
    const install = await make(release);
    const args = [
      STANDIN_LAUNCH,
      WORKER_ENTRY,
      join(install.appArchive, "out/host/index.js"),
      join(install.appArchive, flavour.rpcModule),
      JSON.stringify(flavour.exports),
    ];
    if (install.builtinProviderConfigPath) args.push(install.builtinProviderConfigPath);
    const { stdout } = await run(install.executable, args, { env: { ...process.env, ...install.env, ELECTRON_RUN_AS_NODE: "1" } });
    const line = stdout.split("\n").find((l) => l.startsWith('{"result"'));
    expect(JSON.parse(line ?? "{}")).toEqual({ result: expect.objectContaining({ available: true }), electronRunAsNode: "1" });
    const log = await install.readCallLog();
    expect(log.find((e) => e.kind === "call")).toMatchObject({ service: "zcode-agent", method: "initialize" });
    expect(log.at(-1)).toMatchObject({ kind: "exit", code: 0 });
  });
});

describe("flavour options", () => {
  it("appVersion / cliVersion still override; the darwin build follows the release (3.12.3.7463)", async () => {
    const install = await make("3.12.3", { platform: "darwin" });
    const info = plist.parse(await readFile(join(install.root, "Contents/Info.plist"), "utf8")) as Record<string, unknown>;
    expect(info).toMatchObject({ CFBundleShortVersionString: "3.12.3", CFBundleVersion: "3.12.3.7463" });
    expect(install.builtinProviderConfigPath).toBe(join(install.root, "Contents/Resources/config/provider/zcode-builtin.json"));
    await readFile(install.builtinProviderConfigPath!);
    const other = await make("3.14.5", { appVersion: "3.14.6", cliVersion: "0.17.0" });
    expect(other.manifest.artifact).toMatchObject({
      appVersion: "3.14.6",
      cliVersion: "0.17.0",
      protocolId: "zcode-task-v2",
      rpcModule: { path: "out/host/chunk-BMP2VTTL.js" },
    });
    expect(JSON.parse(await readFile(join(other.appArchive, "package.json"), "utf8")).version).toBe("3.14.6");
  });

  it("the default release comes from ZCODE_ACP_SIM_RELEASE (else 3.11.2)", async () => {
    const saved = process.env.ZCODE_ACP_SIM_RELEASE;
    try {
      process.env.ZCODE_ACP_SIM_RELEASE = "3.12.3";
      const chosen = await createSimulatedInstall();
      onCleanup(() => chosen.cleanup());
      delete process.env.ZCODE_ACP_SIM_RELEASE;
      const fallback = await createSimulatedInstall();
      onCleanup(() => fallback.cleanup());
      expect([chosen.release, fallback.release]).toEqual(["3.12.3", "3.11.2"]);
    } finally {
      if (saved === undefined) delete process.env.ZCODE_ACP_SIM_RELEASE;
      else process.env.ZCODE_ACP_SIM_RELEASE = saved;
    }
  });

  it("make-install --release writes that flavour and reports release and line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "zcode-sim-cli-release-"));
    onCleanup(() => rm(dir, { recursive: true, force: true }));
    const script = fileURLToPath(new URL("../../fixtures/scripts/make-install.ts", import.meta.url));
    const tsx = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));
    const { stdout } = await run(tsx, [script, "--release", "3.14.5", "--dir", dir]);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      release: "3.14.5",
      line: "zcode-task-v2",
      builtinProviderConfigPath: join(dir, "ZCode/resources/config/provider/zcode-builtin.json"),
    });
    expect(report.env.ZCODE_ACP_MANIFEST).toBeUndefined();
    // another process wrote the same host bytes
    const written = JSON.parse(await readFile(report.manifestPath, "utf8"));
    const here = await make("3.14.5");
    expect([written.artifact.hostIndex, written.artifact.rpcModule]).toEqual([
      here.manifest.artifact.hostIndex,
      here.manifest.artifact.rpcModule,
    ]);
    await expect(run(tsx, [script, "--release", "9.9.9"])).rejects.toMatchObject({ code: 2 });
  });
});

describe("SocketProtocol of the v2 chunks (docs/zcode-host.md §13.6)", () => {
  it("frames messages with the 13-byte header and delivers what arrives in pieces", async () => {
    const install = await make("3.12.3");
    const rpc = await loadRpcModule(install);
    const wire = new PassThrough();
    const written: Buffer[] = [];
    const sender = new rpc.SocketProtocol!({
      on() {},
      off() {},
      write: (b: Buffer) => {
        written.push(b);
        wire.write(b);
      },
      end() {},
    });
    const received: Uint8Array[] = [];
    const receiver = new rpc.SocketProtocol!(wire);
    receiver.onMessage((bytes: Uint8Array) => received.push(bytes));
    sender.send(Uint8Array.of(1, 2, 3));
    sender.send(Uint8Array.of(4));
    expect(written[0]!.subarray(0, 13).toString("hex")).toBe("01" + "00000001" + "00000000" + "00000003");
    await waitUntil(
      () => (received.length === 2 ? received : undefined),
      (w) => {
        wire.on("data", w);
        return () => wire.off("data", w);
      },
      2000,
      "two framed messages",
    );
    expect(received.map((b) => [...b])).toEqual([[1, 2, 3], [4]]);
    receiver.disconnect();
  });
});

describe("what the releases after 3.15 change on the host (shared/reference/zcode-3.16-4.0.md)", () => {
  it("3.16.2 (CLI 0.17.0): listSessions refuses includeArchived with -32602; without it, and on 3.14.5, it lists", async () => {
    for (const release of ["3.16.2", "3.14.5"] as const) {
      const rig = await sessionRig({ release });
      const listed = rig.conn.agent.listSessions({ workspacePath: WS, includeArchived: false });
      if (release === "3.16.2")
        await expect(listed).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/unknown parameter/) });
      else expect((await listed).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
      expect((await rig.conn.agent.listSessions({ workspacePath: WS })).map((s: Any) => s.sessionId)).toEqual([rig.sessionId]);
    }
  });

  it("3.18.2: getContextComposition (11 categories summing to the used tokens) and stopSubagent; 3.16.2 has neither", async () => {
    const rig = await sessionRig({ release: "3.18.2" });
    await promptToEnd(rig, "hello");
    const target = { workspacePath: WS, sessionId: rig.sessionId };
    const composition = await rig.conn.agent.getContextComposition(target);
    expect(composition.categories).toHaveLength(11);
    expect(composition.categories.reduce((sum: number, c: Any) => sum + c.tokens, 0)).toBe(composition.totalTokens);
    expect(composition.totalTokens).toBeGreaterThan(0);
    expect(composition.contextWindow).toBeGreaterThan(composition.totalTokens);
    for (const c of composition.categories)
      expect(c).toEqual({ id: expect.any(String), label: expect.any(String), tokens: expect.any(Number) });
    expect(await rig.conn.agent.stopSubagent({ ...target, toolCallId: "call_none" })).toEqual({ stopped: false });
    await expect(rig.conn.agent.stopSubagent(target)).rejects.toMatchObject({ code: -32602 });
    const older = await sessionRig({ release: "3.16.2" });
    await expect(older.conn.agent.getContextComposition({ workspacePath: WS, sessionId: older.sessionId })).rejects.toThrow(
      /Method not found/,
    );
    await expect(older.conn.agent.stopSubagent({ workspacePath: WS, sessionId: older.sessionId, toolCallId: "x" })).rejects.toThrow(
      /Method not found/,
    );
  });

  it("4.0.0: no sendPrompt, no zcode-task answers or stop; a whole turn with a permission runs on V4 alone (hello protocol 3)", async () => {
    const rig = await v4Rig({ release: "4.0.0" });
    const target = { workspacePath: WS, sessionId: rig.sessionId };
    await expect(rig.conn.agent.sendPrompt({ ...target, content: "hi" })).rejects.toThrow(/Method not found: sendPrompt/);
    for (const method of ["respondPermission", "respondElicitation", "stopGeneration"]) {
      await expect(rig.conn.task[method]({ taskId: rig.sessionId, requestId: "r", optionId: "deny", action: "cancel" })).rejects.toThrow(
        new RegExp(`Method not found: ${method}`),
      );
    }
    expect((await rig.conn.agent.helloConversationV4({})).protocolVersion).toBe(3);
    // the legacy event is gone: a listener of it gets nothing while the turn runs
    const legacy = new EventCollector(rig.conn, { ...target, deliveryKind: "desktop-continuous", includeSnapshot: true });
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:permission command=ls" });
    const pending = await rig.reader.waitFor((r) => r.held?.pendingInteractions[0], "a pending permission");
    expect(
      await v4Command(rig, "resolveInteraction", { interactionId: pending.interactionId, answer: { optionId: "allow_once" } }),
    ).toMatchObject({
      status: "accepted",
    });
    await rig.reader.idleAfter(1);
    expect(rowsOf(rig.reader, "toolCall")[0]).toMatchObject({ toolName: "Bash", status: "success" });
    // legacy events would have been fired before the frame that shows the turn's end (frames flush 30 ms later)
    expect(legacy.events).toEqual([]);
    const log = await rig.install.readCallLog();
    expect(log.filter((e) => e.kind === "listen" && e.event === "onDynamicSessionEvent")).toHaveLength(1);
  });

  it("4.0.0: a provider header request reaches only the workspace's header listeners (a new one gets it replayed); a stop withdraws it", async () => {
    const rig = await v4Rig({ release: "4.0.0" });
    const target = { workspacePath: WS, sessionId: rig.sessionId };
    const legacy = new EventCollector(rig.conn, { ...target, deliveryKind: "desktop-continuous", includeSnapshot: true });
    const wakers = new Set<() => void>();
    const listen = (event: string): Any[] => {
      const got: Any[] = [];
      rig.conn.agent[event]({ workspacePath: WS })((payload: Any) => {
        got.push(payload);
        for (const wake of [...wakers]) wake();
      });
      return got;
    };
    const until = <T>(check: () => T | undefined, what: string): Promise<T> =>
      waitUntil(check, (wake) => (wakers.add(wake), () => wakers.delete(wake)), 5000, what);
    const requests = listen("onDynamicWorkspaceProviderRuntimeHeadersRequest");
    const cancelled = listen("onDynamicWorkspaceProviderRuntimeHeadersCancelled");
    await rig.reader.subscribe(rig.sessionId);
    await v4Command(rig, "sendText", { text: "sim:provider-headers" });
    const request = await until(() => requests[0], "the header request");
    expect(request).toMatchObject({
      sessionId: rig.sessionId,
      requestId: expect.any(String),
      workspace: { workspacePath: WS },
      accountAccess: { mode: "start-plan" },
      reason: "model-request",
    });
    const late = listen("onDynamicWorkspaceProviderRuntimeHeadersRequest");
    await until(() => late[0], "the replayed request");
    expect(late).toEqual([request]);
    await v4Command(rig, "stop", {});
    await until(() => cancelled[0], "the withdrawal");
    expect(cancelled).toEqual([{ requestId: request.requestId, sessionId: rig.sessionId, workspace: { workspacePath: WS } }]);
    expect(requests).toHaveLength(1);
    // nothing on a legacy stream (a 4.0.0 host has none)
    expect(legacy.events).toEqual([]);
  });

  it("4.0.0's manifest: the zcode-task-v3 descriptor without the legacy calls, naming the V4 read calls, frame and header events", async () => {
    const install = await make("4.0.0");
    const { protocol } = install.manifest;
    expect(protocol.id).toBe("zcode-task-v3");
    expect(install.manifest.artifact.protocolId).toBe("zcode-task-v3");
    expect(protocol.allowlist.agent).not.toContain("sendPrompt");
    expect(protocol.allowlist.agent).toEqual(
      expect.arrayContaining([
        "subscribeConversationV4",
        "resyncConversationV4",
        "unsubscribeConversationV4",
        "conversationRowsRangeV4",
        "sendConversationCommandV4",
        "helloConversationV4",
      ]),
    );
    expect(protocol.events.agent).toEqual(["onDynamicConversationFrame", "onDynamicWorkspaceProviderRuntimeHeadersRequest"]);
    expect(protocol.allowlist.agent).not.toContain("readSessionMessages");
    // the schema's task channel is named and allows only the desktop's task delete (GUESS after 3.15.1);
    // its operations are never run on this line
    expect(protocol.allowlist.task).toEqual(["deleteTask", "listDeletedTaskIds"]);
    expect(protocol.events.task).toEqual([]);
    expect(Object.values(protocol.operations).map((op) => op.method)).toEqual(Array(3).fill("sendConversationCommandV4"));
  });
});
