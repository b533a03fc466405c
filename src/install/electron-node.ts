/**
 * Short, bounded child runs of the install's Electron executable as Node
 * (`ELECTRON_RUN_AS_NODE=1`): the CLI version query and the export check. Time and output are
 * bounded; the child never inherits our stdin; NODE_OPTIONS and the other Node and Electron
 * preload/debug variables are removed (./child-environment.ts, the same list as the host's) so
 * that no preloaded code of ours (or the user's) can change what the install's own code reports.
 */
import { describeError } from "../util/errors.js";
import { electronNodeEnv } from "./child-environment.js";

/** bound of one child run (the CLI version query, the export check): 15 s, room for a cold start of Electron */
export const CHILD_RUN_TIMEOUT_MS = 15_000;

export interface ElectronNodeRun {
  /** undefined when the process could not be started or was killed */
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  /** why the run failed to complete, for people ("timed out after 15000 ms", "spawn EACCES") */
  failure?: string;
}

export interface ElectronNodeOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

export { electronNodeEnv } from "./child-environment.js";

export async function runElectronNode(executable: string, args: readonly string[], options: ElectronNodeOptions): Promise<ElectronNodeRun> {
  try {
    // loaded on first use: a check answered from the fingerprint cache starts no child process
    const { execa } = await import("execa");
    const result = await execa(executable, args, {
      env: electronNodeEnv(options.env),
      extendEnv: false,
      cwd: options.cwd,
      stdin: "ignore",
      timeout: options.timeoutMs,
      forceKillAfterDelay: 1000,
      maxBuffer: options.maxOutputBytes,
      reject: false,
      windowsHide: true,
      stripFinalNewline: false,
    });
    const stdout = typeof result.stdout === "string" ? result.stdout : "";
    const stderr = typeof result.stderr === "string" ? result.stderr : "";
    let failure: string | undefined;
    if (result.timedOut) failure = `timed out after ${options.timeoutMs} ms`;
    else if (result.isMaxBuffer) failure = `printed more than ${options.maxOutputBytes} bytes`;
    else if (result.exitCode === undefined)
      failure = result.signal ? `killed by ${result.signal}` : (result.shortMessage ?? "could not be started");
    return failure === undefined ? { exitCode: result.exitCode, stdout, stderr } : { exitCode: result.exitCode, stdout, stderr, failure };
  } catch (error) {
    return { exitCode: undefined, stdout: "", stderr: "", failure: describeError(error) };
  }
}

/** The first `limit` characters of some child output, on one line, for evidence. */
export function excerpt(text: string, limit = 300): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > limit ? `${line.slice(0, limit)}…` : line;
}
