/**
 * The RPC roles by shape (docs/runtime-contract.md §2.1 step 2): a short child run of the install's
 * Electron executable as Node imports the (already hash-verified) RPC module by file URL and
 * reports which exports have the shape of each role — protocol: a function named
 * `MessagePortProtocol` with prototype `send` and `disconnect`; client: a function named
 * `ChannelClient` with `getChannel` and `dispose`; service: an object with `toService` and
 * `fromService`. Plain Node cannot import from inside an asar archive; Electron as Node can.
 */
import { pathToFileURL } from "node:url";
import { CHILD_RUN_TIMEOUT_MS, excerpt, runElectronNode } from "./electron-node.js";

export const RPC_ROLES = ["protocol", "client", "service"] as const;
export type RpcRole = (typeof RPC_ROLES)[number];

/** The class names a module must mention to be a candidate (a cheap pre-filter before any import). */
export const RPC_CLASS_NAMES = ["MessagePortProtocol", "ChannelClient"] as const;

export type RoleReport = { imported: true; roles: Record<RpcRole, string[]> } | { imported: false; error: string };

const MARKER = "__ZCODE_ACP_RPC_ROLES__";

/** Runs inside the Electron executable: argv[1] = module URL. */
const PROBE = `
const marker = ${JSON.stringify(MARKER)};
const report = (value) => process.stdout.write("\\n" + marker + JSON.stringify(value) + "\\n", () => process.exit(0));
const fn = (v, k) => v != null && typeof v[k] === "function";
const isClass = (v, name, methods) => typeof v === "function" && v.name === name && v.prototype != null && methods.every((m) => fn(v.prototype, m));
for (const method of ["log", "info", "warn", "error", "debug"]) console[method] = () => undefined;
import(process.argv[1]).then((mod) => {
  const roles = { protocol: [], client: [], service: [] };
  for (const name of Object.keys(mod)) {
    const value = mod[name];
    if (isClass(value, "MessagePortProtocol", ["send", "disconnect"])) roles.protocol.push(name);
    if (isClass(value, "ChannelClient", ["getChannel", "dispose"])) roles.client.push(name);
    if (value !== null && typeof value === "object" && fn(value, "toService") && fn(value, "fromService")) roles.service.push(name);
  }
  report({ imported: true, roles });
}, (error) => report({ imported: false, error: String((error && (error.code ? error.code + ": " : "") + error.message) || error).slice(0, 500) }));
`;

export interface RoleProbeOptions {
  executable: string;
  /** file path Electron-as-Node can import (inside the archive for a packed install) */
  modulePath: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export async function probeRoles(options: RoleProbeOptions): Promise<RoleReport> {
  const timeoutMs = options.timeoutMs ?? CHILD_RUN_TIMEOUT_MS;
  const run = await runElectronNode(options.executable, ["-e", PROBE, pathToFileURL(options.modulePath).href], {
    env: options.env,
    cwd: options.cwd,
    timeoutMs,
    maxOutputBytes: 256 * 1024,
  });
  const line = run.stdout.split("\n").find((l) => l.startsWith(MARKER));
  if (line !== undefined) {
    try {
      const parsed = JSON.parse(line.slice(MARKER.length)) as RoleReport;
      if (parsed.imported === false && typeof parsed.error === "string") return parsed;
      if (parsed.imported === true && isRoles(parsed.roles)) return parsed;
    } catch {
      // fall through: an unreadable report is a failed check
    }
  }
  const why = run.failure ?? `exited with code ${String(run.exitCode)} without a report`;
  const detail = excerpt(run.stderr || run.stdout);
  return { imported: false, error: detail ? `${why}: ${detail}` : why };
}

export function isRoles(value: unknown): value is Record<RpcRole, string[]> {
  if (typeof value !== "object" || value === null) return false;
  const roles = value as Record<string, unknown>;
  return RPC_ROLES.every((role) => Array.isArray(roles[role]) && (roles[role] as unknown[]).every((n) => typeof n === "string"));
}

export const ROLE_SHAPES: Readonly<Record<RpcRole, string>> = {
  protocol: "class MessagePortProtocol (send, disconnect)",
  client: "class ChannelClient (getChannel, dispose)",
  service: "object with toService() and fromService()",
};
