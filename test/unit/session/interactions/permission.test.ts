import { describe, expect, it } from "vitest";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { silentLogger } from "../../../../src/log/logger.js";
import { until } from "../../../support/until.js";
import { BASH_REQUEST, makeContext, settle, TURNS } from "./support/context.js";

// grace 0: a withdrawn client request is cancelled at once (the cancel grace has its own tests, cancel-grace.test.ts)
const broker = () => createInteractionBroker({ logger: silentLogger, clientCancelGraceMs: 0 });

function withOptions(options: unknown[], extra: Record<string, unknown> = {}) {
  return { ...BASH_REQUEST, ...extra, options };
}

describe("permission.request → session/request_permission → respondPermission", () => {
  it("maps the tool call and the native options one to one", async () => {
    const t = makeContext();
    t.known.set("call_42", { title: "npm test", kind: "execute", rawInput: { command: "npm test" } });
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, { ...TURNS, what: "permission request" });
    const params = t.client.permissions[0]!.params;
    expect(params.sessionId).toBe("ses_1");
    expect(params.toolCall).toMatchObject({ toolCallId: "call_42", title: "npm test", kind: "execute", rawInput: { command: "npm test" } });
    expect(params.options).toEqual([
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
      { optionId: "deny", name: "Deny", kind: "reject_once" },
    ]);
    expect(b.pendingCount("ses_1")).toBe(1);
  });

  it("completes the tool call from the request when the engine knows nothing", async () => {
    const t = makeContext();
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.permissions[0]!.params.toolCall).toEqual({
      toolCallId: "call_42",
      title: "Run shell command",
      kind: "execute",
      rawInput: { command: "npm test" },
    });
  });

  it("marks a known tool call pending before asking (so the client has seen it)", async () => {
    const t = makeContext();
    t.known.set("call_42", { title: "npm test", kind: "execute" });
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.order).toEqual(["update:tool_call_update", "permission"]);
    expect(t.updates).toEqual([{ sessionUpdate: "tool_call_update", toolCallId: "call_42", status: "pending" }]);
  });

  it("announces a tool call the engine never showed before asking about it", async () => {
    const t = makeContext();
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.order).toEqual(["update:tool_call", "permission"]);
    expect(t.updates).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "call_42",
        title: "Run shell command",
        kind: "execute",
        status: "pending",
        rawInput: { command: "npm test" },
      },
    ]);
  });

  it.each([
    ["allow_once", "allow_once"],
    ["allow_always", "allow_always"],
    ["deny", "deny"],
  ])("forwards the chosen option %s exactly once", async (chosen, expected) => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: chosen } });
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    await settle();
    expect(t.host.records).toEqual([
      {
        kind: "operate",
        name: "respondPermission",
        sessionId: "ses_1",
        params: { requestId: "perm_7", optionId: expected, workspacePath: "/w" },
        incarnation: 1,
      },
    ]);
    expect(b.pendingCount()).toBe(0);
    expect(t.failures).toEqual([]);
  });

  it("refuses an option id the client made up: a real deny goes to the host", async () => {
    const t = makeContext();
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "allow_everything" } });
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    await settle();
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "deny", workspacePath: "/w" }]);
  });

  it.each([
    [
      "cancelled outcome",
      (a: { resolve: (r: never) => void; reject: (e: unknown) => void }) => a.resolve({ outcome: { outcome: "cancelled" } } as never),
    ],
    ["client error", (a: { resolve: (r: never) => void; reject: (e: unknown) => void }) => a.reject(new Error("client went away"))],
    ["malformed answer", (a: { resolve: (r: never) => void; reject: (e: unknown) => void }) => a.resolve({} as never)],
  ])("answers a real deny on %s", async (_name, answer) => {
    const t = makeContext();
    broker().handlePermission(BASH_REQUEST, t.ctx);
    await until(() => t.client.permissions.length === 1, TURNS);
    answer(t.client.permissions[0]!);
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    await settle();
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "deny", workspacePath: "/w" }]);
    expect(t.failures).toEqual([]);
  });

  it("prefers a one-time deny over an always-deny as the withdrawal answer", async () => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(
      withOptions([
        { optionId: "no-forever", name: "Never", response: { decision: "deny", permissionUpdates: [{ type: "addRules" }] } },
        { optionId: "yes", name: "Yes", response: { decision: "allow" } },
        { optionId: "no", name: "No", response: { decision: "deny" } },
      ]),
      t.ctx,
    );
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.permissions[0]!.params.options.map((o) => o.kind)).toEqual(["reject_always", "allow_once", "reject_once"]);
    await b.withdrawAll("ses_1", "cancel");
    expect(t.host.permissionAnswers()).toEqual([{ requestId: "perm_7", optionId: "no", workspacePath: "/w" }]);
  });

  it("does not offer escalate / modify options and refuses them if named", async () => {
    const t = makeContext();
    broker().handlePermission(
      withOptions([
        { optionId: "esc", name: "Ask admin", response: { decision: "escalate" } },
        { optionId: "mod", name: "Run modified", response: { decision: "modify", modifiedInput: { command: "rm -rf /" } } },
        { optionId: "ok", name: "Allow", response: { decision: "allow" } },
        { optionId: "no", name: "Deny", response: { decision: "deny" } },
      ]),
      t.ctx,
    );
    await until(() => t.client.permissions.length === 1, TURNS);
    expect(t.client.permissions[0]!.params.options.map((o) => o.optionId)).toEqual(["ok", "no"]);
    t.client.permissions[0]!.resolve({ outcome: { outcome: "selected", optionId: "mod" } });
    await until(() => t.host.permissionAnswers().length === 1, TURNS);
    expect(t.host.permissionAnswers()[0]!.optionId).toBe("no");
  });

  it("fails the turn when only escalate/modify options exist (nothing offered, nothing answered)", async () => {
    const t = makeContext();
    broker().handlePermission(withOptions([{ optionId: "esc", name: "Ask admin", response: { decision: "escalate" } }]), t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    await settle();
    expect(t.client.permissions).toHaveLength(0);
    expect(t.host.records).toEqual([]);
    expect(t.failures[0]!.code).toBe("INTERACTION_UNSUPPORTED");
  });

  it.each([
    ["zero options", withOptions([])],
    ["no options field", { ...BASH_REQUEST, options: undefined }],
    [
      "only malformed options",
      withOptions([
        { optionId: "x", name: "X" },
        { name: "no id", response: { decision: "allow" } },
      ]),
    ],
  ])("fails closed on %s", async (_name, request) => {
    const t = makeContext();
    const b = broker();
    b.handlePermission(request, t.ctx);
    await settle();
    expect(t.failures.map((f) => f.code)).toEqual(["NATIVE_PROTOCOL_ERROR"]);
    expect(t.client.permissions).toHaveLength(0);
    expect(t.host.records).toEqual([]);
    expect(b.pendingCount()).toBe(0);
  });

  it("fails closed on duplicate option ids", async () => {
    const t = makeContext();
    broker().handlePermission(
      withOptions([
        { optionId: "same", name: "Allow", response: { decision: "allow" } },
        { optionId: "same", name: "Deny", response: { decision: "deny" } },
      ]),
      t.ctx,
    );
    await settle();
    expect(t.failures.map((f) => f.code)).toEqual(["NATIVE_PROTOCOL_ERROR"]);
    expect(t.host.records).toEqual([]);
  });

  it("fails closed on a malformed request without asking anyone", async () => {
    const t = makeContext();
    broker().handlePermission({ toolName: "Bash", options: BASH_REQUEST.options }, t.ctx);
    broker().handlePermission("nonsense", t.ctx);
    await settle();
    expect(t.failures.map((f) => f.code)).toEqual(["NATIVE_PROTOCOL_ERROR", "NATIVE_PROTOCOL_ERROR"]);
    expect(t.client.permissions).toHaveLength(0);
    expect(t.host.records).toEqual([]);
  });

  describe("a request without any deny option", () => {
    const allowOnly = withOptions([
      { optionId: "allow_once", name: "Allow once", response: { decision: "allow" } },
      { optionId: "allow_always", name: "Always", response: { decision: "allow", permissionUpdates: [{}] } },
    ]);

    it("client cancels → never allow: no host answer, the turn fails", async () => {
      const t = makeContext();
      const b = broker();
      b.handlePermission(allowOnly, t.ctx);
      await until(() => t.client.permissions.length === 1, TURNS);
      t.client.permissions[0]!.resolve({ outcome: { outcome: "cancelled" } });
      await until(() => t.failures.length === 1, TURNS);
      await settle();
      expect(t.host.records).toEqual([]);
      expect(t.failures[0]!.code).toBe("INTERACTION_UNSUPPORTED");
      expect(b.pendingCount()).toBe(0);
    });

    it("turn cancel → no answer and no extra failure (the engine stops generation)", async () => {
      const t = makeContext();
      const b = broker();
      b.handlePermission(allowOnly, t.ctx);
      await until(() => t.client.permissions.length === 1, TURNS);
      await b.withdrawAll("ses_1", "cancel");
      await settle();
      expect(t.client.permissions[0]!.signal.aborted).toBe(true);
      expect(t.host.records).toEqual([]);
      expect(t.failures).toEqual([]);
      expect(b.pendingCount()).toBe(0);
    });
  });
});
