import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ChannelConnection, type ChannelCloseInfo, type ChannelConnectionOptions } from "../../../src/channel/connection.js";
import { silentLogger } from "../../../src/log/logger.js";
import { BridgeError } from "../../../src/util/errors.js";
import { until } from "../../support/until.js";

/** this file's bound on a wait for the channel */
const WAIT = { timeoutMs: 2000 };

/** A channel wired to two in-memory pipes: `peer.send` writes what the bootstrap would write. */
function harness(overrides: Partial<ChannelConnectionOptions> = {}) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: unknown[] = [];
  let partial = "";
  output.on("data", (chunk: Buffer) => {
    partial += chunk.toString("utf8");
    let nl: number;
    while ((nl = partial.indexOf("\n")) !== -1) {
      written.push(JSON.parse(partial.slice(0, nl)));
      partial = partial.slice(nl + 1);
    }
  });
  const closes: ChannelCloseInfo[] = [];
  const notifications: Array<[string, unknown]> = [];
  const channel = new ChannelConnection({
    input,
    output,
    logger: silentLogger,
    onClose: (info) => closes.push(info),
    onNotification: (method, params) => notifications.push([method, params]),
    ...overrides,
  });
  const send = (value: unknown): void => {
    input.write(typeof value === "string" ? value : `${JSON.stringify(value)}\n`);
  };
  const nextWritten = async (count: number): Promise<unknown[]> => {
    await until(() => written.length >= count, WAIT);
    return written.slice(0, count);
  };
  return { channel, input, output, written, nextWritten, send, closes, notifications };
}

async function rejection(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof BridgeError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

const T = { timeoutMs: 5000, label: "test.call" };

describe("ChannelConnection", () => {
  it("correlates responses by id, in any order", async () => {
    const h = harness();
    const a = h.channel.request("__call", { n: 1 }, T);
    const b = h.channel.request("__call", { n: 2 }, T);
    const frames = (await h.nextWritten(2)) as Array<{ id: number; method: string; params: unknown }>;
    expect(frames.map((f) => [f.id, f.method, f.params])).toEqual([
      [1, "__call", { n: 1 }],
      [2, "__call", { n: 2 }],
    ]);
    h.send({ id: 2, result: "second" });
    h.send({ id: 1, result: null });
    await expect(a).resolves.toBeNull();
    await expect(b).resolves.toBe("second");
    expect(h.channel.pendingRequests).toBe(0);
  });

  it("turns error responses into typed errors and keeps the channel open", async () => {
    const h = harness();
    const refused = h.channel.request("__call", {}, T);
    const failed = h.channel.request("__call", {}, T);
    h.send({ id: 1, error: { code: "METHOD_NOT_ALLOWED", message: "not allowlisted" } });
    h.send({ id: 2, error: { code: "SOMETHING_ELSE", message: "boom", data: { name: "Error" } } });
    const e1 = await rejection(refused);
    expect([e1.code, e1.message]).toEqual(["METHOD_NOT_ALLOWED", "not allowlisted"]);
    const e2 = await rejection(failed);
    expect(e2.code).toBe("HOST_CALL_FAILED");
    expect(e2.details).toEqual({ name: "Error", remoteCode: "SOMETHING_ELSE" });
    expect(h.channel.closed).toBe(false);
  });

  it("times out one request, ignores its late response and keeps working", async () => {
    const h = harness();
    const slow = h.channel.request("__call", {}, { timeoutMs: 30, label: "agent.slow" });
    const error = await rejection(slow);
    expect(error.code).toBe("HOST_TIMEOUT");
    expect(error.message).toContain("agent.slow");
    h.send({ id: 1, result: "too late" });
    const next = h.channel.request("__call", {}, T);
    h.send({ id: 2, result: "ok" });
    await expect(next).resolves.toBe("ok");
    expect(h.channel.closed).toBe(false);
    expect(h.closes).toEqual([]);
  });

  it("fails closed on a response for an id that was never issued", async () => {
    const h = harness();
    const pending = h.channel.request("__call", {}, T);
    const ended: Array<BridgeError | null> = [];
    h.channel.openRoute({ onEvent: () => undefined, onEnd: (e) => ended.push(e) });
    h.send({ id: 99, result: {} });
    const error = await rejection(pending);
    expect(error.code).toBe("CHANNEL_PROTOCOL");
    expect(ended).toEqual([error]);
    expect(h.closes).toHaveLength(1);
    expect(h.closes[0]?.byOwner).toBe(false);
    expect(h.closes[0]?.error).toBe(error);
    expect(h.input.destroyed).toBe(true);
    // later requests are refused with the same error
    expect((await rejection(h.channel.request("__call", {}, T))).code).toBe("CHANNEL_PROTOCOL");
  });

  it.each([
    ["malformed JSON", "{oops}\n", "CHANNEL_PROTOCOL"],
    ["a JSON array", "[1,2]\n", "CHANNEL_PROTOCOL"],
    ["an unknown notification", '{"method":"surprise","params":{}}\n', "CHANNEL_PROTOCOL"],
    ["a result with extra keys", '{"id":1,"result":1,"jsonrpc":"2.0"}\n', "CHANNEL_PROTOCOL"],
    ["a malformed error", '{"id":1,"error":"nope"}\n', "CHANNEL_PROTOCOL"],
    ["an id that is not a positive integer", '{"id":"1","result":1}\n', "CHANNEL_PROTOCOL"],
    ["an event without params", '{"method":"event"}\n', "CHANNEL_PROTOCOL"],
  ])("fails closed on %s", async (_name, line, code) => {
    const h = harness();
    const pending = h.channel.request("__call", {}, T);
    h.send(line);
    expect((await rejection(pending)).code).toBe(code);
    expect(h.closes.map((c) => c.error.code)).toEqual([code]);
  });

  it("fails closed on an inbound frame over the limit", async () => {
    const h = harness({ frameLimitBytes: 256 });
    const pending = h.channel.request("__call", {}, T);
    h.send({ id: 1, result: "z".repeat(300) });
    expect((await rejection(pending)).code).toBe("FRAME_TOO_LARGE");
    expect(h.closes.map((c) => c.error.code)).toEqual(["FRAME_TOO_LARGE"]);
  });

  it("refuses an outbound frame over the limit without sending anything or closing", async () => {
    const h = harness({ frameLimitBytes: 256 });
    const error = await rejection(h.channel.request("__call", { big: "q".repeat(300) }, T));
    expect(error.code).toBe("FRAME_TOO_LARGE");
    const ok = h.channel.request("__call", { small: true }, T);
    const [frame] = (await h.nextWritten(1)) as Array<{ id: number }>;
    expect(frame?.id).toBe(1); // the refused frame used no id
    h.send({ id: 1, result: true });
    await expect(ok).resolves.toBe(true);
  });

  it("routes events by subscription id, ends routes, ignores late events, refuses unknown ones", async () => {
    const h = harness();
    const a: unknown[] = [];
    const b: unknown[] = [];
    const endsA: Array<BridgeError | null> = [];
    const endsB: Array<BridgeError | null> = [];
    const idA = h.channel.openRoute({ onEvent: (e) => void a.push(e), onEnd: (e) => endsA.push(e) });
    const idB = h.channel.openRoute({ onEvent: (e) => void b.push(e), onEnd: (e) => endsB.push(e) });
    expect([idA, idB]).toEqual(["s1", "s2"]);
    h.send({ method: "event", params: { subscriptionId: idB, event: { n: 1 } } });
    h.send({ method: "event", params: { subscriptionId: idA, event: { n: 2 } } });
    h.send({ method: "subscription-end", params: { subscriptionId: idA, error: { code: "FRAME_TOO_LARGE", message: "event too large" } } });
    h.send({ method: "event", params: { subscriptionId: idA, event: { n: 3 } } }); // late: ignored
    await until(() => endsA.length === 1 && b.length === 1, WAIT);
    expect(a).toEqual([{ n: 2 }]);
    expect(b).toEqual([{ n: 1 }]);
    expect(endsA[0]?.code).toBe("FRAME_TOO_LARGE");
    expect(h.channel.closeRoute(idB, null)).toBe(true);
    expect(h.channel.closeRoute(idB, null)).toBe(false);
    expect(endsB).toEqual([null]);
    expect(h.channel.closed).toBe(false);
    h.send({ method: "event", params: { subscriptionId: "s7", event: {} } });
    await until(() => h.channel.closed, WAIT);
    expect(h.closes[0]?.error.code).toBe("CHANNEL_PROTOCOL");
  });

  it("hands owner notifications to the owner", async () => {
    const h = harness();
    h.send({ method: "ready", params: { phase: "ready" } });
    h.send({ method: "host-exit", params: { reason: "worker-exit", exitCode: 3 } });
    await until(() => h.notifications.length === 2, WAIT);
    expect(h.notifications).toEqual([
      ["ready", { phase: "ready" }],
      ["host-exit", { reason: "worker-exit", exitCode: 3 }],
    ]);
  });

  it("rejects pending requests and ends routes with the owner's error when the peer ends", async () => {
    const h = harness({ peerEndError: () => new BridgeError("HOST_EXITED", "gone") });
    const pending = h.channel.request("__call", {}, T);
    const ends: Array<BridgeError | null> = [];
    h.channel.openRoute({ onEvent: () => undefined, onEnd: (e) => ends.push(e) });
    h.input.end();
    const error = await rejection(pending);
    expect(error.code).toBe("HOST_EXITED");
    expect(ends).toEqual([error]);
    expect(h.closes).toEqual([{ error, byOwner: false }]);
  });

  it("fails closed when the peer ends inside a frame", async () => {
    const h = harness();
    const pending = h.channel.request("__call", {}, T);
    h.input.end('{"id":1,');
    expect((await rejection(pending)).code).toBe("CHANNEL_PROTOCOL");
  });

  it("closes on the owner's request: pending fail with the given error, output ends", async () => {
    const h = harness();
    const pending = h.channel.request("__call", {}, T);
    let outputEnded = false;
    h.output.on("end", () => (outputEnded = true));
    h.channel.close(new BridgeError("HOST_EXITED", "stopped"));
    expect((await rejection(pending)).code).toBe("HOST_EXITED");
    await until(() => outputEnded, WAIT);
    expect(h.closes.map((c) => [c.error.code, c.byOwner])).toEqual([["HOST_EXITED", true]]);
  });

  it("pauses reading while event consumers are behind and resumes when they catch up", async () => {
    const h = harness({ maxPendingDeliveries: 4 });
    const releases: Array<() => void> = [];
    const seen: unknown[] = [];
    const id = h.channel.openRoute({
      onEvent: (e) =>
        new Promise<void>((resolve) => {
          seen.push(e);
          releases.push(resolve);
        }),
      onEnd: () => undefined,
    });
    for (let n = 0; n < 4; n += 1) h.send({ method: "event", params: { subscriptionId: id, event: n } });
    await until(() => h.channel.readingPaused, WAIT);
    expect(h.input.isPaused()).toBe(true);
    // more events pile up in the pipe, not in the channel
    for (let n = 4; n < 10; n += 1) h.send({ method: "event", params: { subscriptionId: id, event: n } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([0, 1, 2, 3]);
    // release whatever is pending until everything arrived (reading pauses again at 4 unsettled)
    await until(() => {
      for (const release of releases.splice(0)) release();
      return seen.length === 10;
    }, WAIT);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("stops handling frames in the middle of a chunk when consumers fall behind", async () => {
    const h = harness({ maxPendingDeliveries: 3 });
    const releases: Array<() => void> = [];
    const seen: unknown[] = [];
    const id = h.channel.openRoute({
      onEvent: (e) => new Promise<void>((resolve) => void (seen.push(e), releases.push(resolve))),
      onEnd: () => undefined,
    });
    // ten events and then the peer's end, all in ONE chunk
    h.input.end(
      Array.from({ length: 10 }, (_, n) => `${JSON.stringify({ method: "event", params: { subscriptionId: id, event: n } })}\n`).join(""),
    );
    await until(() => h.channel.readingPaused, WAIT);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([0, 1, 2]);
    expect(h.channel.closed).toBe(false); // the end waits behind the held-back frames
    await until(() => {
      for (const release of releases.splice(0)) release();
      return h.channel.closed;
    }, WAIT);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(h.closes.map((c) => c.error.code)).toEqual(["CHANNEL_CLOSED"]);
  });

  it("refuses new requests when the peer does not read (bounded write buffer)", async () => {
    const input = new PassThrough();
    const stuck = new Writable({ highWaterMark: 16, write: () => undefined });
    const channel = new ChannelConnection({ input, output: stuck, logger: silentLogger, maxWriteBufferBytes: 64 });
    const first = channel.request("__call", { pad: "x".repeat(100) }, T);
    const error = await rejection(channel.request("__call", {}, T));
    expect(error.code).toBe("CHANNEL_OVERFLOW");
    channel.fail(new BridgeError("CHANNEL_CLOSED", "test over"));
    expect((await rejection(first)).code).toBe("CHANNEL_CLOSED");
  });
});
