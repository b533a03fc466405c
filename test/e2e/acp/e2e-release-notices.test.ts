/**
 * Release advisories as ACP notices (adr/0021), through the built CLI on the simulated install of
 * this project's release. On 3.11.2 and 3.12.3 (whose manifests carry the repository-snapshot
 * advisory) a client that advertises `session.notices` gets one `notice` per new session, a client
 * without the capability none, and the bridge logs the advisory once; on a release without
 * advisories (3.14.4) nobody gets a notice and nothing is logged. A release no manifest pins (the
 * simulated 4.0.0, whose manifest the simulator writes itself) has no advisory source: it runs
 * as a release without advisories.
 */
import { describe, expect, it } from "vitest";
import { simFlavour } from "../../../fixtures/sim-releases.js";
import { e2e } from "../../support/e2e-harness.js";
import { pinnedManifests } from "../../support/verified-releases.js";

const t = e2e();
const isNotice = (u: any): boolean => u.sessionUpdate === "notice";
/** the advisories of this release's pinned manifest; none for a release no manifest pins */
const pinned = pinnedManifests().find((m) => m.manifest.artifact.appVersion === simFlavour().release);
const pinnedAdvisories = pinned?.manifest.advisories ?? [];

describe.runIf(pinnedAdvisories.length === 0)("e2e: a release without advisories", () => {
  it("sends no notice, even to a notice-capable client, and logs no advisory", async () => {
    expect(t.sim().manifest.advisories ?? []).toEqual([]);
    const client = await t.start();
    await client.initialize({ session: { notices: {} } });
    const { sessionId } = await client.newSession(await t.workspace());
    await client.prompt(sessionId, "hello");
    expect(client.updates(sessionId).filter(isNotice)).toEqual([]);
    client.expectValid();
    await client.close();
    expect(client.stderr).not.toMatch(/release advisory:/);
  });
});

describe.runIf(pinnedAdvisories.length > 0)("e2e: release advisories as session notices", () => {
  it("the simulated release carries its pinned manifest's advisory", () => {
    expect(t.sim().manifest.advisories?.map((a) => [a.id, a.severity, a.fixedIn])).toEqual([
      ["repo-snapshot-uploader", "warning", "3.14.0"],
    ]);
  });

  it("a notice-capable client gets one notice per session; the log states the advisory once", async () => {
    const client = await t.start();
    await client.initialize({ session: { notices: {} } });
    const ws = await t.workspace();
    const first = await client.newSession(ws);
    const second = await client.newSession(ws);
    // a turn after each answer: whatever followed the session/new answer has been written by then
    for (const { sessionId } of [first, second]) await client.prompt(sessionId, "hello");
    await client.prompt(first.sessionId, "again");
    for (const { sessionId } of [first, second]) {
      const notices = client.updates(sessionId).filter(isNotice);
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatchObject({
        severity: "warning",
        title: expect.stringMatching(/repository-snapshot uploader/),
        description: expect.stringMatching(
          /^What you can do: Update ZCode to 3\.14\.0 or later.* Fixed in ZCode 3\.14\.0\. Source: https:\/\//,
        ),
        _meta: { "zcode-acp/advisory": "repo-snapshot-uploader" },
      });
    }
    // the notice follows the session/new answer
    const answered = client.indexOf((l) => l.message.result?.sessionId === first.sessionId);
    const noticed = client.indexOf((l) => l.message.params?.sessionId === first.sessionId && isNotice(l.message.params.update));
    expect(noticed).toBeGreaterThan(answered);
    client.expectValid();
    await client.close();
    const logged = client.stderr.split("\n").filter((line) => line.includes("release advisory:"));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0]!)).toMatchObject({
      level: "warn",
      fields: { release: t.sim().release, id: "repo-snapshot-uploader", fixedIn: "3.14.0" },
    });
  });

  it("a client without session.notices gets none (the advisory is still logged)", async () => {
    const client = await t.start();
    await client.initialize({});
    const { sessionId } = await client.newSession(await t.workspace());
    await client.prompt(sessionId, "hello");
    expect(client.updates(sessionId).filter(isNotice)).toEqual([]);
    client.expectValid();
    await client.close();
    expect(client.stderr).toMatch(/release advisory:/);
  });

  it("the pinned manifest of this release carries the same advisory", () => {
    expect(t.sim().manifest.advisories).toEqual(pinnedAdvisories);
  });
});
