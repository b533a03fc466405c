/**
 * Ready for the ACP Registry (adr/0025-registry-entry-and-logout.md):
 *
 * - the entry `registry/<id>/agent.json` and `icon.svg` follow the registry's format and its CI
 *   rules, restated here in our words: id pattern and directory, required fields, an npx package
 *   pinned to exactly this package's name and version (never `latest`), a 16×16 square icon that
 *   only uses `currentColor`;
 * - the registry's launch check, run against the PACKED package installed offline from its
 *   tarball, on a machine with no ZCode (HOME an empty directory, no ZCode variables): with empty
 *   stdin the process exits 0 and writes nothing to stdout; the registry validator's own
 *   `initialize` (clientCapabilities.terminal and `_meta["terminal-auth"]`, but no
 *   `auth.terminal`) is answered within its 10 s window, as the first stdout line, with an agent-
 *   or terminal-type auth method; `session/new` then gets a clear typed error, not a hang.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installRootCandidates } from "../../../src/install/discover.js";
import type { InstallPlatform } from "../../../src/install/layout.js";
import { Transcript } from "../../support/acp-transcript.js";
import { packAndInstall, ROOT, type PackedPackage } from "./support/packed-package.js";

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

/** the registry's launch window: 10 s, then 2 s grace before it kills the process */
const LAUNCH_WINDOW_MS = 10_000;
const GRACE_MS = 2_000;

describe("registry entry (registry/<id>/agent.json, icon.svg)", () => {
  it("one entry whose directory is its id: lowercase letters, digits and hyphens, not the taken `zcode-acp`", () => {
    expect(ids).toEqual([ID]);
    expect(entry.id).toBe(ID);
    expect(ID).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(ID).not.toBe("zcode-acp"); // held by another ZCode bridge (adr/0025)
  });

  it("has the required fields and only the format's fields", () => {
    for (const field of ["id", "name", "version", "description"]) expect(entry[field], field).toEqual(expect.stringMatching(/\S/));
    const allowed = ["id", "name", "version", "description", "repository", "authors", "license", "icon", "distribution"];
    expect(Object.keys(entry).filter((k) => !allowed.includes(k))).toEqual([]);
    expect(entry.authors).toEqual(expect.arrayContaining([expect.stringMatching(/\S/)]));
    expect(entry.license).toBe(pkg.license);
    const repository = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
    if (repository === undefined) expect(entry.repository).toBeUndefined();
    else expect(entry.repository).toBe(repository.replace(/^git\+/, "").replace(/\.git$/, ""));
  });

  it("is distributed by npx as exactly this package and version, never `latest`, with no arguments (ACP on stdio is the default command)", () => {
    expect(entry.version).toBe(pkg.version);
    expect(Object.keys(entry.distribution)).toEqual(["npx"]);
    expect(entry.distribution.npx).toEqual({ package: `${pkg.name}@${pkg.version}` });
    expect(JSON.stringify(entry)).not.toMatch(/latest/i);
  });

  it("has a square 16×16 monochrome icon: every fill and stroke is currentColor (or none / inherit)", () => {
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

// the premise of the launch check: no ZCode where zcode-acp looks by default (HOME is empty)
const platform = process.platform as InstallPlatform;
const zcodeHere =
  ["darwin", "linux", "win32"].includes(platform) && installRootCandidates(platform, { HOME: "/nonexistent" }).some(existsSync);

describe.skipIf(zcodeHere)("registry launch check: the packed package on a machine without ZCode", () => {
  let packed: PackedPackage;
  beforeAll(async () => {
    packed = await packAndInstall();
  }, 180_000);
  afterAll(() => packed?.cleanup());

  /** the environment of a machine with nothing but Node: an empty HOME, no ZCode or zcode-acp variables */
  const bareEnv = (home: string): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    TERM: "dumb",
    ...(process.platform === "win32" ? { SystemRoot: process.env.SystemRoot, USERPROFILE: home } : {}),
  });

  const exitOf = (child: ChildProcess, deadlineMs: number): Promise<number | null | "timeout"> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("timeout");
      }, deadlineMs);
      child.once("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });

  it("the tarball is the package agent.json names", () => {
    expect(packed.filename).toBe(`${pkg.name}-${pkg.version}.tgz`);
    expect(entry.distribution.npx.package).toBe(`${pkg.name}@${pkg.version}`);
    expect(packed.files.some((f) => f.startsWith("registry/"))).toBe(false); // the entry is for the registry's repository, not the package
  });

  it("with empty stdin it exits 0 within the window and writes nothing to stdout", async () => {
    const home = mkdtempSync(join(packed.work, "home-"));
    const child = spawn(packed.bin, [], { cwd: home, env: bareEnv(home), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    expect(await exitOf(child, LAUNCH_WINDOW_MS + GRACE_MS), stderr).toBe(0);
    expect(stdout).toBe("");
  });

  it("answers the validator's initialize within 10 s with an agent- or terminal-type method; session/new is a typed error, not a hang", async () => {
    const home = mkdtempSync(join(packed.work, "home-"));
    const ws = mkdtempSync(join(packed.work, "ws-"));
    const child = spawn(packed.bin, [], { cwd: ws, env: bareEnv(home), stdio: ["pipe", "pipe", "pipe"] });
    const exited = exitOf(child, 60_000);
    const transcript = new Transcript();
    const lines: Array<Record<string, any>> = [];
    const waiting: Array<() => void> = [];
    let buffer = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      buffer += d.toString();
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        transcript.record("agent", line);
        lines.push(JSON.parse(line) as Record<string, any>); // stdout carries JSON-RPC only: anything else throws here
        waiting.splice(0).forEach((wake) => wake());
      }
    });
    const send = (message: object): void => {
      const line = JSON.stringify({ jsonrpc: "2.0", ...message });
      transcript.record("client", line);
      child.stdin.write(`${line}\n`);
    };
    /** the answer to request `id`, or undefined after `ms` */
    const answerTo = async (id: number, ms: number): Promise<Record<string, any> | undefined> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = lines.find((l) => l.id === id && !("method" in l));
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    };

    // what verify_agents.py --auth-check sends
    const started = performance.now();
    send({
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: 1,
        clientInfo: { name: "ACP Registry Validator", version: "1.0.0" },
        clientCapabilities: {
          terminal: true,
          fs: { readTextFile: true, writeTextFile: true },
          _meta: { terminal_output: true, "terminal-auth": true },
        },
      },
    });
    const init = await answerTo(1, LAUNCH_WINDOW_MS);
    const initMs = performance.now() - started;
    expect(init, `no initialize answer within ${LAUNCH_WINDOW_MS} ms; stderr:\n${stderr}`).toBeDefined();
    expect(lines[0]).toBe(init); // the validator reads exactly one line: it must be the answer
    const methods = init!.result.authMethods as Array<{ id: string; type?: string; _meta?: Record<string, unknown> }>;
    // the validator's typing: `type`, else `_meta["terminal-auth"]` → terminal, else agent
    const typeOf = (m: (typeof methods)[number]): string => m.type ?? (m._meta && "terminal-auth" in m._meta ? "terminal" : "agent");
    expect(methods.map((m) => [m.id, typeOf(m)])).toEqual([
      ["zcode-app", "agent"],
      ["zcode-onboard", "terminal"],
    ]);
    expect(methods.find((m) => m.type === "terminal")).toBeUndefined(); // no auth.terminal was advertised
    expect(init!.result.agentCapabilities.auth).toEqual({ logout: {} });
    console.log(`registry launch check: initialize answered in ${Math.round(initMs)} ms`);

    send({ id: 2, method: "session/new", params: { cwd: ws, mcpServers: [] } });
    const created = await answerTo(2, 30_000);
    expect(created, `session/new unanswered; stderr:\n${stderr}`).toBeDefined();
    expect(created!.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(
        /^No ZCode install found at .+ Install ZCode there, or point zcode-acp at it with --zcode-install DIR/,
      ),
      data: { code: "UNSUPPORTED_ZCODE" },
    });

    send({ id: 3, method: "logout", params: {} });
    expect((await answerTo(3, 10_000))?.result).toMatchObject({ _meta: { "zcode-acp/logout": { scope: "connection" } } });

    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    expect(transcript.problems).toEqual([]);
    expect(transcript.unanswered("client")).toEqual([]);
  });
});
