import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { createSimulatedInstall } from "../../fixtures/sim-install.js";
import { until } from "../support/until.js";
import { loadRpcModule, waitUntil, type Any, type RpcModule } from "./support/host-harness.js";

let rpc: RpcModule;
const ports: MessagePort[] = [];
beforeAll(async () => {
  const install = await createSimulatedInstall({ release: "3.11.2" });
  rpc = await loadRpcModule(install);
  await install.cleanup();
});
afterAll(() => {
  for (const port of ports) port.close();
});

function channel(): { port1: MessagePort; port2: MessagePort } {
  const pair = new MessageChannel();
  ports.push(pair.port1, pair.port2);
  return pair;
}

/** Frames arriving raw on a port, decoded. */
function rawFrames(port: MessagePort): { frames: Any[]; wait(n: number, what?: string): Promise<Any[]> } {
  const frames: Any[] = [];
  const wakers = new Set<() => void>();
  port.on("message", (data: unknown) => {
    frames.push(data instanceof Uint8Array ? rpc.decodeMessage(data) : { other: data });
    for (const w of [...wakers]) w();
  });
  return {
    frames,
    wait: (n, what = `${n} frames`) =>
      waitUntil(
        () => (frames.length >= n ? frames : undefined),
        (w) => {
          wakers.add(w);
          return () => wakers.delete(w);
        },
        3000,
        what,
      ),
  };
}

function serverWith(port: MessagePort, service: Any, options: Any = {}): Any {
  const server = new rpc.ChannelServer(new rpc.MessagePortProtocol(port), "ctx-test", options);
  server.registerChannel("svc", rpc.ProxyChannel.fromService(service));
  return server;
}

function clientOn(port: MessagePort): { client: Any; svc: Any } {
  const client = new rpc.ChannelClient(new rpc.MessagePortProtocol(port));
  return { client, svc: rpc.ProxyChannel.toService(client.getChannel("svc")) };
}

describe("client (i) semantics", () => {
  it("buffers calls and listens until Initialize, then sends them in order with shared ids from 0", async () => {
    const { port1, port2 } = channel();
    const raw = rawFrames(port2);
    const { svc } = clientOn(port1);
    const first = svc.first({ a: 1 });
    const subscription = svc.onDynamicThing({ t: 1 })(() => {});
    const second = svc.second({ b: 2 });
    port1.postMessage("marker"); // travels after anything the client sent so far
    await raw.wait(1, "the marker");
    expect(raw.frames).toEqual([{ other: "marker" }]);
    port2.postMessage(rpc.encodeMessage([200], undefined));
    const frames = await raw.wait(4, "the buffered frames");
    expect(frames.slice(1)).toEqual([
      { header: [100, 0, "svc", "first"], body: [{ a: 1 }] },
      { header: [102, 1, "svc", "onDynamicThing"], body: { t: 1 } },
      { header: [100, 2, "svc", "second"], body: [{ b: 2 }] },
    ]);
    port2.postMessage(rpc.encodeMessage([201, 2], "two"));
    port2.postMessage(rpc.encodeMessage([201, 0], "one"));
    await expect(second).resolves.toBe("two");
    await expect(first).resolves.toBe("one");
    subscription.dispose();
    expect((await raw.wait(5))[4]).toEqual({ header: [103, 1], body: undefined });
  });

  it("listens lazily: 102 on the first listener, 103 when the last one is removed", async () => {
    const { port1, port2 } = channel();
    const raw = rawFrames(port2);
    port2.postMessage(rpc.encodeMessage([200], undefined));
    const { client, svc } = clientOn(port1);
    await client.whenInitialized();
    const event = svc.onDynamicSessionEvent({ sessionId: "s" });
    const received: Any[] = [];
    const a = event((e: Any) => received.push(["a", e]));
    const b = event((e: Any) => received.push(["b", e]));
    port1.postMessage("marker");
    await raw.wait(2);
    expect(raw.frames).toEqual([{ header: [102, 0, "svc", "onDynamicSessionEvent"], body: { sessionId: "s" } }, { other: "marker" }]);
    port2.postMessage(rpc.encodeMessage([204, 0], { n: 1 }));
    await until(() => received.length === 2, { timeoutMs: 3000, intervalMs: 5, what: "the event on both listeners" });
    expect(received).toEqual([
      ["a", { n: 1 }],
      ["b", { n: 1 }],
    ]);
    a.dispose();
    port1.postMessage("marker-2");
    await raw.wait(3);
    expect(raw.frames[2]).toEqual({ other: "marker-2" }); // still one listener: no 103 yet
    b.dispose();
    expect((await raw.wait(4))[3]).toEqual({ header: [103, 0], body: undefined });
  });

  it("rejects every pending call when the port closes, and later calls at once", async () => {
    const { port1, port2 } = channel();
    port2.postMessage(rpc.encodeMessage([200], undefined));
    const { client, svc } = clientOn(port1);
    await client.whenInitialized();
    const pending = svc.never({});
    port2.close();
    await expect(pending).rejects.toMatchObject({ name: "ConnectionClosed" });
    await expect(svc.later({})).rejects.toMatchObject({ name: "ConnectionClosed" });
  });

  it("the proxy is not thenable and maps on* / onDynamic* to listens", async () => {
    const calls: Any[] = [];
    const fake = {
      call: (m: string, a: unknown) => {
        calls.push(["call", m, a]);
        return Promise.resolve();
      },
      listen: (e: string, a?: unknown) => {
        calls.push(["listen", e, a]);
        return () => ({ dispose() {} });
      },
    };
    const proxy = rpc.ProxyChannel.toService(fake);
    expect(proxy.then).toBeUndefined();
    await proxy.doThing({ x: 1 }, 2);
    // reading the property is the point: the proxy must not turn an event getter into a call
    void proxy.onDidChange;
    proxy.onDynamicSessionEvent({ s: 1 });
    expect(calls).toEqual([
      ["call", "doThing", [{ x: 1 }, 2]],
      ["listen", "onDidChange", undefined],
      ["listen", "onDynamicSessionEvent", { s: 1 }],
    ]);
  });
});

describe("server (ChannelServer + fromService) semantics", () => {
  it("sends Initialize on construction and answers calls with argument arrays", async () => {
    const { port1, port2 } = channel();
    const raw = rawFrames(port1);
    serverWith(port2, {
      async add(p: Any, q: Any) {
        return p.a + q;
      },
    });
    port1.postMessage(rpc.encodeMessage([100, 0, "svc", "add"], [{ a: 2 }, 3]));
    const frames = await raw.wait(2);
    expect(frames[0]).toEqual({ header: [200], body: undefined });
    expect(frames[1]).toEqual({ header: [201, 0], body: 5 });
  });

  it("times out a call on an unknown channel after 1000 ms; a parked listen never fires", async () => {
    const { port1, port2 } = channel();
    new rpc.ChannelServer(new rpc.MessagePortProtocol(port2), "ctx");
    const { client } = clientOn(port1);
    const fired: Any[] = [];
    client.getChannel("ghost").listen("onDynamicX", {})((e: Any) => fired.push(e));
    const started = Date.now();
    await expect(client.getChannel("ghost").call("m", [])).rejects.toMatchObject({
      name: "Unknown channel",
      message: "Channel name 'ghost' timed out after 1000ms",
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fired).toEqual([]);
  });

  it("replays parked requests when the channel is registered before the timeout", async () => {
    const { port1, port2 } = channel();
    const server = new rpc.ChannelServer(new rpc.MessagePortProtocol(port2), "ctx");
    const { svc } = clientOn(port1);
    const answer = svc.ping({});
    setTimeout(
      () =>
        server.registerChannel(
          "svc",
          rpc.ProxyChannel.fromService({
            async ping() {
              return "pong";
            },
          }),
        ),
      200,
    );
    await expect(answer).resolves.toBe("pong");
  });

  it("rejects unknown methods with 'Method not found:' (202)", async () => {
    const { port1, port2 } = channel();
    serverWith(port2, {
      async known() {
        return 1;
      },
    });
    const { svc } = clientOn(port1);
    await expect(svc.unknownThing({})).rejects.toThrow(/^Method not found: unknownThing$/);
    await expect(svc.toString({})).rejects.toThrow(/Method not found/);
  });

  it("turns a thrown Error into 202 (message, name, stack lines, code, data) and a non-Error into 203", async () => {
    const { port1, port2 } = channel();
    const raw = rawFrames(port1);
    serverWith(port2, {
      async fails() {
        const e: Any = new TypeError("bad thing");
        e.code = 1308;
        e.data = { why: "busy" };
        throw e;
      },
      async throwsValue() {
        // a host method may throw a non-Error; the codec must carry it
        // eslint-disable-next-line @typescript-eslint/only-throw-error
        throw { reason: "plain object" };
      },
    });
    const { svc } = clientOn(port1);
    const error: Any = await svc.fails({}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "TypeError", message: "bad thing", code: 1308, data: { why: "busy" } });
    expect(error.stack).toContain("bad thing");
    await expect(svc.throwsValue({})).rejects.toEqual({ reason: "plain object" });
    const errorFrame = raw.frames.find((f) => f.header?.[0] === 202);
    expect(errorFrame.header).toEqual([202, 0]);
    expect(errorFrame.body).toMatchObject({ message: "bad thing", name: "TypeError", code: 1308, data: { why: "busy" } });
    expect(Array.isArray(errorFrame.body.stack) && errorFrame.body.stack.every((l: unknown) => typeof l === "string")).toBe(true);
    expect(raw.frames.find((f) => f.header?.[0] === 203)).toEqual({ header: [203, 1], body: { reason: "plain object" } });
  });

  it("cancels a call with 101: the server token fires, the client rejects and ignores the late reply", async () => {
    const { port1, port2 } = channel();
    let cancelled = false;
    let arrived = false;
    let release: () => void = () => {};
    const observer = {
      cancels: [] as Any[],
      onCancel(info: Any) {
        observer.cancels.push(info.id);
      },
    };
    serverWith(
      port2,
      {
        slow(_p: Any, token: Any) {
          token.onCancellationRequested(() => {
            cancelled = true;
          });
          arrived = true;
          return new Promise((resolve) => {
            release = () => resolve("late");
          });
        },
      },
      { observer },
    );
    const { client } = clientOn(port1);
    const controller = new AbortController();
    const pending = client.getChannel("svc").call("slow", [{}], controller.signal);
    await client.whenInitialized();
    await until(() => arrived, { timeoutMs: 3000, intervalMs: 5, what: "the call to arrive" });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "Canceled" });
    await until(() => cancelled, { timeoutMs: 3000, intervalMs: 5, what: "the server-side cancellation" });
    expect(observer.cancels).toEqual([0]);
    release();
  });

  it("disposes an event subscription on 103 and buffers static events for the first subscriber", async () => {
    const { port1, port2 } = channel();
    let disposed = 0;
    const staticEmitter = new rpc.Emitter();
    const service = {
      onDidPing: staticEmitter.event,
      onDynamicTick: (arg: Any) => (listener: (e: Any) => void) => {
        listener({ tick: arg.n });
        return {
          dispose() {
            disposed += 1;
          },
        };
      },
    };
    serverWith(port2, service);
    staticEmitter.fire("before any subscriber");
    const { svc } = clientOn(port1);
    const ticks: Any[] = [];
    const pings: Any[] = [];
    const sub = svc.onDynamicTick({ n: 7 })((e: Any) => ticks.push(e));
    const pingSub = svc.onDidPing((e: Any) => pings.push(e));
    await until(() => ticks.length > 0 && pings.length > 0, { timeoutMs: 3000, intervalMs: 5, what: "events" });
    expect(ticks).toEqual([{ tick: 7 }]);
    expect(pings).toEqual(["before any subscriber"]);
    sub.dispose();
    pingSub.dispose();
    await until(() => disposed === 1, { timeoutMs: 3000, intervalMs: 5, what: "the 103" });
  });

  it("ignores the flow-control object and non-binary messages", async () => {
    const { port1, port2 } = channel();
    serverWith(port2, {
      async echo(p: Any) {
        return p;
      },
    });
    const { svc, client } = clientOn(port1);
    await client.whenInitialized();
    port1.postMessage({ __zcodeRpcControl: "connection-flow-v1", state: "saturated" });
    port1.postMessage("not a frame");
    port1.postMessage(Uint8Array.of(99)); // malformed bytes
    await expect(svc.echo({ ok: 1 })).resolves.toEqual({ ok: 1 });
  });
});
