import { describe, expect, it } from "vitest";
import { projectEvent } from "../../../src/runtime/projections.js";

const context = { frameLimitBytes: 256 * 1024, history: { hold: () => undefined } };

describe("bootstrap: a zcode-task-v3 provider header request leaves Electron as its ids and reason only", () => {
  it("copies requestId, sessionId, turnId, providerId and reason; account access, model and workspace stay inside", () => {
    const request = {
      requestId: "hdr_1",
      sessionId: "ses_1",
      turnId: "turn_1",
      workspace: { workspacePath: "/w" },
      providerId: "account:bigmodel-start-plan",
      modelRef: { providerId: "account:bigmodel-start-plan", modelId: "GLM" },
      accountAccess: { type: "zhipu-account", accountType: "bigmodel", mode: "start-plan", entitled: true },
      reason: "model-request",
    };
    expect(projectEvent("provider-headers-request", request, context)).toEqual([
      { requestId: "hdr_1", sessionId: "ses_1", turnId: "turn_1", providerId: "account:bigmodel-start-plan", reason: "model-request" },
    ]);
  });

  it("leaves out an id too long to pass whole (a cut id would name another request) and what is not a string; never throws", () => {
    const long = "x".repeat(513);
    expect(projectEvent("provider-headers-request", { requestId: long, sessionId: 7, reason: long }, context)).toEqual([
      { reason: "x".repeat(512) },
    ]);
    expect(projectEvent("provider-headers-request", null, context)).toEqual([{}]);
  });
});
