/**
 * zcode-task-v3 provider header requests (src/native/zcode-task-v3/provider-headers.ts): one
 * workspace listener shared by the session subscriptions, each request routed to its session once,
 * a request no subscription reads declined once, the listener's end ending the routes, and the
 * hold of a request until the conversation showed its turn.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { HostClient, HostEventSink, HostEventTarget, HostSubscription } from "../../../src/host/types.js";
import { silentLogger } from "../../../src/log/logger.js";
import {
  HeaderTurnOrder,
  ProviderHeaderRoutes,
  UNROUTED_HEADERS_MESSAGE,
  type HeaderRoute,
} from "../../../src/native/zcode-task-v3/provider-headers.js";
import { BridgeError } from "../../../src/util/errors.js";

const WS = "/w";
const EVENT = "onDynamicWorkspaceProviderRuntimeHeadersRequest";

class Listeners {
  incarnation = 1;
  readonly subscribed: HostEventTarget[] = [];
  readonly sinks: HostEventSink[] = [];
  disposed = 0;
  asHost(): HostClient {
    const current = (): number => this.incarnation;
    return {
      get incarnation() {
        return current();
      },
      subscribe: async (target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription> => {
        this.subscribed.push(target);
        this.sinks.push(sink);
        return { id: `l${this.sinks.length}`, incarnation: this.incarnation, dispose: async () => void (this.disposed += 1) };
      },
    } as unknown as HostClient;
  }
  fire(request: unknown): void {
    void this.sinks.at(-1)!.onEvent(request);
  }
}

function setup() {
  const listeners = new Listeners();
  const declined: Array<Record<string, unknown>> = [];
  const routes = new ProviderHeaderRoutes(listeners.asHost(), silentLogger, async (params) => void declined.push({ ...params }));
  const route = (sessionId: string) => {
    const got: unknown[] = [];
    const ended: BridgeError[] = [];
    const value: HeaderRoute = { sessionId, deliver: (e) => void got.push(e), end: (e) => void ended.push(e) };
    return { value, got, ended };
  };
  return { listeners, declined, routes, route };
}

const request = (sessionId: string, requestId: string, turnId?: string) => ({
  requestId,
  sessionId,
  ...(turnId ? { turnId } : {}),
  providerId: "p",
});

describe("zcode-task-v3: provider header routes", () => {
  it("one listener per workspace; each request reaches its own session's route once, as the legacy top-level event", async () => {
    const { listeners, routes, route, declined } = setup();
    const a = route("A");
    const b = route("B");
    await routes.attach(WS, a.value);
    await routes.attach(WS, b.value);
    expect(listeners.subscribed).toEqual([{ event: EVENT, workspacePath: WS }]);
    listeners.fire(request("A", "r1"));
    listeners.fire(request("A", "r1")); // ZCode replays what is pending
    expect(a.got).toEqual([{ type: "providerRuntimeHeaders.request", request: request("A", "r1") }]);
    expect(b.got).toEqual([]);
    expect(declined).toEqual([]);
  });

  it("declines, once, a request of a session no subscription reads; one without a session id is left to ZCode's timeout", async () => {
    const { listeners, routes, route, declined } = setup();
    await routes.attach(WS, route("A").value);
    listeners.fire(request("Z", "r9"));
    listeners.fire(request("Z", "r9"));
    listeners.fire({ requestId: "r10" });
    expect(declined).toEqual([{ workspacePath: WS, sessionId: "Z", requestId: "r9", message: UNROUTED_HEADERS_MESSAGE }]);
  });

  it("answers nothing to a host that exited (a request its listener still delivers is not declined to the successor)", async () => {
    const { listeners, routes, route, declined } = setup();
    await routes.attach(WS, route("A").value);
    listeners.incarnation = 2;
    listeners.fire(request("Z", "r11"));
    expect(declined).toEqual([]);
  });

  it("a detached session's later request is declined; the last detach drops the listener, the next attach listens again", async () => {
    const { listeners, routes, route, declined } = setup();
    const a = route("A");
    const detachA = await routes.attach(WS, a.value);
    const detachB = await routes.attach(WS, route("B").value);
    detachA();
    listeners.fire(request("A", "r2"));
    expect(a.got).toEqual([]);
    expect(declined.map((d) => d.requestId)).toEqual(["r2"]);
    detachB();
    // a request still coming while the listener is disposed is declined, not dropped
    listeners.fire(request("B", "r3"));
    expect(declined.map((d) => d.requestId)).toEqual(["r2", "r3"]);
    await vi.waitFor(() => expect(listeners.disposed).toBe(1));
    await routes.attach(WS, route("C").value);
    expect(listeners.subscribed).toHaveLength(2);
  });

  it("the listener's end ends every route through it (a session that can hear no header request is not kept)", async () => {
    const { listeners, routes, route } = setup();
    const a = route("A");
    const b = route("B");
    await routes.attach(WS, a.value);
    await routes.attach(WS, b.value);
    const exit = new BridgeError("HOST_EXITED", "gone");
    listeners.sinks[0]!.onEnd(exit);
    expect(a.ended).toEqual([exit]);
    expect(b.ended).toEqual([exit]);
    await routes.attach(WS, route("A").value);
    expect(listeners.subscribed).toHaveLength(2);
  });
});

describe("zcode-task-v3: a header request waits for its turn in the conversation", () => {
  afterEach(() => vi.useRealTimers());

  const headers = (turnId: string) => ({ type: "providerRuntimeHeaders.request", request: request("A", `r-${turnId}`, turnId) });
  const started = (turnId: string) => ({ type: "session.event", event: { type: "turn.started", turnId, sessionId: "A" } });

  it("holds a request of a turn not shown yet until its turn.started passed; one of a shown turn goes at once", () => {
    const passed: unknown[] = [];
    const order = new HeaderTurnOrder((e) => void passed.push(e), 1000);
    void order.request(headers("t1"));
    expect(passed).toEqual([]);
    order.shown(started("t0"));
    expect(passed).toEqual([]);
    order.shown(started("t1"));
    expect(passed).toEqual([headers("t1")]);
    void order.request(headers("t1"));
    expect(passed).toHaveLength(2);
    // a snapshot's running turn counts as shown (a subscription opened mid-turn)
    order.shown({ type: "snapshot", snapshot: { runtime: { activeTurnId: "t2" } } });
    void order.request(headers("t2"));
    expect(passed).toHaveLength(3);
  });

  it("passes a held request after the wait, and hands back what is held at the end", () => {
    vi.useFakeTimers();
    const passed: unknown[] = [];
    const order = new HeaderTurnOrder((e) => void passed.push(e), 1000);
    void order.request(headers("t1"));
    vi.advanceTimersByTime(999);
    expect(passed).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(passed).toEqual([headers("t1")]);
    void order.request(headers("t3"));
    expect(order.end()).toEqual([headers("t3")]);
    vi.advanceTimersByTime(5000);
    void order.request(headers("t4"));
    expect(passed).toEqual([headers("t1")]);
  });
});
