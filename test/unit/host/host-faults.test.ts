/**
 * Faults with real child processes: host crash mid-call and relaunch, a misbehaving runtime
 * (malformed frame, unknown response id, unknown frame), SIGTERM/SIGKILL escalation, the bridge
 * killed with SIGKILL, browser payloads kept out of every log, host output kept off stdout.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EventCollector, openConnection, rejectionOf, type TestConnection } from "./support/connect.js";
import { processAlive, processesMentioning } from "../../support/processes.js";
import { createTestInstall, readCallLog, type TestInstall } from "./support/sim.js";
import { until } from "../../support/until.js";

let install: TestInstall;
let opened: TestConnection[] = [];

beforeEach(async () => {
  install = await createTestInstall();
  opened = [];
});

afterEach(async () => {
  await Promise.all(opened.map((c) => c.host.close()));
  await install.cleanup();
});

function connect(options?: Parameters<typeof openConnection>[1]): TestConnection {
  const c = openConnection(install, options);
  opened.push(c);
  return c;
}

const W = { workspacePath: "/w" };
const ROGUE = join(import.meta.dirname, "support", "rogue-bootstrap.mjs");
const BRIDGE_CHILD = join(import.meta.dirname, "support", "bridge-child.ts");
const text = (t: string) => [{ type: "text", text: t }];

describe("host faults", () => {
  it.each(["exit", "throw"])(
    "a host crash (how=%s) rejects the pending call, ends the subscription, and the next call relaunches",
    async (how) => {
      // the task channel is held back so that a task call is pending when the host dies
      const c = connect({ profile: { taskChannelDelayMs: 5000 } });
      const created = await c.host.call<{ session: { sessionId: string } }>("agent", "createSession", W);
      const sessionId = created.session.sessionId;
      const sink = new EventCollector();
      await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous" }, sink);
      const firstPid = c.host.pid as number;
      const pending = c.host.call("task", "stopGeneration", { ...W, taskId: sessionId });
      await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: text(`sim:crash how=${how}`) });
      const error = await rejectionOf(pending);
      expect(error.code).toBe("HOST_EXITED");
      await sink.until((s) => s.ended !== undefined);
      expect(sink.ended?.code).toBe("HOST_EXITED");
      expect(sink.endCount).toBe(1);
      await until(() => c.exits.length === 1, { timeoutMs: 5000, intervalMs: 50, what: "onExit" });
      expect(c.exits[0]).toMatchObject({ incarnation: 1, error: { code: "HOST_EXITED" } });
      if (how === "throw") expect(c.exits[0]?.error.message).toContain("simulated host crash");
      else expect(c.exits[0]?.error.details).toMatchObject({ reason: "worker-exit", exitCode: 1 });
      await until(() => !processAlive(firstPid), { timeoutMs: 5000, intervalMs: 50, what: "the crashed process to end" });
      // relaunch: a fresh host, incarnation + 1, sessions kept on disk (resumed: reads need a resident session)
      const read = await c.host.call<{ session: { sessionId: string } }>("agent", "resumeSession", { ...W, sessionId });
      expect(read.session.sessionId).toBe(sessionId);
      expect(c.host.incarnation).toBe(2);
      expect(c.host.pid).not.toBe(firstPid);
    },
  );

  it.each([
    ["malformed", "CHANNEL_PROTOCOL"],
    ["unknown-id", "CHANNEL_PROTOCOL"],
    ["unknown-frame", "CHANNEL_PROTOCOL"],
  ])("a runtime that answers %s fails closed and is stopped; the next call relaunches", async (mode, code) => {
    const c = connect({ bootstrapScript: ROGUE, env: { ROGUE_MODE: mode } });
    const error = await rejectionOf(c.host.call("agent", "initialize", W));
    expect(error.code).toBe(code);
    await until(() => c.exits.length === 1, { timeoutMs: 5000, intervalMs: 50, what: "onExit" });
    expect(c.exits[0]?.error.code).toBe(code);
    const pidsBefore = processesMentioning(install.root);
    await until(() => processesMentioning(install.root).length === 0, {
      timeoutMs: 8000,
      intervalMs: 50,
      what: `the rogue runtime to end (${pidsBefore.join(",")})`,
    });
    const again = await rejectionOf(c.host.call("agent", "initialize", W));
    expect(again.code).toBe(code);
    expect(c.host.incarnation).toBe(2);
  });

  it("escalates to SIGKILL when the runtime ignores its pipe closing and SIGTERM", async () => {
    const c = connect({
      bootstrapScript: ROGUE,
      env: { ROGUE_MODE: "stubborn" },
      timeouts: { stopGrace: 300, killGrace: 300, initialize: 300 },
    });
    // the stubborn runtime never answers: the call times out, the host stays
    const error = await rejectionOf(c.host.call("agent", "initialize", W, { timeout: "initialize" }));
    expect(error.code).toBe("HOST_TIMEOUT");
    const pid = c.host.pid as number;
    const started = Date.now();
    await c.host.close();
    expect(processAlive(pid)).toBe(false);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(c.readLog()).toContain("sending SIGKILL");
  }, 60_000);

  it("leaves no host process 5 s after the bridge is killed with SIGKILL", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", BRIDGE_CHILD], {
      env: {
        ...process.env,
        ...install.env,
        BRIDGE_CHILD_INSTALL: JSON.stringify(install),
        BRIDGE_CHILD_LOG: join(install.root, "child.log"),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", () => undefined);
    const exited = new Promise((resolve) => child.on("exit", resolve));
    await until(() => out.includes("\n"), { timeoutMs: 30_000, intervalMs: 50, what: "the child bridge to start its host" });
    const { pid } = JSON.parse(out.split("\n")[0] ?? "{}") as { pid: number };
    expect(processAlive(pid)).toBe(true);
    expect(processesMentioning(install.root)).toContain(pid);
    child.kill("SIGKILL");
    await exited;
    await until(() => processesMentioning(install.root).length === 0, {
      timeoutMs: 5000,
      intervalMs: 50,
      what: "every host process to end",
    });
    expect(processAlive(pid)).toBe(false);
    // it shut down through dispose, not by being killed
    expect(readCallLog(install.callLogPath).some((e) => e.kind === "parent-message" && e.type === "dispose")).toBe(true);
  }, 60_000);

  it("keeps the host's stdout noise off the bridge's stdout", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", BRIDGE_CHILD], {
      env: {
        ...process.env,
        ...install.env,
        ZCODE_SIM_PROFILE: JSON.stringify({ noise: true }),
        BRIDGE_CHILD_INSTALL: JSON.stringify(install),
        BRIDGE_CHILD_LOG: join(install.root, "child.log"),
        BRIDGE_CHILD_EXIT: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.on("exit", resolve));
    expect(code, err).toBe(0);
    const lines = out.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ incarnation: 1 });
    expect(JSON.parse(lines[1] ?? "")).toEqual({ closed: true });
    // the host did print: it went to the diagnostic log instead
    const log = readFileSync(join(install.root, "child.log"), "utf8");
    expect(log).toContain("[zcode-host");
    expect(out).not.toContain("zcode-host");
  }, 60_000);

  it("answers browser requests without their payload appearing in any log", async () => {
    const marker = `zcode-acp-marker-${randomUUID()}.invalid`;
    const c = connect();
    const created = await c.host.call<{ session: { sessionId: string } }>("agent", "createSession", W);
    const sessionId = created.session.sessionId;
    const sink = new EventCollector();
    await c.host.subscribe({ ...W, sessionId, deliveryKind: "desktop-continuous" }, sink);
    await c.host.call("agent", "sendPrompt", { ...W, sessionId, content: text(`sim:browser url=https://${marker}/`) });
    await sink.until((s) => s.sessionEventTypes().includes("turn.completed"));
    const answers = readCallLog(install.callLogPath).filter((e) => e.kind === "reverse-answer");
    expect(answers.map((a) => [a.requestKind, a.ok, a.matched])).toEqual([
      ["browser", false, true], // before the prompt (command getState)
      ["browser", false, true], // mid-turn (command navigate to the marker)
      ["media", false, true],
      ["feedback", false, true],
    ]);
    expect(answers.slice(0, 2).every((a) => a.errorCode === "backend_unavailable" && a.sideEffect === "none")).toBe(true);
    const log = c.readLog();
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [marker, "getState", "navigate", "iab-local"]) expect(log).not.toContain(secret);
  });
});
