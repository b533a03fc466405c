/**
 * Which first lines get the ACP v2 agent (src/cli/early-initialize.ts `requestsProtocolV2`,
 * adr/0028): only a well-formed v2 `initialize` (version 2 or newer, a string or integer id, the
 * v2 `info` object). Every other first line stays v1's, as before.
 */
import { describe, expect, it } from "vitest";
import { requestsProtocolV2 } from "../../../src/cli/early-initialize.js";

const encoder = new TextEncoder();
const line = (value: unknown): Uint8Array => encoder.encode(typeof value === "string" ? value : JSON.stringify(value));
const init = (params: unknown, extra: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 0, method: "initialize", params, ...extra });
const INFO = { name: "client", version: "1.0" };

describe("requestsProtocolV2", () => {
  it("a v2 initialize (version 2 or newer, info present, string or integer id) selects v2", () => {
    expect(requestsProtocolV2(line(init({ protocolVersion: 2, info: INFO })))).toBe(true);
    expect(requestsProtocolV2(line(init({ protocolVersion: 3, info: INFO, capabilities: {} })))).toBe(true);
    expect(requestsProtocolV2(line(init({ protocolVersion: 2, info: INFO }, { id: "a" })))).toBe(true);
  });

  it("everything else stays v1", () => {
    const cases: unknown[] = [
      init({ protocolVersion: 1, clientCapabilities: {} }),
      init({ protocolVersion: 1, info: INFO }),
      // a v1-shaped initialize asking for a newer version: v1 answers it with protocol 1, as before
      init({ protocolVersion: 2, clientCapabilities: {}, clientInfo: INFO }),
      init({ protocolVersion: 2, info: { name: "x" } }),
      init({ protocolVersion: 2, info: "x" }),
      init({ protocolVersion: 2.5, info: INFO }),
      init({ protocolVersion: 70000, info: INFO }),
      init({ protocolVersion: "2", info: INFO }),
      init({ protocolVersion: 2, info: INFO }, { id: null }),
      init({ protocolVersion: 2, info: INFO }, { id: 1.5 }),
      init({ protocolVersion: 2, info: INFO }, { jsonrpc: "1.0" }),
      { jsonrpc: "2.0", id: 0, method: "session/new", params: { protocolVersion: 2, info: INFO } },
      { jsonrpc: "2.0", method: "initialize", params: { protocolVersion: 2, info: INFO } },
      "not json",
      "",
    ];
    for (const value of cases) expect(requestsProtocolV2(line(value)), JSON.stringify(value)).toBe(false);
    expect(requestsProtocolV2(new Uint8Array([0xff, 0xfe]))).toBe(false);
  });
});
