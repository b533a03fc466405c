/**
 * The built CLI's start and stop: an unusable --log-file is refused at start with exit 2 and
 * the reason on stderr (a file that fails later is reported once, then stderr takes over);
 * SIGHUP ends the bridge as gracefully as SIGTERM: the pending permission is denied to the
 * host, generation is stopped, the host is disposed and no host process is left.
 */
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { stopsFor } from "../../support/bridge-process.js";
import { runCli } from "../../support/cli-process.js";
import { processesMentioning } from "../../support/processes.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";
import { answersFor } from "../answers.js";

let sim: SimInstall;
beforeAll(async () => {
  sim = await createSimulatedInstall();
});
afterAll(async () => {
  await sim?.cleanup();
});

describe("--log-file that cannot be used", () => {
  it("refuses a directory or a missing directory at start with exit 2 and the reason, in ACP mode, check and onboard", async () => {
    const dir = await mkdtemp(join(dirname(sim.root), "logs-"));
    const missing = join(dir, "no-such-dir", "bridge.log");
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [["--log-file", dir], {}, /is a directory/],
      [["--log-file", missing], {}, /its directory does not exist/],
      [[], { ZCODE_ACP_LOG_FILE: dir }, /is a directory/],
      [["check", "--log-file", dir], {}, /is a directory/],
      [["onboard", "--log-file", dir], {}, /is a directory/],
    ];
    for (const [args, env, why] of cases) {
      const result = await runCli(args, { env: { ...sim.env, ...env }, timeoutMs: 20_000 });
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toMatch(why);
      expect(result.stderr).toContain(args.includes("--log-file") ? args.at(-1)! : dir);
      // one clear line, not a stream of log records
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(existsSync(missing)).toBe(false);
  });

  it.runIf(existsSync("/dev/full"))("reports a log file that fails to take writes (/dev/full) once, then logs to stderr", async () => {
    const client = RawAcpClient.start({ env: sim.env, args: ["--log-file", "/dev/full"] });
    const sessionId = await client.openSession(await mkdtemp(join(dirname(sim.root), "ws-")));
    const done = await client.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
    expect(done.result).toMatchObject({ stopReason: "end_turn" });
    expect(await client.close()).toEqual({ code: 0, signal: null });
    const lines = client.stderr.trim().split("\n");
    const warnings = lines.filter((l) => l.includes("cannot write the log file /dev/full"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ENOSPC/);
    // the records themselves continue on stderr as JSON lines
    expect(lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l).msg)).toContain("zcode-acp starting");
  });
});

describe("stop signals", () => {
  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    it(`${signal} with a permission pending: deny and the stop reach the host, the host is disposed, exit 0`, async () => {
      const client = RawAcpClient.start({ env: sim.env });
      const sessionId = await client.openSession(await mkdtemp(join(dirname(sim.root), "ws-")));
      const prompt = client.requestLine("session/prompt", { sessionId, prompt: [{ type: "text", text: "sim:permission" }] });
      await client.write([prompt.line]);
      await client.waitForAgent((m) => m.method === "session/request_permission", "the permission request");
      const disposalsBefore = (await sim.readCallLog()).filter((e) => e.kind === "parent-message" && e.type === "dispose").length;
      expect(await client.kill(signal)).toEqual({ code: 0, signal: null });
      expect(processesMentioning(sim.root)).toEqual([]);
      const log = await sim.readCallLog();
      const answers = answersFor(log, "respondPermission", sessionId);
      expect(answers).toHaveLength(1);
      expect(answers[0]!.optionId).toMatch(/deny/);
      expect(stopsFor(log, sessionId)).toHaveLength(1);
      expect(log.filter((e) => e.kind === "parent-message" && e.type === "dispose").length).toBe(disposalsBefore + 1);
      expect(client.stderr).toContain(`"reason":"${signal}"`);
    });
  }
});
