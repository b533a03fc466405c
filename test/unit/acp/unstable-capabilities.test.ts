/**
 * The client capabilities SDK 2.4.0's stable `initialize` parser drops (`plan`, `subagents`), read
 * from the raw params (docs/acp.md §2.11): an object advertises; omitted, null or anything else
 * does not. What the stable parser keeps is not this function's business.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { unstableClientCapabilities } from "../../../src/acp/initialize.js";

describe("unstableClientCapabilities", () => {
  it("keeps plan and subagents when each is an object, with its own fields", () => {
    expect(unstableClientCapabilities({ protocolVersion: 1, clientCapabilities: { plan: {}, subagents: { _meta: { x: 1 } } } })).toEqual({
      plan: {},
      subagents: { _meta: { x: 1 } },
    });
  });

  it.each([undefined, null, true, "yes", [], 1])("does not count %j as advertised", (value) => {
    expect(unstableClientCapabilities({ protocolVersion: 1, clientCapabilities: { plan: value, subagents: value } })).toEqual({});
  });

  it.each([undefined, null, "x", [], { protocolVersion: 1 }, { protocolVersion: 1, clientCapabilities: [] }])(
    "has nothing to read in params %j",
    (params) => {
      expect(unstableClientCapabilities(params)).toEqual({});
    },
  );

  it("reads what the stable SDK would have dropped (the reason it exists)", () => {
    const raw = { protocolVersion: 1, clientCapabilities: { plan: {}, session: { compaction: {} } } };
    // the SDK's stable types have no `plan`: a client advertising it is only seen in the raw params
    const stable: acp.ClientCapabilities = { session: { compaction: {} } };
    expect({ ...stable, ...unstableClientCapabilities(raw) }).toEqual(raw.clientCapabilities);
  });
});
