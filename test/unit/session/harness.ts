/** Shared setup for session engine tests: the fake host, the fake client, a stub broker. */
import { silentLogger } from "../../../src/log/logger.js";
import { SessionService } from "../../../src/session/session-service.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { FakeHost } from "../../support/fake-host.js";
import { FakeClient } from "../../support/fake-client.js";
import { StubBroker } from "../../support/stub-broker.js";
import { until } from "../../support/until.js";

export const CWD = "/work/project";

export function setup(options: { cancelGraceMs?: number } = {}) {
  const host = new FakeHost();
  const client = new FakeClient();
  const broker = new StubBroker();
  const service = new SessionService({
    native: new CurrentLineApi(host),
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
export async function updatesWritten(h: ReturnType<typeof setup>): Promise<void> {
  await until(() => h.service.diagnostics().queuedUpdates === 0);
}

/** Text of the chunks of one kind, joined (chunks may be merged while the client is behind). */
export function joined(
  updates: readonly import("@agentclientprotocol/sdk").SessionUpdate[],
  kind: "agent_message_chunk" | "agent_thought_chunk",
): string {
  return updates.map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : "")).join("");
}
