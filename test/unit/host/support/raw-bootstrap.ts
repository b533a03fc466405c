/**
 * Runs the real bootstrap under a simulated install's Electron stand-in and talks raw NDJSON to
 * it on fd 3 (no ChannelConnection in between), so tests can send what a correct bridge never would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Duplex } from "node:stream";
import { buildBootstrapConfig, type BootstrapConfig } from "../../../../src/host/bootstrap-config.js";
import { DEFAULT_BOOTSTRAP_SCRIPT } from "../../../../src/host/launcher.js";
import type { TestInstall } from "./sim.js";
import { supportedAssessment } from "./sim.js";

export interface RawBootstrap {
  child: ChildProcess;
  frames: Array<Record<string, unknown>>;
  stdout: () => string;
  stderr: () => string;
  send(value: unknown): void;
  pipe: Duplex;
  waitFor(predicate: (frame: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startRawBootstrap(
  install: TestInstall,
  options: {
    env?: Record<string, string>;
    config?: (config: BootstrapConfig) => BootstrapConfig | Record<string, unknown>;
    rawConfigArg?: string;
  } = {},
): RawBootstrap {
  const assessment = supportedAssessment(install);
  if (!assessment.paths || !assessment.manifest || !assessment.rpc) throw new Error("unreachable");
  const base = buildBootstrapConfig(
    { paths: assessment.paths, manifest: assessment.manifest, rpcExports: assessment.rpc.exports, rpcModuleSha256: assessment.rpc.sha256 },
    { frameLimitBytes: 16 * 1024 * 1024, disposeTimeoutMs: 3500, builtinProviderConfig: assessment.paths.builtinProviderConfig },
  );
  const config = options.config ? options.config(base) : base;
  const child = spawn(install.executable, [DEFAULT_BOOTSTRAP_SCRIPT, options.rawConfigArg ?? JSON.stringify(config)], {
    env: { ...process.env, ...install.env, ...options.env, ELECTRON_RUN_AS_NODE: "1" },
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  const pipe = child.stdio[3] as Duplex;
  const frames: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let partial = "";
  pipe.on("data", (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    let nl: number;
    while ((nl = partial.indexOf("\n")) !== -1) {
      frames.push(JSON.parse(partial.slice(0, nl)) as Record<string, unknown>);
      partial = partial.slice(nl + 1);
    }
    for (const waiter of [...waiters]) waiter();
  });
  pipe.on("error", () => undefined);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    frames,
    stdout: () => out,
    stderr: () => err,
    pipe,
    send: (value) => pipe.write(typeof value === "string" ? value : `${JSON.stringify(value)}\n`),
    waitFor: (predicate, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = frames.find(predicate);
          if (!found) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames).slice(0, 500)}; stderr ${err.slice(0, 500)}`),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      }),
    exited,
  };
}
