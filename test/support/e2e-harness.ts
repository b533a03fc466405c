/**
 * Shared setup of the end-to-end tests: one simulated install per test file, a fresh workspace
 * directory per test, every started client closed (and checked for a clean exit) afterwards.
 */
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, onTestFailed } from "vitest";
import { createSimulatedInstall, type CallLogEntry, type SimInstall, type SimRelease } from "../../fixtures/sim-install.js";
import { AcpTestClient, type AcpTestClientOptions } from "./acp-test-client.js";

export interface E2E {
  sim(): SimInstall;
  /** start the built CLI against the simulated install; closed after the test */
  start(options?: Omit<AcpTestClientOptions, "env"> & { env?: Record<string, string> }): Promise<AcpTestClient>;
  /** a fresh absolute workspace path */
  workspace(): Promise<string>;
  /** native calls of `method` logged by the simulated host since the file started */
  calls(method: string): Promise<CallLogEntry[]>;
  /** V4 commands of `type` (the envelopes of `sendConversationCommandV4` calls) since the file started; `params` is the envelope */
  commands(type: string): Promise<CallLogEntry[]>;
  /** the stops of one session's turns: stopGeneration calls, or V4 `stop` commands where the install has V4 input */
  stops(sessionId: string): Promise<CallLogEntry[]>;
}

/** `release`: a simulated release of its own for this file (default: the project's, ZCODE_ACP_SIM_RELEASE) */
export function e2e(options: { release?: SimRelease } = {}): E2E {
  let install: SimInstall | undefined;
  const clients: AcpTestClient[] = [];
  beforeAll(async () => {
    install = await createSimulatedInstall(options.release ? { release: options.release } : {});
  });
  afterEach(async () => {
    const open = clients.splice(0);
    await Promise.all(
      open.map((c) =>
        c.child.exitCode === null && c.child.signalCode === null ? c.close().catch(() => c.kill("SIGKILL")) : Promise.resolve(),
      ),
    );
  });
  afterAll(async () => {
    try {
      // an install whose manifest allows V4 input never gets a legacy sendPrompt (adr/0022)
      if (install?.manifest.protocol.allowlist.agent.includes("sendConversationCommandV4")) {
        const log = await install.readCallLog();
        expect(log.filter((e) => e.kind === "call" && e.method === "sendPrompt").length, "sendPrompt calls on a V4 install").toBe(0);
      }
    } finally {
      await install?.cleanup();
    }
  });
  return {
    sim: () => install!,
    async start(options = {}) {
      const client = await AcpTestClient.start({ ...options, env: { ...install!.env, ...options.env } });
      clients.push(client);
      onTestFailed(() => {
        console.error(
          `--- CLI pid ${client.child.pid} exit ${client.child.exitCode ?? client.child.signalCode ?? "running"}, stderr tail:\n${client.stderr.slice(-4000)}`,
        );
      });
      return client;
    },
    // inside the install's own temp dir, so its cleanup removes the workspaces too
    workspace: () => mkdtemp(join(dirname(install!.root), "ws-")),
    async calls(method) {
      const log = await install!.readCallLog();
      return log.filter((e) => e.kind === "call" && e.method === method);
    },
    async commands(type) {
      return v4Commands(await install!.readCallLog(), type);
    },
    async stops(sessionId) {
      const log = await install!.readCallLog();
      const legacy = log.filter((e) => e.kind === "call" && e.method === "stopGeneration");
      return forSession([...legacy, ...v4Commands(log, "stop")], sessionId);
    },
  };
}

/** The V4 command envelopes of `type` in a call log, each as an entry whose `params` is the envelope. */
export function v4Commands(log: CallLogEntry[], type: string): CallLogEntry[] {
  return log
    .filter((e) => e.kind === "call" && e.method === "sendConversationCommandV4")
    .map((e) => ({ ...e, params: (e.params as { envelope?: unknown } | undefined)?.envelope }))
    .filter((e) => (e.params as { type?: unknown } | undefined)?.type === type);
}

/** Calls of `method` for one session (params.sessionId or params.taskId). */
export function forSession(entries: CallLogEntry[], sessionId: string): CallLogEntry[] {
  return entries.filter((e) => {
    const p = e.params as Record<string, unknown> | undefined;
    return p?.sessionId === sessionId || p?.taskId === sessionId;
  });
}
