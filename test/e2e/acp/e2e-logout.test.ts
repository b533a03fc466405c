/**
 * `logout` through the built CLI (src/acp/logout.ts, adr/0025): advertised as
 * `agentCapabilities.auth.logout`, answered exactly once with `{}` (and what was signed out in
 * `_meta`); afterwards what uses the ZCode account is `auth_required` until `authenticate`, and
 * the ZCode app itself was never asked to sign out.
 */
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { e2e } from "../../support/e2e-harness.js";

const t = e2e();

type Failure = { code?: number; message?: string; data?: { code?: string; details?: { reason?: string } } };
const failure = (p: Promise<unknown>): Promise<Failure> =>
  p.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (e: Failure) => e,
  );
const LOGGED_OUT = {
  code: -32000,
  message: expect.stringMatching(/logged out of zcode-acp.*ZCode desktop app itself is still signed in/s),
};

describe("e2e: logout", () => {
  it("advertises auth.logout; logout answers {} once, then session/new, list and prompts are auth_required until authenticate", async () => {
    const client = await t.start();
    const init = await client.initialize();
    expect(init.agentCapabilities?.auth).toEqual({ logout: {} });
    const ws = await t.workspace();
    const { sessionId } = await client.newSession(ws);

    const answer = await client.agent.request(acp.methods.agent.logout, {});
    expect(answer).toEqual({ _meta: { "zcode-acp/logout": { scope: "connection", zcodeDesktopSignIn: "unchanged" } } });
    expect(client.transcript.lines.filter((l) => l.from === "agent" && l.message?.result?._meta?.["zcode-acp/logout"])).toHaveLength(1);

    const created = await failure(client.newSession(ws));
    expect(created).toMatchObject({ ...LOGGED_OUT, data: { code: "AUTH_REQUIRED", details: { reason: "logged_out" } } });
    expect(await failure(client.agent.request(acp.methods.agent.session.list, {}))).toMatchObject(LOGGED_OUT);
    const prompted = await failure(client.prompt(sessionId, "still there?"));
    expect(prompted).toMatchObject(LOGGED_OUT);
    expect(client.text(sessionId)).toMatch(/zcode-acp: You logged out of zcode-acp.*\[AUTH_REQUIRED\]/s); // readable in the session too
    // a session this connection does not have is not found (nothing is written under an unknown id)
    expect(await failure(client.prompt("no-such-session", "hello?"))).toMatchObject({ code: -32002 });
    expect(client.updates("no-such-session")).toEqual([]);

    // a second logout is answered the same way; nothing in ZCode was signed out or prompted meanwhile
    expect(await client.agent.request(acp.methods.agent.logout, {})).toEqual(answer);
    const hostCalls = (await t.sim().readCallLog()).filter((e) => e.kind === "call").map((e) => String(e.method));
    expect(hostCalls.filter((m) => /sign.?out|log.?out/i.test(m))).toEqual([]);
    expect(await t.calls("sendPrompt")).toEqual([]);

    // authenticate (ZCode's own sign-in, checked again) ends the logged-out state
    expect(await client.agent.request(acp.methods.agent.authenticate, { methodId: "zcode-app" })).toEqual({});
    const again = await client.newSession(ws);
    expect(again.sessionId).toEqual(expect.any(String));
    expect((await client.prompt(sessionId, "back again")).stopReason).toBe("end_turn");
    client.expectValid();
    expect((await client.close()).code).toBe(0);
  });

  it("logout needs no ZCode at all: answered on an install that is signed out, before any session", async () => {
    const logged = (await t.sim().readCallLog()).length;
    const client = await t.start({ simProfile: { signedOut: true } });
    await client.initialize();
    expect(await client.agent.request(acp.methods.agent.logout, {})).toMatchObject({
      _meta: { "zcode-acp/logout": { scope: "connection" } },
    });
    expect(await t.sim().readCallLog()).toHaveLength(logged); // the host was not even started
    // authenticate still reports ZCode's real state: signed out in the app
    const auth = await failure(client.agent.request(acp.methods.agent.authenticate, { methodId: "zcode-app" }));
    expect(auth).toMatchObject({ code: -32000, message: expect.stringMatching(/sign in/i) });
    client.expectValid();
  });
});
