/** Shared setup for session engine tests: the fake host, the fake client, a stub broker. */
import { silentLogger } from "../../../src/log/logger.js";
import { SessionService } from "../../../src/session/session-service.js";
import { LineApi } from "../../../src/native/line-api.js";
import { FakeHost } from "../../support/fake-host.js";
import { FakeClient } from "../../support/fake-client.js";
import { StubBroker } from "../../support/stub-broker.js";

export const CWD = "/work/project";

export function setup(options: { cancelGraceMs?: number } = {}) {
  const host = new FakeHost();
  const client = new FakeClient();
  const broker = new StubBroker();
  const service = new SessionService({
    native: new LineApi(host),
    client,
    broker,
    logger: silentLogger,
    cancelGraceMs: options.cancelGraceMs ?? 2000,
    mergeDeltas: true,
    defaultCwd: CWD,
  });
  return { host, client, broker, service };
}

/** A new session whose updates are published (as after the session/new response). */
export async function openSession(h: ReturnType<typeof setup>) {
  const opened = await h.service.newSession({ cwd: CWD, mcpServers: [] });
  opened.afterResponse();
  await updatesWritten(h);
  return { opened, engine: h.service.get(opened.sessionId), native: h.host.session(opened.sessionId) };
}

/** Resolves once every queued session/update was handed to the client (the service's diagnostics count the queue). */
export function updatesWritten(h: ReturnType<typeof setup>): Promise<void> {
  return until(() => h.service.diagnostics().queuedUpdates === 0);
}

/** Resolves once `condition()` holds, checking after every macrotask (no fixed sleeps). */
export function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (condition()) return resolve();
      if (Date.now() > deadline) return reject(new Error("condition not met in time"));
      setImmediate(check);
    };
    check();
  });
}

/** Text of the chunks of one kind, joined (chunks may be merged while the client is behind). */
export function joined(
  updates: readonly import("@agentclientprotocol/sdk").SessionUpdate[],
  kind: "agent_message_chunk" | "agent_thought_chunk",
): string {
  return updates.map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : "")).join("");
}
