/**
 * `zcode-acp onboard --probe` (docs/runtime-contract.md §8): starts the host of a reviewed, not yet
 * accepted build with the launcher and bootstrap the bridge uses (src/host/), the candidate
 * manifest held in memory (never written), makes no model call, and records what the host answers:
 * the V4 hello (protocol version, capabilities), the clientHello, and `listSessions` without
 * `includeArchived`. The bootstrap checks the host entry's and RPC module's SHA-256 before it
 * imports them, as for any launch; the executable's SHA-256 is recorded beside them.
 */
import { createReadStream } from "node:fs";
import { createHash, randomUUID } from "node:crypto";
import type { Assessment } from "../compat/types.js";
import { HostConnection } from "../host/host-connection.js";
import type { Logger } from "../log/logger.js";
import type { ProbeTarget } from "../onboard/inspect.js";
import type { ProbeResult, ProbeStep } from "../onboard/probe-report.js";
import { shareableCapabilities } from "../onboard/probe-report.js";
import { CONTEXT_COMPOSITION_METHOD, SUBAGENT_STOP_METHOD, V4_INPUT_METHODS } from "../manifest/release-lines.js";
import { describeError, isBridgeError } from "../util/errors.js";
import { PACKAGE_VERSION } from "../version.js";

export interface ProbeOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** the workspace listSessions is asked about (its sessions are counted, never copied) */
  workspacePath: string;
  timeouts?: Partial<Record<string, number>>;
  bootstrapScript?: string;
}

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

function failed(error: unknown): ProbeStep {
  const rpc = isBridgeError(error) ? error.details?.code : undefined;
  return {
    status: "failed",
    detail: (isBridgeError(error) ? error.message : describeError(error)).replace(/\s+/g, " ").slice(0, 500),
    error: {
      code: isBridgeError(error) ? error.code : "INTERNAL",
      ...(typeof rpc === "number" ? { rpcCode: rpc } : {}),
    },
  };
}

const notTried = (detail: string): ProbeStep => ({ status: "not tried", detail });

/**
 * The calls whose presence decides a path or a feature and that refuse a params object naming no
 * session (adr/0033): the legacy prompt call (with it, the legacy session stream), 3.18's context
 * composition and subagent stop. Each allowed one is probed once, bounded (PROBE_TIMEOUT_MS).
 */
const PROBED_CALLS = ["sendPrompt", CONTEXT_COMPOSITION_METHOD, SUBAGENT_STOP_METHOD] as const;

async function probeServed(host: HostConnection, allowed: readonly string[]): Promise<NonNullable<ProbeResult["served"]>> {
  const probed = PROBED_CALLS.filter((method) => allowed.includes(method));
  const notServed: string[] = [];
  const unknown: string[] = [];
  for (const method of probed) {
    const served = await host.probe("agent", method).catch(() => "unknown" as const);
    if (served === "unserved") notServed.push(method);
    else if (served === "unknown") unknown.push(method);
  }
  const detail =
    probed.length === 0
      ? "nothing to probe (the candidate allows none of sendPrompt, getContextComposition, stopSubagent)"
      : `probed ${probed.join(", ")}: ` +
        (notServed.length > 0 ? `not served: ${notServed.join(", ")}` : "all served") +
        (unknown.length > 0 ? `; no answer in time: ${unknown.join(", ")}` : "") +
        (notServed.includes("sendPrompt") ? " — sessions will be read through V4 where allowed (adr/0033)" : "");
  return { status: unknown.length > 0 ? "failed" : "ok", detail, probed, notServed };
}

export async function runProbe(target: ProbeTarget, options: ProbeOptions): Promise<ProbeResult> {
  const { install } = target;
  const { manifest } = install;
  const assessment: Assessment = {
    supported: true,
    message: "the onboard review's candidate (in memory, not accepted)",
    steps: [],
    diagnostics: {},
    paths: install.paths,
    manifest,
    rpc: { path: manifest.artifact.rpcModule.path ?? "", sha256: install.rpcModuleSha256, exports: install.rpcExports, foundBy: "exports" },
  };
  const result: ProbeResult = {
    ran: {
      executable: await sha256OfFile(target.executable),
      hostIndex: { ...manifest.artifact.hostIndex },
      rpcModule: { path: manifest.artifact.rpcModule.path ?? "", sha256: install.rpcModuleSha256 },
    },
    start: notTried("not started"),
    hello: notTried("the host did not start"),
    initialize: notTried("the host did not start"),
    listSessions: notTried("the host did not start"),
  };
  const host = new HostConnection({
    resolveInstall: () => Promise.resolve(assessment),
    logger: options.logger,
    env: options.env,
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    ...(options.bootstrapScript ? { bootstrapScript: options.bootstrapScript } : {}),
  });
  try {
    const started = Date.now();
    try {
      await host.startNow();
      result.startupMs = Date.now() - started;
      result.start = { status: "ok", detail: `the host answered ready after ${result.startupMs} ms` };
    } catch (error) {
      result.start = failed(error);
      return result;
    }
    const v4 = V4_INPUT_METHODS.every((m) => manifest.protocol.allowlist.agent.includes(m));
    if (!v4) {
      result.hello = notTried("the host bundle does not name every V4 input call; the candidate sends prompts through sendPrompt");
      result.initialize = notTried("no V4 hello");
    } else {
      try {
        const hello = await host.call<Record<string, unknown>>("agent", "helloConversationV4", {}, { timeout: "v4Handshake" });
        const ok = typeof hello === "object" && hello !== null && hello.kind === "hello";
        result.hello = {
          status: ok ? "ok" : "failed",
          detail: ok ? `protocol version ${JSON.stringify(hello.protocolVersion)}` : 'the answer is not a hello (kind is not "hello")',
          ...(ok ? { protocolVersion: hello.protocolVersion } : {}),
          ...(ok && typeof hello.clientMode === "string" ? { clientMode: hello.clientMode } : {}),
          ...(ok && typeof hello.deliveryProfile === "string" ? { deliveryProfile: hello.deliveryProfile } : {}),
          ...(ok ? { capabilities: shareableCapabilities(hello.capabilities) } : {}),
        };
        if (ok) {
          try {
            await host.call(
              "agent",
              "initializeConversationV4",
              {
                kind: "clientHello",
                protocolVersion: hello.protocolVersion,
                clientId: `zcode-acp-probe-${randomUUID()}`,
                appVersion: PACKAGE_VERSION,
              },
              { timeout: "v4Handshake" },
            );
            result.initialize = { status: "ok", detail: "accepted" };
          } catch (error) {
            result.initialize = failed(error);
          }
        } else result.initialize = notTried("no hello");
      } catch (error) {
        result.hello = failed(error);
        result.initialize = notTried("no hello");
      }
    }
    result.served = await probeServed(host, manifest.protocol.allowlist.agent);
    try {
      const sessions = await host.call<unknown>(
        "agent",
        "listSessions",
        { workspacePath: options.workspacePath },
        { timeout: "listSessions" },
      );
      result.listSessions = Array.isArray(sessions)
        ? { status: "ok", detail: `a list of ${sessions.length} sessions (not copied)`, sessions: sessions.length }
        : { status: "failed", detail: "the answer is not a list" };
    } catch (error) {
      result.listSessions = failed(error);
    }
    return result;
  } finally {
    await host.close().catch((error: unknown) => options.logger.warn("probe host close failed", { error: describeError(error) }));
  }
}
