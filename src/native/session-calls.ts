/**
 * Which session management calls an install's host offers (docs/acp.md "Session management"),
 * read from its manifest's allowlist: session/delete and session/set_title go out as the V4
 * commands `deleteSession` and `renameSession`, which every release with ZCode's V4 command call
 * has (the 3.11.x CLI's catalogue of 30 command types and 3.14.4's of 34 both list them:
 * zcode-v4.md §4.3, zcode-host-3.12-3.15.md). A release without `sendConversationCommandV4`
 * (3.10.2) offers neither. session/fork (V4 `forkAssistant`) targets a conversation row, which
 * the bridge reads through `conversationRowsRangeV4`: offered where the manifest allows that too
 * (the zcode-task-v3 line; the pinned legacy manifests do not). The only place outside the line
 * APIs that names a ZCode method.
 */
export interface SessionCalls {
  /** session/delete (V4 `deleteSession`) */
  delete: boolean;
  /** session/set_title (V4 `renameSession`) */
  setTitle: boolean;
  /** session/fork (V4 `forkAssistant`, at a row read through `conversationRowsRangeV4`) */
  fork: boolean;
}

export const NO_SESSION_CALLS: SessionCalls = Object.freeze({ delete: false, setTitle: false, fork: false });

/** the native call the session management commands go through */
const V4_COMMAND_CALL = "sendConversationCommandV4";
/** the native call a fork finds its row with (the V4 read path's history pages) */
const V4_ROWS_CALL = "conversationRowsRangeV4";

/** What a manifest's agent allowlist offers (undefined: no install known, nothing offered). */
export function sessionCallsOf(agentAllowlist: readonly string[] | undefined): SessionCalls {
  const commands = agentAllowlist?.includes(V4_COMMAND_CALL) === true;
  return { delete: commands, setTitle: commands, fork: commands && agentAllowlist?.includes(V4_ROWS_CALL) === true };
}

/** Does this install offer session/fork (the V4 commands and the rows pages)? */
export async function offersFork(allows: (service: "agent", method: string) => Promise<boolean>): Promise<boolean> {
  return (await allows("agent", V4_COMMAND_CALL)) && (await allows("agent", V4_ROWS_CALL));
}

/** Does this install offer the V4 commands the session management calls use? (`allows` as HostClient has it) */
export async function offersSessionCommands(allows: (service: "agent", method: string) => Promise<boolean>): Promise<boolean> {
  return allows("agent", V4_COMMAND_CALL);
}
