/**
 * The release lines this build implements (docs/runtime-contract.md §2.1): what a manifest of each
 * line may allow and what an install of the line must have. Pure data: manifest validation, the
 * compatibility check and the launcher read it; the typed API of each line lives in src/native/.
 * Adding a line is one entry here and one folder under src/native/ (adr/0008).
 */
import type { PerChannel, ProtocolDescriptor } from "./types.js";

export type ChannelKey = keyof PerChannel<unknown>;

export interface ReleaseLine {
  /** the manifest's `protocol.id` */
  id: string;
  /**
   * strings only a host of this line has, beside the method names of its allowlist: `onboard`
   * takes an unpinned build for the line whose methods and markers its host bundle all names
   * (src/onboard/line-evidence.ts); a newer line names at least the markers of the line it succeeds
   */
  markers: readonly string[];
  /**
   * names a host of this line no longer has: `onboard` does not take a build whose host bundle
   * names one of them for this line (a 3.14 bundle names every V4 call of zcode-task-v3 too, and
   * still reads through the legacy stream)
   */
  absent?: readonly string[];
  /** every channel the line uses, with the native channel name it must have */
  channels: Readonly<Partial<Record<ChannelKey, string>>>;
  /** every native method the line's API may call, per channel: an allowlist entry outside this is refused */
  methods: Readonly<Partial<Record<ChannelKey, readonly string[]>>>;
  /** every native event the line's API may subscribe to, per channel */
  events: Readonly<Partial<Record<ChannelKey, readonly string[]>>>;
  /** methods the line cannot work without (a manifest that does not allow them is refused) */
  requiredMethods: Readonly<Partial<Record<ChannelKey, readonly string[]>>>;
  /** the builtin provider config file must exist in the resources dir (docs/runtime-contract.md §4.1) */
  needsBuiltinProviderConfig: boolean;
  /**
   * host results and events the bootstrap reduces before they leave the Electron process, by
   * `<channel>.<method>` or `<channel>.<event>` (src/runtime/projections.js, docs/history.md)
   */
  projections: Readonly<Record<string, Projection>>;
  /** the V4 wire protocol versions (the hello's `protocolVersion`) the line speaks; a hello with any other fails closed */
  v4WireVersions: readonly number[];
}

/** the reductions src/runtime/projections.js defines */
export type Projection =
  | "model-selection-view"
  | "session-state"
  | "session-event"
  | "history-pages"
  | "conversation-frame"
  | "conversation-rows"
  | "provider-headers-request";

/** What the V4 read path reduces: each wire frame is split to fit the channel, each rows page bounded (adr/0024). */
const V4_READ_PROJECTIONS = {
  "agent.onDynamicConversationFrame": "conversation-frame",
  "agent.conversationRowsRangeV4": "conversation-rows",
} as const satisfies Record<string, Projection>;

/**
 * What every zcode-task line reduces (adr/0018): each snapshot-returning call loses its history,
 * every session event is bounded, and the full history read is held in the bootstrap and paged.
 */
const SESSION_PROJECTIONS = {
  "agent.createSession": "session-state",
  "agent.resumeSession": "session-state",
  "agent.readSession": "session-state",
  "agent.setMode": "session-state",
  "agent.setModel": "session-state",
  "agent.setThoughtLevel": "session-state",
  "agent.onDynamicSessionEvent": "session-event",
  "agent.readSessionMessages": "history-pages",
} as const satisfies Record<string, Projection>;

const TASK_METHODS = ["stopGeneration", "respondPermission", "respondElicitation"] as const;
/**
 * The desktop's own delete of a task (= a session) and the ids it hid (session/delete and
 * session/list, adr/0032): seen in ZCode's 3.15.1 source (`IZCodeTaskService`,
 * shared/reference/zcode-3.15.1-source.md §2.5), [not found] for 3.12–3.14. Optional on the lines a
 * 3.15+ build can be (zcode-task-v2, zcode-task-v3): a manifest allows them only where the build
 * has them, and only there session/delete is offered.
 */
export const TASK_DELETE_METHODS = ["deleteTask", "listDeletedTaskIds"] as const;
/**
 * ZCode's V4 conversation input (docs/zcode-host.md §15, adr/0022): the handshake, command
 * envelopes and their query, and image uploads. Optional on both lines: a manifest whose release
 * has them allows them, and the line's API then sends every prompt through `sendText`.
 */
export const V4_INPUT_METHODS = [
  "helloConversationV4",
  "initializeConversationV4",
  "sendConversationCommandV4",
  "queryConversationCommandsV4",
  "attachmentBeginV4",
  "attachmentChunkV4",
  "attachmentCommitV4",
  "attachmentAbortV4",
] as const;
/**
 * ZCode's V4 conversation reading (docs/zcode-host.md §16, adr/0024): the subscription, its
 * recovery, its end, and the history pages. Optional on the legacy lines (read through them only
 * with ZCODE_ACP_READ_PATH=v4); required on zcode-task-v3, which has no legacy event stream.
 */
export const V4_READ_METHODS = [
  "subscribeConversationV4",
  "resyncConversationV4",
  "unsubscribeConversationV4",
  "conversationRowsRangeV4",
] as const;
/**
 * ZCode 3.18+'s breakdown of a session's context (shared/reference/zcode-3.16-4.0.md §2.2): optional
 * on the lines a 3.18+ build can be (zcode-task-v2, zcode-task-v3); a manifest allows it only where
 * the build has it, and the bridge then reads the context usage at a turn's end from it.
 */
export const CONTEXT_COMPOSITION_METHOD = "getContextComposition";
/** the event carrying the V4 conversation's wire frames */
export const V4_FRAME_EVENT = "onDynamicConversationFrame";
/**
 * The event by which a zcode-task-v3 host (no legacy session stream) hands a client the provider
 * runtime header requests it does not answer itself (the Start Plan captcha; zcode-v4.md §5.4,
 * docs/zcode-host.md §16.7): one listener per workspace, each request naming its session. The
 * bridge answers each at once with `respondProviderRuntimeHeaders` (headersApplied: false), so it
 * needs neither the per-session variant nor ZCode's cancellation notice.
 */
export const V4_HEADERS_EVENT = "onDynamicWorkspaceProviderRuntimeHeadersRequest";
/** the command types the bridge sends in a V4 envelope (the bootstrap refuses any other) */
export const V4_COMMAND_TYPES = [
  "sendText",
  "stop",
  "deleteQueueItem",
  "setAutoDrain",
  "resolveInteraction",
  "compact",
  // session management (session/set_title, session/fork): in the V4 command catalogue since the 3.11.x
  // CLI. Not `deleteSession`: it only closes a session (session/delete is zcode-task's deleteTask, adr/0032)
  "renameSession",
  "forkAssistant",
  // a backgrounded subagent's cancel (session/cancel of its child; zcode-3.15.1-source.md §2.4), not compare-and-set
  "cancelBackgroundWork",
] as const;
/**
 * Stopping one subagent (ZCode 3.18+, docs/zcode-3.16-4.0.md): optional on the lines that can run
 * 3.18 builds; only a manifest whose release has it allows it, and only there a subagent's child
 * session advertises cancel (src/session/subagents.ts).
 */
export const SUBAGENT_STOP_METHOD = "stopSubagent";
/**
 * A session's subagent directory (`listSessionSubagents {workspacePath, sessionId, endedCursor?,
 * endedLimit?}`, in ZCode 3.15.1's source: zcode-3.15.1-source.md §2.4): optional on the lines
 * that can run such builds; a manifest allows it only where its release is known to have it, and
 * the bridge then reads it for session/load (fail-soft: the parent's `subagent` rows suffice).
 */
export const SUBAGENT_DIRECTORY_METHOD = "listSessionSubagents";
const COMMON_AGENT_METHODS = [
  "initialize",
  "createSession",
  "resumeSession",
  "listSessions",
  "readSession",
  "readSessionMessages",
  "readSessionEvents",
  "sendPrompt",
  "closeSession",
  "setModel",
  "setThoughtLevel",
  "setMode",
  "getTaskTokenUsage",
  "respondProviderRuntimeHeaders",
  "disposeWorkspace",
  ...V4_INPUT_METHODS,
  ...V4_READ_METHODS,
] as const;
const REQUIRED_AGENT_METHODS = [
  "initialize",
  "createSession",
  "resumeSession",
  "listSessions",
  "readSession",
  "sendPrompt",
  "closeSession",
  "setMode",
] as const;

/**
 * The zcode-task-v3 agent methods: the non-V4 session calls ZCode keeps (create, resume, list,
 * read, close, settings, presentation, usage, provider headers) and the whole V4 surface the
 * bridge uses. No sendPrompt, readSessionMessages or readSessionEvents.
 */
const V3_AGENT_METHODS = [
  "initialize",
  "createSession",
  "resumeSession",
  "listSessions",
  "readSession",
  "closeSession",
  "setModel",
  "setThoughtLevel",
  "setMode",
  "getTaskTokenUsage",
  "respondProviderRuntimeHeaders",
  "disposeWorkspace",
  "readWorkspacePresentation",
  CONTEXT_COMPOSITION_METHOD,
  ...V4_INPUT_METHODS,
  ...V4_READ_METHODS,
] as const;
/** what a v3 install must allow: its session calls, the V4 handshake, input, reading and answers */
const V3_REQUIRED_AGENT_METHODS = [
  "initialize",
  "createSession",
  "resumeSession",
  "listSessions",
  "readSession",
  "closeSession",
  "setMode",
  "readWorkspacePresentation",
  "helloConversationV4",
  "initializeConversationV4",
  "sendConversationCommandV4",
  ...V4_READ_METHODS,
  // the only answer to a provider header request (its event: V4_HEADERS_EVENT)
  "respondProviderRuntimeHeaders",
] as const;

export const RELEASE_LINES: readonly ReleaseLine[] = [
  {
    id: "zcode-task-v1",
    markers: [],
    channels: { agent: "zcode-agent", task: "zcode-task" },
    methods: { agent: [...COMMON_AGENT_METHODS, "readWorkspaceState"], task: TASK_METHODS },
    events: { agent: ["onDynamicSessionEvent", V4_FRAME_EVENT], task: [] },
    requiredMethods: { agent: [...REQUIRED_AGENT_METHODS, "readWorkspaceState"], task: TASK_METHODS },
    needsBuiltinProviderConfig: false,
    projections: { ...SESSION_PROJECTIONS, ...V4_READ_PROJECTIONS },
    v4WireVersions: [3],
  },
  {
    id: "zcode-task-v2",
    markers: ["zcodeBuiltinProviderConfigFilePath", "model-selection"],
    channels: { agent: "zcode-agent", task: "zcode-task", modelSelection: "model-selection" },
    methods: {
      agent: [
        ...COMMON_AGENT_METHODS,
        "readWorkspacePresentation",
        CONTEXT_COMPOSITION_METHOD,
        SUBAGENT_STOP_METHOD,
        SUBAGENT_DIRECTORY_METHOD,
      ],
      task: [...TASK_METHODS, ...TASK_DELETE_METHODS],
      modelSelection: ["getView"],
    },
    events: { agent: ["onDynamicSessionEvent", V4_FRAME_EVENT], task: [], modelSelection: [] },
    requiredMethods: { agent: [...REQUIRED_AGENT_METHODS, "readWorkspacePresentation"], task: TASK_METHODS, modelSelection: ["getView"] },
    needsBuiltinProviderConfig: true,
    projections: { ...SESSION_PROJECTIONS, ...V4_READ_PROJECTIONS, "modelSelection.getView": "model-selection-view" },
    v4WireVersions: [3],
  },
  {
    // ZCode 4.0.0 and later (expected): no sendPrompt, no onDynamicSessionEvent, no zcode-task
    // answers; sessions are read, prompted, answered and stopped through V4 (adr/0024)
    id: "zcode-task-v3",
    markers: ["zcodeBuiltinProviderConfigFilePath", "model-selection", "subscribeConversationV4", "conversationRowsRangeV4"],
    absent: ["onDynamicSessionEvent"],
    // the manifest schema has a `task` channel and three operations on every line: a v3 manifest
    // names the channel and allows on it at most the desktop's task delete; its operations name
    // allowlisted agent methods and are never run (stop and answers go through V4 commands)
    channels: { agent: "zcode-agent", task: "zcode-task", modelSelection: "model-selection" },
    methods: {
      agent: [...V3_AGENT_METHODS, SUBAGENT_STOP_METHOD, SUBAGENT_DIRECTORY_METHOD],
      task: TASK_DELETE_METHODS,
      modelSelection: ["getView"],
    },
    events: { agent: [V4_FRAME_EVENT, V4_HEADERS_EVENT], task: [], modelSelection: [] },
    requiredMethods: { agent: V3_REQUIRED_AGENT_METHODS, task: [], modelSelection: ["getView"] },
    needsBuiltinProviderConfig: true,
    projections: {
      "agent.createSession": "session-state",
      "agent.resumeSession": "session-state",
      "agent.readSession": "session-state",
      "agent.setMode": "session-state",
      "agent.setModel": "session-state",
      "agent.setThoughtLevel": "session-state",
      ...V4_READ_PROJECTIONS,
      // a header request leaves Electron as its ids and reason only (no account or model data)
      [`agent.${V4_HEADERS_EVENT}`]: "provider-headers-request",
      "modelSelection.getView": "model-selection-view",
    },
    v4WireVersions: [3],
  },
];

export function implementedLineIds(): string[] {
  return RELEASE_LINES.map((line) => line.id);
}

export function findLine(id: string): ReleaseLine | undefined {
  return RELEASE_LINES.find((line) => line.id === id);
}

/**
 * The protocol descriptor of a line no pinned release of which exists yet, built from the line's
 * own definition: its channels, every method and event its API may use (onboarding then keeps
 * what the build's host bundle names, ../onboard/allowed-methods.ts). Only zcode-task-v3 (4.x: no
 * 4.x manifest is pinned, docs/zcode-host.md §16) has one: its three operations are never run (stop
 * and answers are V4 commands) and name an allowlisted V4 method, as the schema wants an operation
 * on every line. Other lines take their descriptor from a pinned release; undefined for them.
 */
export function unpinnedLineDescriptor(line: ReleaseLine): ProtocolDescriptor | undefined {
  if (line.id !== "zcode-task-v3") return undefined;
  const unused = { service: "agent" as const, method: "sendConversationCommandV4", sessionKey: "sessionId" };
  const perChannel = (of: Readonly<Partial<Record<ChannelKey, readonly string[]>>>): PerChannel<string[]> => ({
    agent: [...(of.agent ?? [])],
    task: [...(of.task ?? [])],
    modelSelection: [...(of.modelSelection ?? [])],
  });
  return {
    id: line.id,
    channels: {
      agent: line.channels.agent ?? "zcode-agent",
      task: line.channels.task ?? "zcode-task",
      ...(line.channels.modelSelection ? { modelSelection: line.channels.modelSelection } : {}),
    },
    operations: { cancelGeneration: unused, respondStructuredInput: unused, respondPermission: unused },
    allowlist: perChannel(line.methods),
    events: perChannel(line.events),
  };
}

/**
 * Optional parameters a newer agent CLI dropped, by `<channel>.<method>.<param>`: sent only to a build
 * whose manifest names a CLI older than `droppedInCli`. A CLI version that is not a plain
 * `x.y.z` (an onboarded build whose CLI version could not be read: "unknown") never gets them
 * (docs/runtime-contract.md §8; CLI 0.17.0 answers `listSessions` `includeArchived` with -32602).
 */
export const DROPPED_PARAMS: Readonly<Record<string, { droppedInCli: string }>> = {
  "agent.listSessions.includeArchived": { droppedInCli: "0.17.0" },
};

const PLAIN_VERSION = /^(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?$/;

/** Does a build whose CLI is `cliVersion` accept the optional parameter `channel.method.param`? */
export function acceptsOptionalParam(cliVersion: string, channel: string, method: string, param: string): boolean {
  const rule = DROPPED_PARAMS[`${channel}.${method}.${param}`];
  if (rule === undefined) return true;
  const have = PLAIN_VERSION.exec(cliVersion);
  const limit = PLAIN_VERSION.exec(rule.droppedInCli)!;
  if (!have) return false;
  for (let i = 1; i <= 3; i++) {
    const a = Number(have[i]);
    const b = Number(limit[i]);
    if (a !== b) return a < b;
  }
  // the dropping version itself, and its pre-releases (0.17.0-rc.1), do not get it
  return false;
}

/** The builtin provider config of a v2 install, relative to the resources dir (docs/runtime-contract.md §4.1). */
export const BUILTIN_PROVIDER_CONFIG = "config/provider/zcode-builtin.json";
