import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { until } from "../../../support/until.js";
import { BASH_REQUEST, makeContext, settle, TURNS } from "./support/context.js";

// grace 0: a withdrawn client request is cancelled at once (the cancel grace has its own tests, cancel-grace.test.ts)
const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: 0 });

describe("binding, withdrawal and exactly-once", () => {
  it("deduplicates re-announcements: one client request, one host answer", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    b.handlePermission({ ...BASH_REQUEST }, t.ctx);
    expect(b.pendingCount()).toBe(1);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    b.handlePermission(BASH_REQUEST, t.ctx); // re-announced after the answer
    await settle();
    expect(t.client.permissions).toHaveLength(1);
    expect(t.host.permissionAnswers()).toHaveLength(1);
  });

  it("treats the same requestId from a new host incarnation as a new request", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.host.exit();
    t.host.incarnation = 2;
    const t2 = makeContext({ host: t.host, client: t.client });
    b.handlePermission(BASH_REQUEST, t2.ctx);
    await until(() => t.client.permissions.length === 2, TURNS);
    expect(t.client.permissions[0]!.signal.aborted).toBe(true);
  });

  it("withdrawAll(cancel) aborts the client request and answers deny once; a late client answer is dropped", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    const asked = t.client.permissions[0]!;
    await b.withdrawAll("ses_1", "cancel");
    await b.withdrawAll("ses_1", "close");
    expect(asked.signal.aborted).toBe(true);
    asked.settled = false; // a client that answers anyway, after $/cancel_request
    asked.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
    t.turn.abort();
    await settle();
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "deny", workspacePath: "/w" }]);
  });

  it.each(["cancel", "close", "turn-end", "disconnect"] as const)(
    "withdrawAll(%s) answers every pending one exactly once",
    async (reason) => {
      const t = makeContext();
      const b = broker();
      b.handlePermission(BASH_REQUEST, t.ctx);
      b.handlePermission({ ...BASH_REQUEST, requestId: "perm_8", toolCallId: "call_43" }, t.ctx);
      await until(() => t.client.permissions.length === 2, TURNS);
      const other = makeContext({ host: t.host, sessionId: "ses_other" });
      b.handlePermission({ ...BASH_REQUEST, requestId: "perm_9", sessionId: "ses_other" }, other.ctx);
      await until(() => other.client.permissions.length === 1, TURNS);
      expect(b.pendingCount()).toBe(3);
      await b.withdrawAll("ses_1", reason);
      expect(b.pendingCount("ses_1")).toBe(0);
      expect(b.pendingCount("ses_other")).toBe(1);
      expect(
        t.host
          .permissionAnswers()
          .map((a) => [a.requestId, a.optionId])
          .sort(),
      ).toEqual([
        ["perm_7", "deny"],
        ["perm_8", "deny"],
      ]);
      expect(other.client.permissions[0]!.signal.aborted).toBe(false);
    },
  );

  it("the turn signal aborting answers deny once and cancels the client request", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.turn.abort();
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    await b.withdrawAll("ses_1", "turn-end");
    await settle();
    expect(t.client.permissions[0]!.signal.aborted).toBe(true);
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "deny", workspacePath: "/w" }]);
  });

  it("a request arriving after the turn ended is denied without asking the client", async () => {
    const t = makeContext();
    t.turn.abort();
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    expect(t.client.permissions).toHaveLength(0);
    expect(t.host.permissionAnswers()[0]!.optionId).toBe("deny");
  });

  it("host exit: nothing is sent to a dead or new host, the client request is aborted", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    await b.withdrawAll("ses_1", "host-exit");
    t.turn.abort();
    await settle();
    expect(t.client.permissions[0]!.signal.aborted).toBe(true);
    expect(t.host.records).toEqual([]);
    expect(b.pendingCount()).toBe(0);
  });

  it("host exit seen through host.onExit, even before the engine reacts", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.host.exit();
    t.turn.abort();
    await b.withdrawAll("ses_1", "cancel");
    await settle();
    expect(t.host.records).toEqual([]);
    expect(t.client.permissions[0]!.signal.aborted).toBe(true);
  });

  it("an answer arriving after the host restarted is dropped, never forwarded to the new host", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.host.incarnation = 2; // restarted; the exit notice was missed
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await settle();
    expect(t.host.records).toEqual([]);
    expect(b.pendingCount()).toBe(0);
  });

  it("a request from an older incarnation is ignored", async () => {
    const t = makeContext();
    t.host.incarnation = 3;
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await settle();
    expect(t.client.permissions).toHaveLength(0);
    expect(t.host.records).toEqual([]);
  });

  it("a host that refuses the answer fails the turn (it would otherwise wait forever)", async () => {
    const t = makeContext();
    t.host.operateResult = () => Promise.reject(new Error("channel closed"));
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await until(() => t.failures.length === 1, TURNS);
    expect(t.failures[0]!.code).toBe("HOST_CALL_FAILED");
  });

  it("leaks nothing over 300 permission / cancel cycles", async () => {
    const t = makeContext();
    const b = broker();
    for (let i = 0; i < 300; i += 1) {
      b.handlePermission({ ...BASH_REQUEST, requestId: `perm_${i}` }, t.ctx);
      await until(() => t.client.permissions.length === i + 1, TURNS);
      if (i % 3 === 0) await b.withdrawAll("ses_1", "cancel");
      else if (i % 3 === 1) t.client.permissions[i]!.resolve({ outcome: { outcome: "cancelled" } });
      else t.client.permissions[i]!.resolve({ outcome: { outcome: "selected", optionId: "allow_once" } });
      await until(() => t.host.permissionAnswers().length === i + 1, TURNS);
    }
    await settle();
    expect(b.pendingCount()).toBe(0);
    expect(t.host.exitListeners.size).toBe(0);
    expect(getEventListeners(t.turn.signal, "abort")).toHaveLength(0);
    expect(t.client.permissions.every((p) => p.settled)).toBe(true);
    expect(t.client.permissions.every((p) => getEventListeners(p.signal, "abort").length === 0)).toBe(true);
    const byId = new Map(t.host.permissionAnswers().map((a) => [a.requestId, a.optionId]));
    expect(byId.size).toBe(300);
    expect(byId.get("perm_0")).toBe("deny");
    expect(byId.get("perm_1")).toBe("deny");
    expect(byId.get("perm_2")).toBe("allow_once");
  });
});
