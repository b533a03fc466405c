/** What a running host does not serve is learned once per incarnation (adr/0033). */
import { describe, expect, it } from "vitest";
import { isMethodNotFound, notServedError, ServedSurface } from "../../../src/host/served-surface.js";
import { BridgeError } from "../../../src/util/errors.js";

const notFound = (method: string) => new BridgeError("HOST_CALL_FAILED", `Method not found: ${method}`);

describe("ServedSurface", () => {
  it("knows ZCode's RPC answer to a method its service lacks, and nothing else", () => {
    expect(isMethodNotFound(notFound("sendPrompt"))).toBe(true);
    expect(isMethodNotFound(new BridgeError("HOST_CALL_FAILED", "Session not found: ses_1"))).toBe(false);
    expect(isMethodNotFound(new BridgeError("HOST_TIMEOUT", "Method not found: x"))).toBe(false);
    expect(isMethodNotFound(new Error("Method not found: x"))).toBe(false);
  });

  it("probes a method once: a 'Method not found' answer is learned, any other answer says served, no answer says unknown", async () => {
    const surface = new ServedSurface(1);
    let asked = 0;
    const ask = (error?: BridgeError) => () => {
      asked += 1;
      return error ? Promise.reject(error) : Promise.resolve(null);
    };
    await expect(surface.probe("agent", "sendPrompt", ask(notFound("sendPrompt")))).resolves.toBe("unserved");
    await expect(surface.probe("agent", "sendPrompt", ask())).resolves.toBe("unserved");
    expect(asked).toBe(1);
    expect(surface.why("agent", "sendPrompt")).toMatch(/Method not found/);
    await expect(surface.probe("agent", "stopSubagent", ask(new BridgeError("HOST_CALL_FAILED", "invalid params")))).resolves.toBe(
      "served",
    );
    await expect(surface.probe("agent", "getContextComposition", ask(new BridgeError("HOST_TIMEOUT", "no answer")))).resolves.toBe(
      "unknown",
    );
    expect(surface.why("agent", "getContextComposition")).toBeUndefined();
    expect(Object.keys(surface.learned())).toEqual(["agent.sendPrompt"]);
  });

  it("an event learned from a silent subscription is named in the typed error", () => {
    const surface = new ServedSurface(2);
    surface.learn("agent", "onDynamicSessionEvent", "its subscription gave no first snapshot within 30000 ms");
    const error = notServedError("zcode-agent", "onDynamicSessionEvent", surface.why("agent", "onDynamicSessionEvent")!);
    expect(error.code).toBe("UNSUPPORTED_ZCODE");
    expect(error.message).toContain("does not serve zcode-agent.onDynamicSessionEvent (its subscription gave no first snapshot");
  });
});
