/**
 * The environment of every run of the install's Electron executable as Node (the host and the
 * short check runs): the editor's environment without the variables that would make Node or
 * Electron load code, open a debugger or IPC channel, or change how the install's own code loads
 * and reports (adr/0021). One list for all runs; ELECTRON_RUN_AS_NODE=1 is ours and set last.
 *
 * Kept on purpose: network and locale settings the user's ZCode relies on (HTTP(S)_PROXY,
 * NODE_EXTRA_CA_CERTS, LANG, …), HOME and ZCode's own variables.
 */

/** removed by exact name (compared in upper case: names are case-insensitive on Windows) */
const REMOVED_NAMES: ReadonlySet<string> = new Set([
  "NODE_OPTIONS", // --require / --import / --inspect … of the editor's Node
  "NODE_PATH", // extra module search paths
  "NODE_DEBUG", // core module debug output
  "NODE_DEBUG_NATIVE",
  "NODE_REPL_EXTERNAL_MODULE", // a module run instead of the REPL
  "NODE_V8_COVERAGE", // coverage files written on exit
  "NODE_PROF", // profiler output
  "NODE_REDIRECT_WARNINGS", // warnings written to a file
  "NODE_CHANNEL_FD", // an IPC channel of the editor's process (fork)
  "NODE_CHANNEL_SERIALIZATION_MODE",
  "NODE_UNIQUE_ID", // cluster worker identity
]);

/** removed by prefix: the inspector's variables, and every Electron switch (logging, asar, crash handling, …) */
const REMOVED_PREFIXES: readonly string[] = ["NODE_INSPECT", "ELECTRON_"];

/** Whether the variable `name` is kept out of the install's processes. */
export function isRemovedVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return REMOVED_NAMES.has(upper) || REMOVED_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** `base` without the removed variables (and without unset values), plus ELECTRON_RUN_AS_NODE=1. */
export function electronNodeEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !isRemovedVariable(key)) env[key] = value;
  }
  env.ELECTRON_RUN_AS_NODE = "1";
  return env;
}

/** the names in `base` that electronNodeEnv removes (for the log: names only, never values) */
export function removedVariables(base: NodeJS.ProcessEnv): string[] {
  return Object.keys(base)
    .filter((key) => base[key] !== undefined && isRemovedVariable(key) && key.toUpperCase() !== "ELECTRON_RUN_AS_NODE")
    .sort();
}
