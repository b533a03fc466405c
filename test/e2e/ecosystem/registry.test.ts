/**
 * Ready for the ACP Registry (adr/0025-registry-entry-and-logout.md):
 *
 * - the entry `registry/<id>/agent.json` and `icon.svg` follow the registry's format and its CI
 *   rules, restated here in our words: id pattern and directory, required fields, an npx package
 *   pinned to exactly this package's name and version (never `latest`), a 16×16 square icon that
 *   only uses `currentColor`;
 * - the registry's own launch checks (./support/registry-checks.ts restates them), run against
 *   the PACKED package installed offline from its tarball into a sandbox and started exactly as
 *   the registry starts an npx agent, `npx --prefix <sandbox> --yes <package>`:
 *   - verify_agents.py without --auth-check: empty stdin → exit 0, nothing on stdout;
 *   - the auth probe (empty HOME, the environment whitelist, the validator's one `initialize`
 *     line, only the first stdout line read): passes, with zcode-app (agent) and zcode-onboard
 *     (terminal by its `_meta`);
 *   - the nightly protocol matrix with no ZCode (every session call `auth_required`, close `{}`)
 *     and against a simulated install (new, list, resume, close succeed; set_model of the
 *     matrix's made-up model is invalid_params; `models` in session/new).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { installRootCandidates } from "../../../src/install/discover.js";
import type { InstallPlatform } from "../../../src/install/layout.js";
import { Transcript } from "../../support/acp-transcript.js";
import { NPX, packAndInstall, ROOT, type PackedPackage } from "./support/packed-package.js";
import {
  AUTH_CHECK_ENV_WHITELIST,
  authCheckEnv,
  runAuthCheck,
  runProtocolMatrix,
  VALIDATOR_INITIALIZE_LINE,
  type Launch,
} from "./support/registry-checks.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  version: string;
  license: string;
  repository?: string | { url: string };
};
const REGISTRY = join(ROOT, "registry");
const ids = readdirSync(REGISTRY, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const ID = ids[0]!;
const entry = JSON.parse(readFileSync(join(REGISTRY, ID, "agent.json"), "utf8")) as Record<string, any>;
const icon = readFileSync(join(REGISTRY, ID, "icon.svg"), "utf8");

describe("registry entry (registry/<id>/agent.json, icon.svg)", () => {
  it("one entry whose directory is its id: lowercase letters, digits and hyphens, not the taken `zcode-acp`", () => {
    expect(ids).toEqual([ID]);
    expect(entry.id).toBe(ID);
    expect(ID).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(ID).not.toBe("zcode-acp"); // held by another ZCode bridge (adr/0025)
  });

  it("has the required fields and only the format's fields", () => {
    for (const field of ["id", "name", "version", "description"]) expect(entry[field], field).toEqual(expect.stringMatching(/\S/));
    // agent.schema.json's properties (draft-07); `icon` is set by the registry's build
    const allowed = [
      "id",
      "name",
      "version",
      "description",
      "repository",
      "website",
      "authors",
      "license",
      "license_url",
      "icon",
      "distribution",
    ];
    expect(Object.keys(entry).filter((k) => !allowed.includes(k))).toEqual([]);
    expect(entry.authors).toEqual(expect.arrayContaining([expect.stringMatching(/\S/)]));
    expect(entry.license).toBe(pkg.license);
    expect(entry.version).toMatch(/^[0-9]+\.[0-9]+\.[0-9]+/);
    // the registry's current schema requires license_url (all entries but one): the license's own text, which LICENSE holds
    expect(entry.license_url).toBe("https://www.apache.org/licenses/LICENSE-2.0");
    expect(pkg.license).toBe("Apache-2.0");
    const license = readFileSync(join(ROOT, "LICENSE"), "utf8");
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\/\s/);
    expect(license).toContain("END OF TERMS AND CONDITIONS");
    for (const url of [entry.license_url, entry.repository, entry.website].filter((u) => u !== undefined))
      expect(() => new URL(url)).not.toThrow();
    const repository = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
    if (repository === undefined) expect(entry.repository).toBeUndefined();
    else expect(entry.repository).toBe(repository.replace(/^git\+/, "").replace(/\.git$/, ""));
  });

  it("is distributed by npx as exactly this package and version, never `latest`, with no arguments (ACP on stdio is the default command)", () => {
    expect(entry.version).toBe(pkg.version);
    expect(Object.keys(entry.distribution)).toEqual(["npx"]);
    expect(entry.distribution.npx).toEqual({ package: `${pkg.name}@${pkg.version}` });
    expect(JSON.stringify(entry)).not.toMatch(/latest/i);
    // build_registry.py's pinning rule: no @latest, and the package's @x.y.z equals version
    const pinned = /@(\d+\.\d+\.\d+[^@/]*)$/.exec(entry.distribution.npx.package as string)?.[1];
    expect(pinned).toBe(entry.version);
  });

  it("has a square 16×16 monochrome icon: every fill and stroke is currentColor (or none / inherit)", () => {
    expect(icon).not.toContain("<!--"); // build_registry.py refuses comments
    expect(icon.trimStart()).toMatch(/^<svg\b/); // the root element is <svg> (no prolog needed)
    expect(icon.trimEnd()).toMatch(/<\/svg>$/);
    const svg = /<svg\b[^>]*>/.exec(icon)?.[0] ?? "";
    expect(svg).toMatch(/\swidth="16"/);
    expect(svg).toMatch(/\sheight="16"/);
    expect(svg).toMatch(/\sviewBox="0 0 16 16"/);
    expect(icon).toMatch(/currentColor/);
    const paints = [...icon.matchAll(/\b(fill|stroke)\s*[=:]\s*["']?([^"';\s>]+)/gi)].map((m) => m[2]!.toLowerCase());
    expect(paints.length).toBeGreaterThan(0);
    expect(paints.filter((v) => !["currentcolor", "none", "inherit"].includes(v))).toEqual([]);
    // no other way to colour it either
    expect(icon).not.toMatch(/#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(|stop-color|<image|<style/i);
  });

  it("is named in the README's Registry section", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const start = readme.indexOf("\n## Registry\n");
    expect(start).toBeGreaterThanOrEqual(0);
    const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
    expect(section).toContain(`\`${ID}\``);
    expect(section).toContain(`registry/${ID}/agent.json`);
  });
});

// the premise of the no-ZCode checks: no ZCode where zcode-acp looks by default (HOME is empty)
const platform = process.platform as InstallPlatform;
const zcodeHere =
  ["darwin", "linux", "win32"].includes(platform) && installRootCandidates(platform, { HOME: "/nonexistent" }).some(existsSync);

describe("the registry's launch checks on the packed package, started as the registry starts it", () => {
  let packed: PackedPackage;
  let sim: SimInstall;
  beforeAll(async () => {
    [packed, sim] = await Promise.all([packAndInstall(), createSimulatedInstall()]);
  }, 180_000);
  afterAll(async () => {
    packed?.cleanup();
    await sim?.cleanup();
  });

  /** `npx --prefix <sandbox> --yes <package> <args…>` from the sandbox, with a fresh empty HOME and the whitelist environment */
  const launch = (args: string[] = [], agentEnv: Record<string, string> = {}): Launch => {
    const home = mkdtempSync(join(packed.work, "home-"));
    const base = { ...process.env };
    // verify_agents.py puts the sandbox's bins first on PATH
    base.PATH = [join(home, ".local", "bin"), join(packed.sandbox, "node_modules", ".bin"), process.env.PATH].join(delimiter);
    return {
      command: NPX,
      args: ["--prefix", packed.sandbox, "--yes", entry.distribution.npx.package as string, ...args],
      cwd: packed.sandbox,
      env: authCheckEnv(base, home, agentEnv),
    };
  };

  /** the matrix transcript, every agent line valid ACP (the client's unstable and legacy methods aside) */
  const validLines = (log: Array<{ from: "agent" | "client"; raw: string }>): string[] => {
    const transcript = new Transcript();
    for (const line of log) transcript.record(line.from, line.raw);
    return transcript.problems.filter((p) => !/^\[client\] unexpected method session\/(set_model|fork)$/.test(p));
  };

  it("the tarball is the package agent.json names, with the LICENSE, and without the registry entry", () => {
    expect(packed.filename).toBe(`${pkg.name}-${pkg.version}.tgz`);
    expect(entry.distribution.npx.package).toBe(`${pkg.name}@${pkg.version}`);
    expect(packed.files).toContain("LICENSE");
    expect(packed.files.some((f) => f.startsWith("registry/"))).toBe(false); // the entry is for the registry's repository, not the package
  });

  it("the whitelist environment is the validator's, exactly", () => {
    const everything = Object.fromEntries(
      [...AUTH_CHECK_ENV_WHITELIST, "SECRET", "ZCODE_ACP_ZCODE_INSTALL", "NODE_OPTIONS"].map((n) => [n, "x"]),
    );
    expect(Object.keys(authCheckEnv(everything, "/h")).sort()).toEqual([...AUTH_CHECK_ENV_WHITELIST, "TERM", "HOME"].sort());
  });

  it.skipIf(zcodeHere)("with empty stdin it exits 0 within the 10 s launch window and writes nothing to stdout", async () => {
    const spec = launch();
    const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exit = await new Promise<number | null | "still running">((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("still running");
      }, 12_000); // 10 s, then 2 s grace
      child.once("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exit, stderr).toBe(0);
    expect(stdout).toBe("");
  });

  it.skipIf(zcodeHere)(
    "the auth probe passes: the first stdout line is the initialize answer, with an agent and a terminal method",
    async () => {
      const probe = await runAuthCheck(launch());
      expect(probe.verdict, probe.stderr).toBe("pass");
      const first = JSON.parse(probe.firstLine!) as Record<string, any>;
      expect(first).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, agentInfo: { name: "zcode-acp" } } });
      expect(probe.methods).toEqual([
        ["zcode-app", "agent"],
        ["zcode-onboard", "terminal"],
      ]);
      expect(first.result.authMethods.find((m: { type?: string }) => m.type === "terminal")).toBeUndefined(); // no auth.terminal was advertised
      const transcript = new Transcript();
      transcript.record("client", VALIDATOR_INITIALIZE_LINE);
      transcript.record("agent", probe.firstLine!);
      expect(transcript.problems).toEqual([]);
    },
  );

  it.skipIf(zcodeHere)(
    "the protocol matrix without ZCode: every session call is auth_required and says why; close of the unknown id is {}",
    async () => {
      const ws = mkdtempSync(join(packed.work, "ws-"));
      const matrix = await runProtocolMatrix(launch(), ws);
      expect(matrix.initialize.class, matrix.stderr).toBe("success");
      expect(matrix.sessionNew.class, matrix.stderr).toBe("auth_required");
      expect(matrix.sessionNew.answer?.error).toMatchObject({
        code: -32000,
        message: expect.stringMatching(
          /^No ZCode install found at .+ Install ZCode there, or point zcode-acp at it with --zcode-install DIR/,
        ),
        data: { code: "UNSUPPORTED_ZCODE" },
      });
      expect(matrix.probes.map((p) => [p.method, p.class])).toEqual([
        ["session/list", "auth_required"],
        ["session/fork", "auth_required"],
        ["session/resume", "auth_required"],
        ["session/set_model", "auth_required"],
        ["session/close", "success"],
      ]);
      for (const probe of matrix.probes.slice(0, 4)) expect(probe.answer?.error?.message).toMatch(/^No ZCode install found at /);
      expect(matrix.probes[4]!.answer?.result).toEqual({});
      expect(matrix.closeProbed && matrix.closeSupported).toBe(true);
      expect(matrix.setModel).toBe(false);
      expect(matrix.capabilities).toEqual({ loadSession: true, list: true, fork: false, resume: true });
      expect(validLines(matrix.log)).toEqual([]);
    },
  );

  it("the protocol matrix against a simulated install: new, list, resume and close succeed; set_model is served; models in session/new", async () => {
    const ws = mkdtempSync(join(packed.work, "ws-"));
    const { ZCODE_DATA_BASE_DIR, ZCODE_SIM_CALL_LOG, ZCODE_ACP_CONFIG_DIR } = sim.env;
    const agentEnv = {
      ZCODE_DATA_BASE_DIR: ZCODE_DATA_BASE_DIR!,
      ZCODE_SIM_CALL_LOG: ZCODE_SIM_CALL_LOG!,
      ZCODE_ACP_CONFIG_DIR: ZCODE_ACP_CONFIG_DIR!,
    };
    // the agent.json `args` an install elsewhere would need, as the README's "Try it without ZCode" gives them
    const matrix = await runProtocolMatrix(launch(["--zcode-install", sim.root, "--manifest", sim.manifestPath], agentEnv), ws);
    expect(matrix.initialize.class, matrix.stderr).toBe("success");
    expect(matrix.sessionNew.class, matrix.stderr).toBe("success");
    const created = matrix.sessionNew.answer!.result as Record<string, any>;
    const modelOption = (created.configOptions as Array<Record<string, any>>).find((o) => o.category === "model")!;
    expect(created.models).toEqual({
      currentModelId: modelOption.currentValue,
      availableModels: modelOption.options.map((o: Record<string, any>) => ({
        modelId: o.value,
        name: o.name,
        ...(o.description ? { description: o.description } : {}),
      })),
    });
    expect(
      matrix.probes.map((p) => [p.method, p.class]),
      matrix.stderr,
    ).toEqual([
      ["session/list", "success"],
      ["session/fork", matrix.capabilities.fork ? "success" : "method_not_found"],
      ["session/resume", "success"],
      // "matrix-model" is not one of the session's models: refused by name, never a guessed success
      ["session/set_model", "invalid_params"],
      ["session/close", "success"],
    ]);
    expect(matrix.probes[3]!.answer?.error?.message).toContain('Unknown model "matrix-model"');
    expect(matrix.probes[4]!.answer?.result).toEqual({});
    expect(matrix.closeProbed && matrix.closeSupported).toBe(true);
    expect(matrix.setModel).toBe(true);
    expect(validLines(matrix.log)).toEqual([]);
  });
});
