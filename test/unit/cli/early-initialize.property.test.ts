/**
 * The early initialize answer against the SDK path (src/cli/early-initialize.ts): for generated
 * first lines — valid requests and near misses — whenever the early path answers, the SDK
 * connection with our agent app answers that line with exactly the same bytes. Lines the early
 * path declines are the SDK's, so they need no comparison.
 */
import * as acp from "@agentclientprotocol/sdk";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createZcodeAgent } from "../../../src/acp/agent-app.js";
import { PROTOCOL_VERSION } from "../../../src/acp/initialize.js";
import { earlyInitialize, opensSession } from "../../../src/cli/early-initialize.js";
import { silentLogger } from "../../../src/log/logger.js";
import { FakeHost } from "../../support/fake-host.js";
import { StubBroker } from "../../support/stub-broker.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";

const encoder = new TextEncoder();
const line = (value: unknown): Uint8Array => encoder.encode(typeof value === "string" ? value : JSON.stringify(value));

/** The SDK path: our agent app on an SDK ndJsonStream; the first line it writes for `text`. */
async function sdkAnswer(text: string): Promise<string> {
  const agent = createZcodeAgent({
    native: new CurrentLineApi(new FakeHost()),
    logger: silentLogger,
    createBroker: () => new StubBroker(),
    cancelGraceMs: 1000,
    mergeDeltas: true,
    defaultCwd: process.cwd(),
  });
  let written = "";
  let gotLine!: (line: string) => void;
  const first = new Promise<string>((resolve) => (gotLine = resolve));
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      written += new TextDecoder().decode(chunk);
      const nl = written.indexOf("\n");
      if (nl >= 0) gotLine(written.slice(0, nl + 1));
    },
  });
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`${text}\n`));
    },
  });
  const connection = agent.app.connect(acp.ndJsonStream(output, input));
  try {
    return await first;
  } finally {
    connection.close();
    await agent.shutdown();
  }
}

const id = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.string({ maxLength: 12 }),
  fc.constant(null),
  fc.double({ noNaN: true }),
  fc.constant(Number.MAX_SAFE_INTEGER),
);
const version = fc.oneof(fc.integer({ min: -2, max: 70_000 }), fc.constantFrom(1, 0, 65535, 65536, 1.5, "1", null, true));
const capabilities = fc.oneof(
  fc.constant(undefined),
  fc.constant({}),
  fc.constant({ fs: { readTextFile: true, writeTextFile: false }, terminal: true, elicitation: { form: {} } }),
  fc.constant({ fs: "broken" }),
  // terminal auth decides the onboarding auth method (src/acp/onboarding-auth.ts)
  fc.constant({ auth: { terminal: true } }),
  fc.constant({ auth: { terminal: "yes" } }),
  fc.constant({ auth: { terminal: true }, fs: "broken", _meta: 5 }),
  fc.constant({ _meta: { "terminal-auth": true } }),
  fc.constant({ _meta: { "terminal-auth": "true" }, auth: 7 }),
  fc.constant({ auth: { terminal: false, _meta: { x: 1 } }, _meta: { "terminal-auth": true } }),
  fc.constant(null),
  fc.constant(42),
);
const info = fc.oneof(fc.constant(undefined), fc.constant({ name: "Zed", version: "1.0" }), fc.constant({ name: 3 }), fc.constant(null));
const params = fc.oneof(
  fc.record(
    { protocolVersion: version, clientCapabilities: capabilities, clientInfo: info, extra: fc.option(fc.string(), { nil: undefined }) },
    { requiredKeys: [] },
  ),
  fc.constantFrom(null, [], "x", 1),
);
/** mostly well-formed requests with odd params (the early path's cases), some wild envelopes */
const wellFormed = fc.record({
  jsonrpc: fc.constant("2.0"),
  id: fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.string({ maxLength: 12 })),
  method: fc.constant("initialize"),
  params: fc.record(
    { protocolVersion: version, clientCapabilities: capabilities, clientInfo: info, _meta: fc.constantFrom(undefined, {}, "x") },
    { requiredKeys: ["protocolVersion"] },
  ),
});
const wild = fc.record(
  {
    jsonrpc: fc.constantFrom("2.0", "2.0", "1.0"),
    id,
    method: fc.constantFrom("initialize", "initialize", "Initialize", "session/new"),
    params,
    extra: fc.constant(1),
  },
  { requiredKeys: ["jsonrpc", "method"] },
);
const message = fc.oneof({ arbitrary: wellFormed, weight: 3 }, { arbitrary: wild, weight: 1 });
const layout = fc.constantFrom("", " ", "\r", "\ufeff", "  \t");

describe("early initialize", () => {
  it("uses the SDK's protocol version", () => {
    expect(PROTOCOL_VERSION).toBe(acp.PROTOCOL_VERSION);
  });

  it("answers a plain SDK client request with the SDK's bytes", async () => {
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "c", version: "1" } },
    });
    const early = earlyInitialize(line(text));
    expect(early?.id).toBe(0);
    expect(early?.answer).toBe(await sdkAnswer(text));
  });

  it("declines what is not clearly an initialize request", () => {
    const declined = [
      "",
      "   ",
      "not json",
      "[]",
      JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }]),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session/new", params: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: "2.0", method: "initialize", params: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: "2.0", id: null, method: "initialize", params: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "initialize", params: { protocolVersion: 1 } }),
      JSON.stringify({ id: 1, method: "initialize", params: { protocolVersion: 1 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 }, extra: true }),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 65536 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "1" } }),
    ];
    for (const text of declined) expect(earlyInitialize(line(text)), text).toBeUndefined();
    expect(earlyInitialize(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]))).toBeUndefined(); // invalid UTF-8
  });

  it("whenever it answers, the SDK answers the same line with the same bytes", async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(message, layout, layout, async (m, before, after) => {
        const text = `${before}${JSON.stringify(m)}${after}`;
        const early = earlyInitialize(line(text));
        if (!early) return;
        answered += 1;
        expect(early.answer).toBe(await sdkAnswer(text));
      }),
      { numRuns: 300 },
    );
    expect(answered).toBeGreaterThan(50); // the generator does reach the early path
  });
});

describe("session requests seen early", () => {
  const request = (method: string, params: unknown) => line({ jsonrpc: "2.0", id: 1, method, params });
  it("recognises session/new, load and resume with an absolute cwd", () => {
    expect(opensSession(request("session/new", { cwd: "/w", mcpServers: [] }))).toBe(true);
    expect(opensSession(request("session/load", { cwd: "/w", sessionId: "s", mcpServers: [] }))).toBe(true);
    expect(opensSession(request("session/resume", { cwd: "/w", sessionId: "s" }))).toBe(true);
  });
  it("ignores requests that would not start the host", () => {
    expect(opensSession(request("session/new", { cwd: "relative", mcpServers: [] }))).toBe(false);
    expect(opensSession(request("session/new", { cwd: "/w" }))).toBe(false);
    expect(opensSession(request("session/load", { cwd: "/w", mcpServers: [] }))).toBe(false);
    expect(opensSession(request("session/list", { cwd: "/w" }))).toBe(false);
    expect(opensSession(line({ jsonrpc: "2.0", method: "session/new", params: { cwd: "/w", mcpServers: [] } }))).toBe(false);
    expect(opensSession(line("garbage"))).toBe(false);
  });
});
