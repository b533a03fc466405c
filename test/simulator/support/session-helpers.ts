/** Event collection and session helpers for simulator tests. */
import { afterEach } from "vitest";
import { createSimulatedInstall, type CallLogEntry, type SimInstall, type SimRelease } from "../../../fixtures/sim-install.js";
import { until } from "../../support/until.js";
import { HostHarness, waitUntil, type Any, type Connection, type HarnessOptions } from "./host-harness.js";

export const WS = "/work/project";
export const TERMINAL = new Set(["turn.completed", "turn.failed"]);

export class EventCollector {
  readonly events: Any[] = [];
  private wakers = new Set<() => void>();
  private subscription: { dispose(): void };

  constructor(
    connection: Connection,
    readonly target: Record<string, unknown>,
  ) {
    this.subscription = connection.agent.onDynamicSessionEvent(target)((event: Any) => {
      this.events.push(event);
      for (const waker of [...this.wakers]) waker();
    });
  }

  /** inner session.event envelopes */
  sessionEvents(): Any[] {
    return this.events.filter((e) => e.type === "session.event").map((e) => e.event);
  }
  innerTypes(): string[] {
    return this.sessionEvents().map((e) => e.type);
  }
  ofTurn(turnId: string): Any[] {
    return this.sessionEvents().filter((e) => e.turnId === turnId);
  }

  waitFor(predicate: (event: Any) => boolean, timeoutMs = 5000, what = "an event"): Promise<Any> {
    return waitUntil(
      () => this.events.find(predicate),
      (w) => {
        this.wakers.add(w);
        return () => this.wakers.delete(w);
      },
      timeoutMs,
      what,
    );
  }

  /** Wait until `count` events match (counting from the start); linear in the number of events. */
  waitForCount(predicate: (event: Any) => boolean, count: number, timeoutMs = 5000, what = "events"): Promise<Any[]> {
    const hits: Any[] = [];
    let scanned = 0;
    const check = (): Any[] | undefined => {
      for (; scanned < this.events.length; scanned++) if (predicate(this.events[scanned])) hits.push(this.events[scanned]);
      return hits.length >= count ? hits : undefined;
    };
    return waitUntil(
      check,
      (w) => {
        this.wakers.add(w);
        return () => this.wakers.delete(w);
      },
      timeoutMs,
      what,
    );
  }

  waitForSessionEvent(type: string, timeoutMs = 5000, after = 0): Promise<Any> {
    return this.waitFor(
      (e) => e.type === "session.event" && e.event.type === type && e.event.seq > after,
      timeoutMs,
      `session.event ${type}`,
    ).then((e) => e.event);
  }

  /** The terminal event of the n-th terminal (1-based). */
  async terminal(n = 1, timeoutMs = 5000): Promise<Any> {
    const hits = await this.waitForCount((e) => e.type === "session.event" && TERMINAL.has(e.event.type), n, timeoutMs, `terminal #${n}`);
    return hits[n - 1].event;
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

export interface SessionRig {
  install: SimInstall;
  host: HostHarness;
  conn: Connection;
  sessionId: string;
  snapshot: Any;
  events: EventCollector;
  prompt(text: string): Promise<Any>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Register a cleanup that runs after the current test. */
export function onCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

/** A fresh install of `release` (explicit, so these tests do not follow ZCODE_ACP_SIM_RELEASE). */
export async function newInstall(release: SimRelease = "3.11.2"): Promise<SimInstall> {
  const install = await createSimulatedInstall({ release });
  onCleanup(() => install.cleanup());
  return install;
}

export function startHost(install: SimInstall, options: HarnessOptions = {}): HostHarness {
  const host = HostHarness.start(install, options);
  onCleanup(async () => {
    await host.dispose();
  });
  return host;
}

/** A fresh install, a running host, a connection, a session and a subscription (snapshot first). */
export async function sessionRig(
  options: HarnessOptions & { install?: SimInstall; release?: SimRelease; create?: Record<string, unknown> } = {},
): Promise<SessionRig> {
  const install = options.install ?? (await newInstall(options.release));
  const host = startHost(install, options);
  const conn = await host.connect();
  await conn.agent.initialize({ workspacePath: WS });
  const snapshot = await conn.agent.createSession({ workspacePath: WS, ...options.create });
  const sessionId: string = snapshot.session.sessionId;
  const events = new EventCollector(conn, { workspacePath: WS, sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true });
  await events.waitFor((e) => e.type === "snapshot", 5000, "the initial snapshot");
  return {
    install,
    host,
    conn,
    sessionId,
    snapshot,
    events,
    prompt: (text: string) => conn.agent.sendPrompt({ workspacePath: WS, sessionId, content: text }),
  };
}

/** Wait until the call log satisfies `predicate` (the log is a file: re-read it every few ms, bounded). */
export async function waitForCallLog(
  install: SimInstall,
  predicate: (entries: CallLogEntry[]) => boolean,
  what: string,
  timeoutMs = 5000,
): Promise<CallLogEntry[]> {
  return until(
    async () => {
      const entries = await install.readCallLog();
      return predicate(entries) && entries;
    },
    { timeoutMs, intervalMs: 10, what: `${what} in the call log` },
  );
}

/** Send a prompt and wait for the next terminal event. */
export async function promptToEnd(rig: SessionRig, text: string, timeoutMs = 5000): Promise<{ ack: Any; terminal: Any; turn: Any[] }> {
  const before = rig.events.sessionEvents().filter((e) => TERMINAL.has(e.type)).length;
  const ack = await rig.prompt(text);
  const terminal = await rig.events.terminal(before + 1, timeoutMs);
  return { ack, terminal, turn: rig.events.ofTurn(terminal.turnId) };
}

/** Answer the next permission.request of the session with optionId. */
export async function answerPermission(rig: SessionRig, optionId: string, nth = 1): Promise<Any> {
  const hits = await rig.events.waitForCount((e) => e.type === "permission.request", nth, 5000, "permission.request");
  const request = hits[nth - 1].request;
  const accepted = await rig.conn.task.respondPermission({
    taskId: rig.sessionId,
    requestId: request.requestId,
    optionId,
    workspacePath: WS,
  });
  return { request, accepted };
}

export async function nextUserInput(rig: SessionRig, nth = 1): Promise<Any> {
  const hits = await rig.events.waitForCount((e) => e.type === "userInput.request", nth, 5000, "userInput.request");
  return hits[nth - 1].request;
}
