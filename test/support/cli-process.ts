/**
 * The one way the tests start the BUILT CLI (`node dist/cli/main.js`; run `npm run build`
 * first) as a long-running process over real pipes: the environment on top of process.env, its
 * stderr kept, its exit as a promise, and a close that ends stdin and waits (SIGKILL after a
 * deadline). The ACP clients (./acp-test-client.ts, ./bridge-process.ts, ./raw-acp-client.ts,
 * ./raw-cli.ts, the conformance suite's raw agent) are built on it and differ only in how they
 * speak to it. `runCli` runs a command once (`check`, `onboard`, a refused start) and returns its
 * exit and whole output.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CLI_PATH = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliProcessOptions {
  /** environment on top of process.env (e.g. a simulated install's `env`) */
  env?: Record<string, string | undefined>;
  /** command-line arguments after the CLI's path */
  args?: string[];
  cwd?: string;
}

/** what close() does when the CLI has not exited by the deadline, after SIGKILLing it */
export type OnCloseTimeout = "fail" | "resolve";

export class CliProcess {
  readonly exited: Promise<ExitInfo>;
  private stderrText = "";

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => (this.stderrText += text));
    child.stdin.on("error", () => undefined); // EPIPE after the CLI exited is reported by `exited`
  }

  static start(options: CliProcessOptions = {}): CliProcess {
    assertBuilt();
    const child = spawn(process.execPath, [CLI_PATH, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new CliProcess(child);
  }

  /** everything the CLI wrote on stderr so far */
  get stderr(): string {
    return this.stderrText;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** one write to stdin; resolves once the bytes were handed to the pipe */
  write(bytes: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.child.stdin.write(bytes, (error) => (error ? reject(error) : resolve())));
  }

  /**
   * End stdin (the client goes away) and wait for the exit. After `timeoutMs` the CLI is
   * SIGKILLed; then the wait fails with the tail of its stderr, or with `onTimeout: "resolve"`
   * resolves with the kill's exit.
   */
  close(timeoutMs = 10_000, onTimeout: OnCloseTimeout = "fail"): Promise<ExitInfo> {
    this.child.stdin.end();
    return this.waitExit(timeoutMs, onTimeout);
  }

  /** Send a signal and wait for the exit (SIGKILL and fail after `timeoutMs`). */
  kill(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<ExitInfo> {
    this.child.kill(signal);
    return this.waitExit(timeoutMs, "fail");
  }

  private async waitExit(timeoutMs: number, onTimeout: OnCloseTimeout): Promise<ExitInfo> {
    if (!this.running) return this.exited;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
    const result = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (result !== "timeout") return result;
    this.child.kill("SIGKILL");
    if (onTimeout === "resolve") return this.exited;
    throw new Error(`the CLI did not exit within ${timeoutMs} ms; stderr tail:\n${this.stderrText.slice(-2000)}`);
  }
}

export interface RunCliOptions {
  /** environment on top of process.env; a variable set to undefined is removed */
  env?: Record<string, string | undefined>;
  /** written to stdin before it is closed (without it, stdin is closed at once) */
  input?: string;
  /** SIGKILL the CLI and fail after this long (default 20 000 ms) */
  timeoutMs?: number;
  cwd?: string;
  /** a command the CLI runs under, e.g. `["setpriv", …]`: runs `[...wrapper, node, CLI_PATH, ...args]` */
  wrapper?: string[];
}

export interface CliRun extends ExitInfo {
  /** everything the CLI wrote, decoded as UTF-8 */
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI once and resolves when it has exited and closed its output, whatever the
 * exit code; rejects only if it cannot be started or outlives `timeoutMs`.
 */
export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliRun> {
  assertBuilt();
  const { timeoutMs = 20_000 } = options;
  const [command, ...rest] = [...(options.wrapper ?? []), process.execPath, CLI_PATH, ...args] as [string, ...string[]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, rest, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`zcode-acp ${args.join(" ")} did not exit within ${timeoutMs} ms; stderr tail:\n${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on("error", () => undefined); // EPIPE when the CLI exits before reading its input
    child.stdin.end(options.input);
  });
}

function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run "npm run build" first`);
}

/** Splits a byte stream into lines and hands each complete line (without the newline) to `onLine`. */
export function lineSplitter(onLine: (line: string) => void): (chunk: Uint8Array | string) => void {
  const decoder = new TextDecoder();
  let buffer = "";
  return (chunk) => {
    buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      onLine(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
    }
  };
}
