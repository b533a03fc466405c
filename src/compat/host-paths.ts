/**
 * Which path a verified install's sessions take (issue 26, docs/runtime-contract.md §8), from its
 * manifest alone: how sessions are read (the legacy session events, or V4 conversation frames), how
 * prompts are sent (V4 input, or `sendPrompt` where V4 input is absent), what the optional calls
 * give (the session list, the context usage), and what the chosen path lacks. The native API
 * chooses the same way at run time (src/native/shared/task-line-api.ts: `host.allows`); a path
 * that lacks something is refused by the assessment, before anything runs.
 */
import {
  acceptsOptionalParam,
  CONTEXT_COMPOSITION_METHOD,
  findLine,
  V4_FRAME_EVENT,
  V4_INPUT_METHODS,
  V4_READ_METHODS,
} from "../manifest/release-lines.js";
import type { Manifest } from "../manifest/types.js";

/** the legacy session event the zcode-task-v1/v2 lines read sessions through */
export const LEGACY_SESSION_EVENT = "onDynamicSessionEvent";

export interface HostPaths {
  /** how sessions are read */
  read: string;
  /** how prompts (and steering texts) are sent */
  input: string;
  /** how `session/list` asks ZCode */
  sessionList: string;
  /** where the context usage the client sees (`usage_update`) comes from */
  contextUsage: string;
  /** what the chosen path needs that the manifest does not allow (`zcode-agent.<method>` / `zcode-agent event <name>`); empty: nothing */
  missing: string[];
}

/**
 * `readPath`: the setting ZCODE_ACP_READ_PATH (`v4` reads a release that has both through V4); a
 * line without the legacy stream always reads V4.
 */
export function hostPaths(manifest: Manifest, readPath: "legacy" | "v4" = "legacy"): HostPaths {
  const protocol = manifest.protocol;
  const agent = protocol.allowlist.agent ?? [];
  const events = protocol.events.agent ?? [];
  const agentChannel = protocol.channels.agent ?? "zcode-agent";
  const line = findLine(protocol.id);
  const lineHasLegacy = (line?.events.agent ?? []).includes(LEGACY_SESSION_EVENT);
  const missing: string[] = [];
  const need = (methods: readonly string[], event: string): void => {
    for (const method of methods) if (!agent.includes(method)) missing.push(`${agentChannel}.${method}`);
    if (!events.includes(event)) missing.push(`${agentChannel} event ${event}`);
  };

  let read: string;
  if (!lineHasLegacy || readPath === "v4") {
    read = `V4 conversation frames (${V4_READ_METHODS[0]}, ${V4_FRAME_EVENT})${
      lineHasLegacy ? " — chosen with ZCODE_ACP_READ_PATH=v4" : `: the ${protocol.id} line has no legacy session events`
    }`;
    need(V4_READ_METHODS, V4_FRAME_EVENT);
  } else {
    read = `legacy session events (${LEGACY_SESSION_EVENT})`;
    need([], LEGACY_SESSION_EVENT);
  }

  const v4Input = V4_INPUT_METHODS.every((m) => agent.includes(m));
  let input: string;
  if (v4Input) input = "V4 input (sendConversationCommandV4 / sendText): steering and queueing while a turn runs";
  else if (agent.includes("sendPrompt")) input = "legacy sendPrompt (no V4 input: no steering or queueing while a turn runs)";
  else {
    input = "none";
    missing.push(...V4_INPUT_METHODS.filter((m) => !agent.includes(m)).map((m) => `${agentChannel}.${m}`));
  }

  const cli = manifest.artifact.cliVersion;
  const sessionList = acceptsOptionalParam(cli, "agent", "listSessions", "includeArchived")
    ? "listSessions with includeArchived: false"
    : `listSessions without includeArchived (agent CLI ${cli}: CLI 0.17.0 dropped it)`;

  const contextUsage = agent.includes(CONTEXT_COMPOSITION_METHOD)
    ? `${CONTEXT_COMPOSITION_METHOD} at each turn's end (bounded wait; the session's own usage if it fails)`
    : `the session's own usage (this build's manifest does not allow ${CONTEXT_COMPOSITION_METHOD})`;

  return { read, input, sessionList, contextUsage, missing };
}

/** The refusal of a path that lacks something: what is missing and what to do. */
export function missingPathMessage(manifest: Manifest, paths: HostPaths): string {
  return (
    `ZCode ${manifest.artifact.appVersion} (manifest ${manifest.artifact.id}, release line ${manifest.protocol.id}) cannot be driven: ` +
    `the path it would take (read: ${paths.read}; input: ${paths.input}) needs ${paths.missing.join(", ")}, which the manifest does not allow. ` +
    `Nothing was started. ${
      paths.read.includes("ZCODE_ACP_READ_PATH=v4")
        ? "Unset ZCODE_ACP_READ_PATH, or use a ZCode release whose manifest allows the V4 read calls."
        : "Update zcode-acp, or onboard this build again (`zcode-acp onboard`) so its manifest lists what its host has."
    }`
  );
}
