/**
 * Which session management calls an install's host offers (docs/acp.md "Session management"),
 * read from its manifest's allowlist. The only place outside the line APIs that names a ZCode
 * method.
 *
 * - session/delete is ZCode's real delete, the desktop's own: `zcode-task.deleteTask` (the task is
 *   hidden from lists, the CLI session kept), with `zcode-task.listDeletedTaskIds` to leave deleted
 *   sessions out of session/list (shared/reference/zcode-3.15.1-source.md §2.5). ZCode's V4
 *   `deleteSession` only closes a session (it stays listed), so it is no delete: an install whose
 *   manifest does not allow both task calls offers no session/delete (adr/0032).
 * - session/set_title goes out as the V4 command `renameSession`, which every release with ZCode's
 *   V4 command call has (the 3.11.x CLI's catalogue of 30 command types and 3.14.4's of 34 both
 *   list it: zcode-v4.md §4.3, zcode-host-3.12-3.15.md). 3.10.2 has no V4 command call.
 * - session/fork (V4 `forkAssistant`) targets a row where ZCode allows a fork, read through
 *   `conversationRowsRangeV4`: offered where the manifest allows that too (3.14.x on, and the
 *   zcode-task-v3 line).
 */
export interface SessionCalls {
  /** session/delete (zcode-task `deleteTask`, the list filtered by `listDeletedTaskIds`) */
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
/** the desktop's delete of a task (= a session), and the ids it hid (zcode-task) */
export const DELETE_TASK_CALL = "deleteTask";
export const DELETED_TASK_IDS_CALL = "listDeletedTaskIds";

/** the channels whose methods decide what is offered */
type Service = "agent" | "task";

/** the allowlist of a manifest (its agent and task channels) */
export interface OfferedMethods {
  agent?: readonly string[] | undefined;
  task?: readonly string[] | undefined;
}

/**
 * Is session/delete a real delete on this install? Both zcode-task calls: the delete, and the ids
 * it hid, which session/list leaves out. `serves` says whether the install serves a call (today:
 * its manifest allows it).
 */
export function deletesForReal(serves: (service: Service, method: string) => boolean): boolean {
  return serves("task", DELETE_TASK_CALL) && serves("task", DELETED_TASK_IDS_CALL);
}

/** What a manifest's allowlist offers (undefined: no install known, nothing offered). */
export function sessionCallsOf(allowlist: OfferedMethods | undefined): SessionCalls {
  const serves = (service: Service, method: string): boolean => allowlist?.[service]?.includes(method) === true;
  const commands = serves("agent", V4_COMMAND_CALL);
  return { delete: deletesForReal(serves), setTitle: commands, fork: commands && serves("agent", V4_ROWS_CALL) };
}

/** `allows` as HostClient has it */
type Allows = (service: Service, method: string) => Promise<boolean>;

/** Does this install offer session/fork (the V4 commands and the rows pages)? */
export async function offersFork(allows: Allows): Promise<boolean> {
  return (await allows("agent", V4_COMMAND_CALL)) && (await allows("agent", V4_ROWS_CALL));
}

/** Does this install offer the V4 commands session/set_title uses? */
export async function offersSessionCommands(allows: Allows): Promise<boolean> {
  return allows("agent", V4_COMMAND_CALL);
}

/** Does this install offer a real session/delete (`deletesForReal`)? */
export async function offersDelete(allows: Allows): Promise<boolean> {
  const served = new Set<string>();
  for (const method of [DELETE_TASK_CALL, DELETED_TASK_IDS_CALL]) if (await allows("task", method)) served.add(method);
  return deletesForReal((service, method) => service === "task" && served.has(method));
}
