/** Shared setup for session engine tests: a fake host, a recording client, a stub broker. */
import { silentLogger } from "../../src/log/logger.js";
import { SessionService } from "../../src/session/session-service.js";
import { FakeHost } from "../support/fake-host.js";
import { RecordingClient, StubBroker } from "../support/recording-client.js";

export const CWD = "/work/project";

export function setup(options: { cancelGraceMs?: number } = {}) {
  const host = new FakeHost();
  const client = new RecordingClient();
  const broker = new StubBroker();
  const service = new SessionService({ host, client, broker, logger: silentLogger, cancelGraceMs: options.cancelGraceMs ?? 2000 });
  return { host, client, broker, service };
}

/** A new session whose updates are published (as after the session/new response). */
export async function openSession(h: ReturnType<typeof setup>) {
  const opened = await h.service.newSession({ cwd: CWD, mcpServers: [] });
  opened.afterResponse();
  await h.service.get(opened.sessionId).drain();
  return { opened, engine: h.service.get(opened.sessionId), native: h.host.session(opened.sessionId) };
}
