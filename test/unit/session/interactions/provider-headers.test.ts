import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/log/logger.js";
import { createInteractionBroker } from "../../../../src/session/interactions/index.js";
import { until } from "../../../support/until.js";
import { makeContext, settle, TURNS } from "./support/context.js";

const REQUEST = {
  requestId: "r",
  sessionId: "ses_1",
  turnId: "turn_1",
  workspace: { workspacePath: "/w" },
  modelRef: { providerId: "builtin:bigmodel-start-plan", modelId: "GLM-5.2" },
  providerId: "builtin:bigmodel-start-plan",
  reason: "model-request",
};

describe("providerRuntimeHeaders.request", () => {
  it("answers headersApplied:false at once, then stops the turn with a clear message; never asks the client", async () => {
    const t = makeContext();
    const b = createInteractionBroker({ logger: silentLogger });
    b.handleProviderHeaders(REQUEST, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.records).toEqual([
      {
        kind: "call",
        name: "agent.respondProviderRuntimeHeaders",
        incarnation: 1,
        params: {
          workspacePath: "/w",
          sessionId: "ses_1",
          requestId: "r",
          response: { headersApplied: false, errorMessage: expect.stringMatching(/captcha/) },
        },
      },
    ]);
    expect(t.failures[0]!.code).toBe("PROVIDER_HEADERS_UNSUPPORTED");
    expect(t.failures[0]!.message).toBe(
      "this account or model needs a captcha that only the ZCode desktop app can show; switch to a coding-plan model or use the app",
    );
    expect(t.client.permissions).toHaveLength(0);
    expect(t.client.elicitations).toHaveLength(0);
    expect(t.updates).toEqual([]);
    expect(b.pendingCount()).toBe(0);
  });

  it("stops the turn without waiting for the host's reply", async () => {
    const t = makeContext();
    t.host.call = async (...args: Parameters<typeof t.host.call>) => {
      t.host.records.push({ kind: "call", name: `${args[0]}.${args[1]}`, params: args[2], incarnation: 1 });
      return new Promise(() => {});
    };
    createInteractionBroker({ logger: silentLogger }).handleProviderHeaders(REQUEST, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.records.map((r) => r.name)).toEqual(["agent.respondProviderRuntimeHeaders"]);
  });

  it("answers a re-announced request once", async () => {
    const t = makeContext();
    const b = createInteractionBroker({ logger: silentLogger });
    b.handleProviderHeaders(REQUEST, t.ctx);
    b.handleProviderHeaders(REQUEST, t.ctx);
    await until(() => t.failures.length >= 1, TURNS);
    b.handleProviderHeaders(REQUEST, t.ctx);
    await settle();
    expect(t.host.records).toHaveLength(1);
    expect(t.failures).toHaveLength(1);
  });

  it("still stops the turn when the host call fails", async () => {
    const t = makeContext();
    t.host.call = () => Promise.reject(new Error("boom"));
    createInteractionBroker({ logger: silentLogger }).handleProviderHeaders(REQUEST, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.failures[0]!.code).toBe("PROVIDER_HEADERS_UNSUPPORTED");
  });

  it("a malformed request with a requestId is still answered headersApplied:false", async () => {
    const t = makeContext();
    createInteractionBroker({ logger: silentLogger }).handleProviderHeaders({ requestId: "r2", reason: 7 }, t.ctx);
    await until(() => t.failures.length === 1, TURNS);
    expect(t.host.records[0]!.params).toMatchObject({ requestId: "r2", response: { headersApplied: false } });
  });
});
