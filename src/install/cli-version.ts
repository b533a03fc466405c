/**
 * The agent CLI version: `<exe> <resources>/glm/zcode.cjs version` with ELECTRON_RUN_AS_NODE=1
 * (docs/runtime-contract.md §1); the first semver in its standard output.
 */
import { installProblem } from "./install-problem.js";
import { CHILD_RUN_TIMEOUT_MS, excerpt, runElectronNode } from "./electron-node.js";

const SEMVER = /(?<![0-9.])(\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)(?!\.?[0-9])/;

export function firstSemver(text: string): string | undefined {
  return SEMVER.exec(text)?.[1];
}

export interface CliVersionOptions {
  executable: string;
  cli: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  maxOutputBytes?: number;
}

export async function readCliVersion(options: CliVersionOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? CHILD_RUN_TIMEOUT_MS;
  const run = await runElectronNode(options.executable, [options.cli, "version"], {
    env: options.env,
    cwd: options.cwd,
    timeoutMs,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
  });
  const command = "zcode.cjs version";
  if (run.failure !== undefined || run.exitCode !== 0) {
    const why = run.failure ?? `exited with code ${String(run.exitCode)}`;
    const detail = excerpt(run.stderr || run.stdout);
    throw installProblem(`Cannot read the agent CLI version: \`${command}\` ${why}${detail ? ` (${detail})` : ""}. Reinstall ZCode.`, {
      cliVersion: { expected: "a version printed by zcode.cjs version", actual: detail ? `${why}: ${detail}` : why },
    });
  }
  const version = firstSemver(run.stdout);
  if (version === undefined) {
    throw installProblem(`\`${command}\` printed no version (${excerpt(run.stdout) || "nothing"}). Reinstall ZCode.`, {
      cliVersion: { expected: "a semver in the output", actual: excerpt(run.stdout) || "(empty)" },
    });
  }
  return version;
}
