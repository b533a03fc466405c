/**
 * Onboarding the builds users run now (issue 26; docs/runtime-contract.md §8), through the built
 * CLI against simulated installs: a ZCode 3.16.2 whose agent CLI declares many versions (as the
 * real 15 MB bundle does) is reviewed with CLI "unknown", its SHA-256 pinned, and accepted; the
 * bridge then lists sessions without `includeArchived`, while a pinned 3.12.3 (CLI 0.16.5) still
 * sends it; a build whose host bundle has only the V4 read path is refused, naming what is missing;
 * `onboard --probe` asks before it runs anything, starts the host without a model call, and
 * writes a redacted report (0600) with the hello's protocol version and capabilities.
 */
import { appendFile, mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { AcpTestClient } from "../../support/acp-test-client.js";
import { runCli } from "../../support/cli-process.js";

let sim: SimInstall;
const clients: AcpTestClient[] = [];
const storeFiles = async (o: SimInstall): Promise<string[]> => readdir(join(o.env.ZCODE_ACP_CONFIG_DIR!, "manifests")).catch(() => []);
const callsOf = async (o: SimInstall): Promise<{ method?: string; params?: unknown }[]> =>
  (await o.readCallLog().catch(() => [])).filter((e) => e.kind === "call");

/** every module of the simulated host app, rewritten */
async function editHost(o: SimInstall, change: (text: string) => string): Promise<void> {
  const dir = join(o.appArchive, "out", "host");
  for (const name of await readdir(dir)) {
    if (!name.endsWith(".js")) continue;
    const file = join(dir, name);
    await writeFile(file, change(await readFile(file, "utf8")));
  }
}

/** a simulated 3.16.2 (CLI 0.17.0 line) whose zcode.cjs declares a second version, as a bundle of dependencies does */
async function build3162(): Promise<SimInstall> {
  const o = await createSimulatedInstall({ release: "3.14.5", appVersion: "3.16.2", cliVersion: "0.17.0" });
  await appendFile(join(o.resourcesDir, "glm", "zcode.cjs"), '\nconst bundledDependency = { version: "4.5.6" };\n');
  return o;
}

beforeAll(async () => {
  sim = await build3162();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => c.kill("SIGKILL"))));
});
afterAll(async () => {
  await sim.cleanup();
});

describe("a 3.16.2 build whose CLI declares many versions", () => {
  it("onboard reviews it with CLI unknown, says which paths it uses, and --accept pins the CLI's SHA-256", async () => {
    const run = await runCli(["onboard"], { env: sim.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("ZCode onboarding: candidate found");
    expect(run.stdout).toMatch(/CLI version:\s+unknown \(SHA-256 [0-9a-f]{64}\)/);
    expect(run.stdout).toMatch(/input path:\s+V4 input \(sendConversationCommandV4 \/ sendText\)/);
    expect(run.stdout).toMatch(/read path:\s+legacy onDynamicSessionEvent/);
    expect(run.stdout).toContain("listSessions is called without includeArchived");
    expect(await storeFiles(sim)).toEqual([]);

    const accepted = await runCli(["onboard", "--accept"], { env: sim.env });
    expect(accepted.code).toBe(0);
    const manifest = JSON.parse(await readFile(join(sim.env.ZCODE_ACP_CONFIG_DIR!, "manifests", "zcode-3.16.2.local.json"), "utf8")) as {
      artifact: { cliVersion: string; cliSha256: string };
    };
    expect(manifest.artifact.cliVersion).toBe("unknown");
    expect(run.stdout).toContain(manifest.artifact.cliSha256);
    const check = await runCli(["check"], { env: sim.env });
    expect(check.code).toBe(0);
    expect(check.stdout).toContain(
      "CLI version unknown (it declares no single version and zcode-acp does not run it; a local manifest pins its SHA-256)",
    );

    // the bridge lists sessions without the parameter CLI 0.17.0 refuses
    const client = await AcpTestClient.start({ env: sim.env });
    clients.push(client);
    await client.initialize();
    await client.agent.request("session/list", { cwd: await mkdtemp(join(dirname(sim.root), "ws-")) });
    const lists = (await callsOf(sim)).filter((c) => c.method === "listSessions");
    expect(lists.length).toBeGreaterThan(0);
    for (const call of lists) expect(call.params).not.toHaveProperty("includeArchived");
    client.expectValid();
  });

  it("a pinned 3.12.3 (CLI 0.16.5) still sends includeArchived: false", async () => {
    const pinned = await createSimulatedInstall({ release: "3.12.3" });
    try {
      const client = await AcpTestClient.start({ env: pinned.env });
      clients.push(client);
      await client.initialize();
      await client.agent.request("session/list", { cwd: await mkdtemp(join(dirname(pinned.root), "ws-")) });
      const lists = (await callsOf(pinned)).filter((c) => c.method === "listSessions");
      expect(lists.length).toBeGreaterThan(0);
      for (const call of lists) expect(call.params).toMatchObject({ includeArchived: false });
      await client.close();
    } finally {
      await pinned.cleanup();
    }
  });
});

describe("a build whose host reads only through the V4 read path", () => {
  it("is recognised as the zcode-task-v3 line and, with no pinned v3 release, takes the line's own descriptor", async () => {
    const other = await build3162();
    try {
      await editHost(other, (t) => t.replaceAll("onDynamicSessionEvent", "onDynamicConversationFrame") + "\n// subscribeConversationV4\n");
      const run = await runCli(["onboard"], { env: other.env });
      expect(run.stdout).toContain("V4 conversation frames (the zcode-task-v3 line)");
      expect(run.stdout).toContain("no release of zcode-task-v3 is pinned yet: the descriptor is the line's own");
      // without --accept and a terminal nothing is written
      expect(await storeFiles(other)).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });
});

describe("onboard --probe", () => {
  it("without --accept and without a terminal it starts nothing", async () => {
    const other = await build3162();
    try {
      const run = await runCli(["onboard", "--probe"], { env: other.env });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain("it runs code of a build zcode-acp has NOT verified");
      expect(run.stderr).toContain("nothing was started");
      expect(await callsOf(other)).toEqual([]);
      expect(await storeFiles(other)).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });

  it("--accept starts the host without a model call and writes a redacted JSON report, 0600, pinning nothing", async () => {
    const other = await build3162();
    try {
      const cwd = await mkdtemp(join(dirname(other.root), "cwd-"));
      const review = JSON.parse((await runCli(["onboard", "--json"], { env: other.env })).stdout) as {
        cliSha256: string;
        hostIndex: { sha256: string };
        rpcModule: { path: string; sha256: string };
      };
      const run = await runCli(["onboard", "--probe", "--accept"], { env: other.env, cwd });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/V4 hello:\s+ok: protocol version 3/);
      // the review is read in the terminal: no progress logs (NDJSON) on stderr beside it
      expect(run.stderr).not.toContain("launching the ZCode host");
      expect(run.stderr).not.toMatch(/"level":"info"/);
      const file = join(cwd, "zcode-acp-probe-3.16.2.json");
      expect(run.stdout).toContain(`Report written to ${file} (mode 0600)`);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const text = await readFile(file, "utf8");
      const report = JSON.parse(text) as Record<string, any>;
      expect(report).toMatchObject({
        kind: "zcode-acp onboard probe",
        zcode: { appVersion: "3.16.2", cliVersion: "unknown" },
        hashes: {
          cli: review.cliSha256,
          hostIndex: { sha256: review.hostIndex.sha256 },
          rpcModule: { path: review.rpcModule.path, sha256: review.rpcModule.sha256 },
        },
        review: {
          outcome: "candidate",
          line: "zcode-task-v2",
          read: expect.stringMatching(/^legacy onDynamicSessionEvent/),
          sessionList: expect.stringMatching(/^listSessions without includeArchived/),
          contextUsage: expect.stringMatching(/^the session's own usage/),
          missing: [],
        },
        probe: {
          start: { status: "ok" },
          hello: { status: "ok", protocolVersion: 3 },
          initialize: { status: "ok" },
          listSessions: { status: "ok", sessions: 0 },
        },
      });
      expect(report.hashes.executable).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.keys(report.probe.hello.capabilities as object).length).toBeGreaterThan(0);
      expect(report.probe.hello).not.toHaveProperty("auth");
      // nothing under the home directory, not the install root, not the working directory
      for (const secret of [other.env.HOME!, other.root, cwd]) expect(text).not.toContain(secret);
      // the host ran: the handshake and the list, no prompt of any kind, listSessions without includeArchived
      const calls = await callsOf(other);
      const methods = calls.map((c) => c.method);
      expect(methods).toEqual(expect.arrayContaining(["helloConversationV4", "initializeConversationV4", "listSessions"]));
      expect(methods.filter((m) => m === "sendConversationCommandV4" || m === "createSession")).toEqual([]);
      // sendPrompt only as the served-call probe (adr/0033): no session, so nothing runs
      expect(calls.filter((c) => c.method === "sendPrompt").map((c) => c.params)).toEqual([{}]);
      expect(report.probe.served).toMatchObject({ status: "ok", notServed: [] });
      for (const call of calls.filter((c) => c.method === "listSessions")) expect(call.params).not.toHaveProperty("includeArchived");
      expect(await storeFiles(other)).toEqual([]);
    } finally {
      await other.cleanup();
    }
  });

  it("--report FILE.md writes Markdown", async () => {
    const other = await build3162();
    try {
      const file = join(dirname(other.root), "probe.md");
      const run = await runCli(["onboard", "--probe", "--accept", "--report", file], { env: other.env });
      expect(run.code).toBe(0);
      const text = await readFile(file, "utf8");
      expect(text).toMatch(/^# zcode-acp onboard probe: ZCode 3\.16\.2/);
      expect(text).toContain("- V4 hello: ok — protocol version 3");
      expect(text).toContain("- listSessions without includeArchived: ok");
      expect(text).toMatch(/- session list: listSessions without includeArchived/);
      expect(text).toContain("- missing: nothing this path needs");
      expect(text).not.toContain(other.env.HOME!);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    } finally {
      await other.cleanup();
    }
  });

  it("--probe and --report are usage errors outside onboard", async () => {
    expect((await runCli(["check", "--probe"], { env: sim.env })).code).toBe(2);
    expect((await runCli(["onboard", "--report", "x.json"], { env: sim.env })).code).toBe(2);
  });
});
