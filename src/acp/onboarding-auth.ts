/**
 * Onboarding from the editor (adr/0021): a client that can run the agent in a terminal for
 * authentication gets one more auth method in the `initialize` answer, "Review this ZCode build",
 * which runs `zcode-acp onboard` — the interactive review that pins a build no manifest covers.
 * When session/new (load, resume) meets such a build, such a client gets the answer as
 * `auth_required`, so it offers that method; every other client gets the same readable error.
 *
 * Two conventions, both read from the raw `clientCapabilities` (the early initialize answer is
 * built before the SDK parses anything, src/cli/early-initialize.ts):
 * - stable ACP: `auth.terminal: true` → a `type: "terminal"` method whose `args` the client
 *   appends to the agent's configured command;
 * - Zed's older extension: `_meta["terminal-auth"]: true` → the method carries
 *   `_meta["terminal-auth"] {command, args, label}`, the full command line to run.
 * The method is offered whatever the install is: the `initialize` answer never waits for the
 * install check (adr/0013), and `onboard` on a verified install says so and writes nothing.
 */
import type * as acp from "@agentclientprotocol/sdk";

export const ONBOARD_AUTH_METHOD_ID = "zcode-onboard";
const ONBOARD_ARGS = ["onboard"];

export type TerminalAuth = "terminal" | "meta";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Which terminal-auth convention the client advertised (stable first), or undefined. */
export function terminalAuthOf(clientCapabilities: unknown): TerminalAuth | undefined {
  if (!isRecord(clientCapabilities)) return undefined;
  const auth = clientCapabilities.auth;
  if (isRecord(auth) && auth.terminal === true) return "terminal";
  const meta = clientCapabilities._meta;
  if (isRecord(meta) && meta["terminal-auth"] === true) return "meta";
  return undefined;
}

/**
 * How this process was started, for the `_meta` convention's full command line: the Node
 * executable, the CLI script, and the settings flags it got (so onboarding reviews the same
 * install with the same manifests).
 */
export function ownInvocation(): { command: string; args: string[] } {
  return { command: process.execPath, args: process.argv.slice(1) };
}

export function onboardAuthMethod(kind: TerminalAuth, invocation = ownInvocation()): acp.AuthMethod {
  const meta = {
    "terminal-auth": { command: invocation.command, args: [...invocation.args, ...ONBOARD_ARGS], label: "zcode-acp onboard" },
  };
  const base = {
    id: ONBOARD_AUTH_METHOD_ID,
    name: "Review this ZCode build",
    description:
      "Runs `zcode-acp onboard` in a terminal: it reviews a ZCode build this zcode-acp does not pin yet and asks before pinning it locally.",
  };
  return kind === "terminal" ? { ...base, type: "terminal", args: [...ONBOARD_ARGS], _meta: meta } : { ...base, _meta: meta };
}
