/**
 * The ACP registry's own launch checks, restated in TypeScript (no Python; the registry's scripts
 * are mirrored, not vendored): what `verify_agents.py --auth-check` (client.run_auth_check) and the
 * nightly `protocol_matrix.py` do to an npx-distributed agent, as
 * /work/shared/reference/zcode-3.15.1-source.md §4.2 and §4.3 describe them.
 *
 * - the auth probe: a whitelist environment with the sandbox HOME, ONE `initialize` line exactly as
 *   the validator writes it, and only the FIRST stdout line read, within 120 s;
 * - the protocol matrix: initialize (120 s), `session/new` (5 s), then `session/list`,
 *   `session/fork`, `session/resume`, `session/set_model` and (when advertised) `session/close`,
 *   5 s each, every answer classified as the matrix classifies it.
 *
 * The agent runs in its own process group, killed as a group (npx starts a shell and Node).
 */
import { spawn, type ChildProcess } from "node:child_process";

/** the validator's environment whitelist (client.run_auth_check), exactly; TERM=dumb and HOME are set on top */
export const AUTH_CHECK_ENV_WHITELIST = [
  "CI",
  "COMSPEC",
  "NPM_CONFIG_CACHE",
  "NODE_EXTRA_CA_CERTS",
  "PATH",
  "PATHEXT",
  "PYTHON_KEYRING_BACKEND",
  "PYTHON_KEYRING_DISABLED",
  "REQUESTS_CA_BUNDLE",
  "SSL_CERT_DIR",
  "SSL_CERT_FILE",
  "SystemRoot",
  "TMP",
  "TMPDIR",
  "TEMP",
  "UV_CACHE_DIR",
  "WINDIR",
  "XDG_CACHE_HOME",
  "XDG_CONFIG_HOME",
] as const;

/** the one line the validator writes (request id 1), byte for byte */
export const VALIDATOR_INITIALIZE_LINE = [
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,',
  '"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},',
  '"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},',
  '"_meta":{"terminal_output":true,"terminal-auth":true}}}}',
].join("");

export const INITIALIZE_DEADLINE_MS = 120_000;
export const PROBE_DEADLINE_MS = 5_000;

/** the probe's environment: the whitelisted variables of `base` that are set, TERM=dumb, the agent's own env, the sandbox HOME */
export function authCheckEnv(base: NodeJS.ProcessEnv, home: string, agentEnv: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of AUTH_CHECK_ENV_WHITELIST) if (base[name] !== undefined) env[name] = base[name];
  return { ...env, TERM: "dumb", ...agentEnv, HOME: home };
}

/** the validator's auth method typing: `type`, else `_meta` `terminal-auth` → terminal, `agent-auth` → agent, else agent */
export function authMethodType(method: { type?: unknown; _meta?: unknown }): string {
  if (typeof method.type === "string") return method.type;
  const meta = typeof method._meta === "object" && method._meta !== null ? (method._meta as Record<string, unknown>) : {};
  if ("terminal-auth" in meta) return "terminal";
  if ("agent-auth" in meta) return "agent";
  return "agent";
}

export type MatrixClass =
  "success" | "method_not_found" | "auth_required" | "invalid_params" | "resource_not_found" | "cancelled" | "error" | "timeout";

/** the matrix's classification of one answer (protocol_matrix.py), in its order */
export function classify(answer: { result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined): MatrixClass {
  if (answer === undefined) return "timeout";
  if ("result" in answer) return "success";
  const code = answer.error?.code;
  const message = typeof answer.error?.message === "string" ? answer.error.message.toLowerCase() : "";
  if (code === -32601) return "method_not_found";
  if (code === -32000 || message.includes("auth_required") || message.includes("authentication")) return "auth_required";
  if (code === -32602) return "invalid_params";
  if (code === -32002) return "resource_not_found";
  if (code === -32800) return "cancelled";
  return "error";
}

export interface Launch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** a launched agent: stdout split into lines, each kept raw; killed as a process group */
export class LaunchedAgent {
  readonly lines: string[] = [];
  /** every line both ways, in order: for schema validation (test/support/acp-transcript.ts) */
  readonly log: Array<{ from: "agent" | "client"; raw: string }> = [];
  stderr = "";
  readonly child: ChildProcess;
  private buffer = "";
  private readonly waiting: Array<() => void> = [];

  constructor(launch: Launch) {
    this.child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.child.stderr!.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdout!.on("data", (d: Buffer) => {
      this.buffer += d.toString();
      for (let i = this.buffer.indexOf("\n"); i >= 0; i = this.buffer.indexOf("\n")) {
        this.lines.push(this.buffer.slice(0, i));
        this.log.push({ from: "agent", raw: this.buffer.slice(0, i) });
        this.buffer = this.buffer.slice(i + 1);
      }
      this.waiting.splice(0).forEach((wake) => wake());
    });
    this.child.once("exit", () => this.waiting.splice(0).forEach((wake) => wake()));
  }

  write(line: string): void {
    this.log.push({ from: "client", raw: line });
    this.child.stdin!.write(`${line}\n`);
  }

  /** the first line at index ≥ `from` that `match` accepts, or undefined once `ms` passed (or the process exited) */
  async lineWhere(match: (line: string, index: number) => boolean, ms: number, from = 0): Promise<string | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      for (let i = from; i < this.lines.length; i++) if (match(this.lines[i]!, i)) return this.lines[i];
      const left = deadline - Date.now();
      if (left <= 0 || this.child.exitCode !== null || this.child.signalCode !== null) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  kill(): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      this.child.kill("SIGKILL");
    }
  }
}

export interface AuthCheckResult {
  /** the first stdout line, raw (undefined: none within 120 s) */
  firstLine: string | undefined;
  /** what the validator concludes: "pass", or its own wording for the failure */
  verdict: string;
  /** [id, type] of each auth method */
  methods: Array<[string, string]>;
  stderr: string;
}

/** client.run_auth_check: one initialize line, the first stdout line within 120 s, an agent or terminal method */
export async function runAuthCheck(launch: Launch): Promise<AuthCheckResult> {
  const agent = new LaunchedAgent(launch);
  try {
    agent.write(VALIDATOR_INITIALIZE_LINE);
    const firstLine = await agent.lineWhere((_, i) => i === 0, INITIALIZE_DEADLINE_MS);
    const result = (verdict: string, methods: Array<[string, string]> = []): AuthCheckResult => ({
      firstLine,
      verdict,
      methods,
      stderr: agent.stderr,
    });
    if (firstLine === undefined) return result("Timeout waiting for initialize response");
    let response: { result?: { authMethods?: Array<{ id?: unknown; type?: unknown; _meta?: unknown }> }; error?: unknown };
    try {
      response = JSON.parse(firstLine) as typeof response;
    } catch {
      return result("ACP spec violation: agent wrote non-JSON to stdout");
    }
    if (response.error !== undefined) return result("Agent returned an error");
    const authMethods = response.result?.authMethods;
    if (!Array.isArray(authMethods) || authMethods.length === 0) return result("No authMethods in response");
    const methods = authMethods.map((m): [string, string] => [String(m.id), authMethodType(m)]);
    return result(
      methods.some(([, type]) => type === "agent" || type === "terminal") ? "pass" : "No agent or terminal auth method",
      methods,
    );
  } finally {
    agent.kill();
  }
}

export interface MatrixProbe {
  method: string;
  class: MatrixClass;
  /** the answer as read (undefined: none within the deadline) */
  answer: { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } } | undefined;
}

export interface MatrixResult {
  initialize: MatrixProbe;
  sessionNew: MatrixProbe;
  probes: MatrixProbe[];
  /** `sessionCapabilities.close` is an object, so close was probed */
  closeProbed: boolean;
  /** close: success with an object result (and `_meta`, if any, an object or null) */
  closeSupported: boolean;
  /** a `models` field in the session/new or any probe result */
  setModel: boolean;
  capabilities: { loadSession: boolean; list: boolean; fork: boolean; resume: boolean };
  stderr: string;
  log: LaunchedAgent["log"];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** protocol_matrix.py for one agent: the sequence, the deadlines, the classification */
export async function runProtocolMatrix(launch: Launch, workspace: string): Promise<MatrixResult> {
  const agent = new LaunchedAgent(launch);
  let nextId = 1;
  const request = async (method: string, params: object, ms: number): Promise<MatrixProbe> => {
    const id = nextId++;
    const line = method === "initialize" ? VALIDATOR_INITIALIZE_LINE : JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const from = agent.lines.length;
    agent.write(line);
    const raw = await agent.lineWhere(
      (l) => {
        try {
          const message = JSON.parse(l) as Record<string, unknown>;
          return message.id === id && !("method" in message);
        } catch {
          return false;
        }
      },
      ms,
      from,
    );
    const answer = raw === undefined ? undefined : (JSON.parse(raw) as MatrixProbe["answer"]);
    return { method, class: classify(answer), answer };
  };
  try {
    const initialize = await request("initialize", {}, INITIALIZE_DEADLINE_MS);
    const result = isObject(initialize.answer?.result) ? initialize.answer.result : {};
    const agentCapabilities = isObject(result.agentCapabilities) ? result.agentCapabilities : {};
    const sessionCapabilities = isObject(agentCapabilities.sessionCapabilities) ? agentCapabilities.sessionCapabilities : {};
    const sessionNew = await request("session/new", { cwd: workspace, mcpServers: [] }, PROBE_DEADLINE_MS);
    const created = isObject(sessionNew.answer?.result) ? sessionNew.answer.result : undefined;
    const sessionId = typeof created?.sessionId === "string" ? created.sessionId : "sess_matrix_probe";
    const probes: MatrixProbe[] = [];
    probes.push(await request("session/list", {}, PROBE_DEADLINE_MS));
    probes.push(await request("session/fork", { sessionId, cwd: workspace, mcpServers: [] }, PROBE_DEADLINE_MS));
    probes.push(await request("session/resume", { sessionId, cwd: workspace, mcpServers: [] }, PROBE_DEADLINE_MS));
    probes.push(await request("session/set_model", { sessionId, modelId: "matrix-model" }, PROBE_DEADLINE_MS));
    const closeProbed = isObject(sessionCapabilities.close);
    let closeSupported = false;
    if (closeProbed) {
      const close = await request("session/close", { sessionId }, PROBE_DEADLINE_MS);
      probes.push(close);
      const closed = close.answer?.result;
      closeSupported =
        close.class === "success" && isObject(closed) && (closed._meta === undefined || closed._meta === null || isObject(closed._meta));
    }
    const setModel = [sessionNew, ...probes].some((p) => isObject(p.answer?.result) && "models" in p.answer.result);
    return {
      initialize,
      sessionNew,
      probes,
      closeProbed,
      closeSupported,
      setModel,
      capabilities: {
        loadSession: agentCapabilities.loadSession === true,
        list: "list" in sessionCapabilities,
        fork: "fork" in sessionCapabilities,
        resume: "resume" in sessionCapabilities,
      },
      stderr: agent.stderr,
      log: agent.log,
    };
  } finally {
    agent.kill();
  }
}
