/** The bootstrap's handling of host → main messages (src/runtime/host-messages.js), in isolation. */
import { describe, expect, it } from "vitest";
// plain JS shipped to Electron; tested directly
import { createHostMessageHandler } from "../../../src/runtime/host-messages.js";

function setup() {
  const answers: Array<Record<string, unknown>> = [];
  const events: string[] = [];
  const failures: unknown[] = [];
  const handle = createHostMessageHandler({
    answer: (data: object) => void answers.push(data as Record<string, unknown>),
    onReady: () => void events.push("ready"),
    onStartupFailed: (info: unknown) => void failures.push(info),
  });
  return { handle, answers, events, failures };
}

/** A message whose every property read is recorded; reading anything but the allowed keys is visible. */
function spied(fields: Record<string, unknown>): { message: object; reads: string[] } {
  const reads: string[] = [];
  const message = new Proxy(fields, {
    get(target, key) {
      reads.push(String(key));
      return target[key as string];
    },
    ownKeys(target) {
      reads.push("<ownKeys>");
      return Reflect.ownKeys(target);
    },
  });
  return { message, reads };
}

describe("host messages", () => {
  it("refuses a browser request at once, reading nothing but type and requestId", () => {
    const h = setup();
    const { message, reads } = spied({
      type: "browser-execute-request",
      requestId: "b-1",
      sessionId: "ses_secret",
      workspacePath: "/secret",
      command: { method: "evaluate", expression: "document.cookie" },
    });
    h.handle(message);
    expect(h.answers).toEqual([
      {
        type: "browser-execute-result",
        requestId: "b-1",
        result: { ok: false, elapsedMs: 0, error: { code: "backend_unavailable", message: expect.any(String), sideEffect: "none" } },
      },
    ]);
    expect(new Set(reads)).toEqual(new Set(["type", "requestId"]));
    expect(JSON.stringify(h.answers)).not.toMatch(/secret|cookie|evaluate/);
  });

  it("refuses local-media and feedback requests with the contract's shapes", () => {
    const h = setup();
    h.handle({ type: "local-media-preview-path-authorize-request", requestId: "m-1", path: "/w/a.png" });
    h.handle({ type: "feedback-log-archive-request", requestId: "f-1", sourceDir: "/w/logs" });
    expect(h.answers).toEqual([
      { type: "local-media-preview-path-authorize-result", requestId: "m-1", ok: false, error: expect.any(String) },
      { type: "feedback-log-archive-result", requestId: "f-1", ok: false, error: expect.any(String) },
    ]);
  });

  it.each([undefined, "", 42, null, { id: "x" }])("ignores a reverse request whose requestId is %j", (requestId) => {
    const h = setup();
    for (const type of ["browser-execute-request", "local-media-preview-path-authorize-request", "feedback-log-archive-request"]) {
      h.handle({ type, requestId, command: { method: "getState" } });
    }
    expect(h.answers).toEqual([]);
  });

  it("reports ready once, from database-startup-state", () => {
    const h = setup();
    h.handle({ type: "database-startup-state", state: { phase: "preparing_host_storage" } });
    expect(h.events).toEqual([]);
    h.handle({ type: "database-startup-state", state: { phase: "ready" } });
    h.handle({ type: "database-startup-state", state: { phase: "ready" } });
    h.handle({ type: "database-startup-state", state: { phase: "failed" } });
    expect(h.events).toEqual(["ready"]);
    expect(h.failures).toEqual([]);
  });

  it("reports a failed start-up with its phase and code", () => {
    const h = setup();
    h.handle({
      type: "database-startup-state",
      state: { phase: "failed", failedPhase: "preparing_session_storage", errorCode: "migration_failed" },
    });
    expect(h.failures).toEqual([{ failedPhase: "preparing_session_storage", errorCode: "migration_failed" }]);
    expect(h.events).toEqual([]);
  });

  it("ignores logs, telemetry, unknown types and non-objects without answering", () => {
    const h = setup();
    for (const message of [
      { type: "log", level: "info", source: "host", message: "x" },
      { type: "network-telemetry-batch", observations: [] },
      { type: "off-peak-scheduler-wake-request" },
      { type: "something-new", requestId: "r" },
      null,
      "text",
      42,
    ]) {
      h.handle(message);
    }
    expect(h.answers).toEqual([]);
    expect(h.events).toEqual([]);
  });
});
