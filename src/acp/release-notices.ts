/**
 * Release advisories as ACP `notice` updates (adr/0021): a client that advertised
 * `clientCapabilities.session.notices` gets each warning-level advisory of the release it runs on
 * once per session, right after the session/new answer (a loaded or resumed session got its notice
 * when it was created; nothing follows a load answer, and acp-tck asks that resume send no notice);
 * a client without the capability gets none (ACP: notices only with `session.notices`). The advisories themselves
 * come from the manifest of the assessed install (the CLI maps them, ../cli/release-advisories.ts).
 */
import type * as acp from "@agentclientprotocol/sdk";

/** one advisory as the client shows it */
export interface ReleaseNotice {
  /** the advisory's id (carried in `_meta`, so a client can recognise a repeat) */
  id: string;
  title: string;
  description: string;
}

/** whether the client advertised notices (`{}`; omitted or null means unsupported) */
export function acceptsNotices(capabilities: acp.ClientCapabilities): boolean {
  const notices = (capabilities.session as { notices?: unknown } | null | undefined)?.notices;
  return typeof notices === "object" && notices !== null;
}

export function noticeNotification(sessionId: string, notice: ReleaseNotice): acp.SessionNotification {
  return {
    sessionId,
    update: {
      sessionUpdate: "notice",
      severity: "warning",
      title: notice.title,
      description: notice.description,
      _meta: { "zcode-acp/advisory": notice.id },
    },
  };
}
