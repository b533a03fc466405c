/**
 * The agent CLI version, read without running the CLI (docs/runtime-contract.md §7, adr/0020):
 * `readCliVersionFromText` finds the one version the CLI's own file declares (`version = "x.y.z"`,
 * `version: "x.y.z"`); the assessment takes the version of a pinned CLI from its manifest instead.
 * `readCliVersion` (`<exe> glm/zcode.cjs version`, the contract's §1 query) runs the CLI: it is not
 * used by `check`, `onboard` or the warm-up, which never execute install code whose hash is not pinned.
 */
import { open } from "node:fs/promises";
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

/** a version the file declares: `version = "0.16.9"`, `version: "0.16.9"`, `"version":"0.16.9"`, `VERSION='0.16.9'` */
const DECLARED_VERSION = /(?<![A-Za-z0-9_$])["']?version["']?\s*[:=]\s*["'](\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)["']/gi;

/** The one version the text declares; undefined when it declares none, or several different ones (a bundle of dependencies). */
export function declaredVersion(text: string): string | undefined {
  const found = new Set([...text.matchAll(DECLARED_VERSION)].map((m) => m[1]!));
  return found.size === 1 ? [...found][0] : undefined;
}

/** bound of the CLI file read for its version (the real zcode.cjs is about 15 MB) */
export const MAX_CLI_BYTES = 64 * 1024 * 1024;

/** The CLI version declared in its file, read as text (never run); undefined when not exactly one is declared or the file is too large. */
export async function readCliVersionFromFile(file: string, maxBytes = MAX_CLI_BYTES): Promise<string | undefined> {
  const handle = await open(file, "r");
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return undefined;
    return declaredVersion(await handle.readFile("utf8"));
  } finally {
    await handle.close();
  }
}
