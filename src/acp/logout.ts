/**
 * ACP `logout` (stable in SDK 2.4.0, advertised as `agentCapabilities.auth.logout`;
 * adr/0025-registry-entry-and-logout.md). The account belongs to the ZCode desktop app, not to
 * zcode-acp, and the host offers no sign-out, so logout is scoped to this ACP connection:
 *
 * - it answers `{}` at once (whatever the install; it never starts or calls the host) and puts
 *   the connection in the logged-out state;
 * - logged out, every request that would use the ZCode account (open a session, prompt, steer,
 *   list ZCode's sessions) is answered `auth_required` with a message that says what happened
 *   and what to do, until the client calls `authenticate` again (which re-checks ZCode's own
 *   sign-in, as it always does);
 * - the desktop app stays signed in, and sessions already open are not closed and a running
 *   turn is not cancelled: the user can still cancel or close them.
 *
 * The request order decides: an `authenticate` whose check ends after a later `logout` arrived
 * does not undo that logout.
 */
import type { LogoutResponse } from "@agentclientprotocol/sdk";
import { BridgeError } from "../util/errors.js";

/** `_meta` key of the logout answer, for clients that want to say what was (not) signed out */
export const LOGOUT_META_KEY = "zcode-acp/logout";

export const LOGGED_OUT_MESSAGE =
  "You logged out of zcode-acp in this editor, so it opens no session and sends no prompt here until you sign in again " +
  '(choose "Sign in with the ZCode app"). The ZCode desktop app itself is still signed in: to sign out of your ZCode account, sign out in the ZCode app.';

export class ConnectionSignIn {
  private loggedOut = false;
  /** counts logouts, so an authenticate that started before one cannot undo it */
  private logouts = 0;

  /** The logout answer; the connection is logged out from now on. */
  logout(): LogoutResponse {
    this.loggedOut = true;
    this.logouts += 1;
    return { _meta: { [LOGOUT_META_KEY]: { scope: "connection", zcodeDesktopSignIn: "unchanged" } } };
  }

  /** Run an authenticate check; once it succeeds, the connection is signed in again unless a logout arrived meanwhile. */
  async authenticate(check: () => Promise<void>): Promise<void> {
    const before = this.logouts;
    await check();
    if (this.logouts === before) this.loggedOut = false;
  }

  /** AUTH_REQUIRED while logged out: call before anything that uses the ZCode account. */
  require(): void {
    if (this.loggedOut) throw new BridgeError("AUTH_REQUIRED", LOGGED_OUT_MESSAGE, { details: { reason: "logged_out" } });
  }
}
