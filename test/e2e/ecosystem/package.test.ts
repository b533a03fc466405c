/**
 * The way the README installs zcode-acp from a clone (it is not on the npm registry):
 *  - `npm pack`, then an install of the tarball into a temporary prefix, offline (from the
 *    project's lockfile: ./support/packed-package.ts): the tarball holds the built bin, the
 *    bootstrap, the manifests and the LICENSE; the installed `zcode-acp` prints its help, checks a
 *    simulated install, answers `initialize` and runs a session against it;
 *  - `npm link` into a temporary prefix: the linked `zcode-acp` answers `initialize`.
 * Every ACP line is validated (test/support/acp-transcript.ts).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { Transcript } from "../../support/acp-transcript.js";
import { pinnedManifests } from "../../support/verified-releases.js";
import { NPM, ROOT, binOf, npmEnv, packAndInstall, type PackedPackage } from "./support/packed-package.js";

let sim: SimInstall;
let packed: PackedPackage;
let work: string;
let files: string[] = [];

beforeAll(async () => {
  sim = await createSimulatedInstall();
  packed = await packAndInstall();
  ({ work, files } = packed);
}, 180_000);

afterAll(async () => {
  await sim?.cleanup();
  packed?.cleanup();
});

/** start `command` as an ACP agent against the simulated install; the SDK client on top */
function startAgent(command: string, cwd: string) {
  const child = spawn(command, [], { cwd, env: { ...process.env, ...sim.env }, stdio: ["pipe", "pipe", "pipe"] });
  const transcript = new Transcript();
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (t: string) => (stderr += t));
  const tap = (from: "agent" | "client") => {
    let buffer = "";
    return (chunk: Buffer | string) => {
      buffer += chunk.toString();
      for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
        transcript.record(from, buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
      }
    };
  };
  child.stdout.on("data", tap("agent"));
  const toAgent = new PassThrough();
  toAgent.on("data", tap("client"));
  toAgent.pipe(child.stdin);
  const connection = acp
    .client({ name: "package-test" })
    .onRequest(acp.methods.client.session.requestPermission, () => ({ outcome: { outcome: "cancelled" } }))
    .connect(acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    agent: connection.agent,
    transcript,
    stderr: () => stderr,
    async stop(): Promise<number | null> {
      toAgent.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      connection.close();
      return code;
    },
  };
}

describe("npm package", () => {
  it("contains the built bin, the plain-JS bootstrap and the manifests, and no sources or tests", () => {
    expect(files).toContain("dist/cli/main.js");
    expect(files).toContain("dist/runtime/bootstrap.js");
    expect(files).toContain("LICENSE");
    for (const { file } of pinnedManifests()) expect(files).toContain(`manifests/${file}`);
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.startsWith("fixtures/"))).toEqual([]);
  });

  it("the installed bin prints its help", async () => {
    const result = await execa(packed.bin, ["--help"], { cwd: work });
    expect(result.stdout).toContain("zcode-acp check [options]");
  });

  it("the installed bin checks a simulated install (supported, exit 0) and refuses a missing one (exit 1)", async () => {
    const bin = packed.bin;
    const ok = await execa(bin, ["check", "--json", "--zcode-install", sim.root, "--manifest", sim.manifestPath], {
      cwd: work,
      env: { HOME: sim.env.HOME },
      reject: false,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ supported: true, appVersion: "3.11.2" });
    const missing = await execa(bin, ["check", "--zcode-install", join(work, "nowhere")], {
      cwd: work,
      env: { HOME: sim.env.HOME },
      reject: false,
    });
    expect(missing.exitCode).toBe(1);
    expect(missing.stdout + missing.stderr).toMatch(/ZCode/);
  });

  it("the installed bin is an ACP agent: initialize, session/new, a prompt, exit 0 when stdin closes", async () => {
    const ws = mkdtempSync(join(work, "ws-"));
    const run = startAgent(packed.bin, ws);
    const init = await run.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init).toMatchObject({ protocolVersion: 1, agentInfo: { name: "zcode-acp" } });
    const { sessionId } = await run.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const answer = await run.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hello from the package" }],
    });
    expect(answer.stopReason).toBe("end_turn");
    const text = run.transcript.lines
      .filter((l) => l.from === "agent" && l.message?.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((l) => l.message.params.update.content.text)
      .join("");
    expect(text).toContain("hello from the package");
    expect(await run.stop(), run.stderr()).toBe(0);
    expect(run.transcript.problems).toEqual([]);
    expect(run.transcript.unanswered("client")).toEqual([]);
  });
});

describe("npm link (from the clone)", () => {
  it("the linked bin answers initialize", async () => {
    const linkPrefix = join(work, "linked");
    mkdirSync(linkPrefix);
    await execa(NPM, ["link", "--ignore-scripts", "--no-audit"], { cwd: ROOT, env: npmEnv(linkPrefix), timeout: 60_000 });
    const run = startAgent(binOf(linkPrefix), work);
    const init = await run.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    expect(init).toMatchObject({ protocolVersion: 1, agentInfo: { name: "zcode-acp" } });
    expect(await run.stop(), run.stderr()).toBe(0);
    expect(run.transcript.problems).toEqual([]);
  });
});
