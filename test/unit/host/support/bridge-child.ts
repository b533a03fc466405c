// A minimal bridge process for tests (run with `node --import tsx`): opens a HostConnection on
// the install described by BRIDGE_CHILD_INSTALL (JSON of TestInstall fields), makes a few calls,
// prints ONE line `{"pid":<host pid>,"incarnation":n}` on stdout and then waits (to be killed) or,
// with BRIDGE_CHILD_EXIT=1, closes the host and prints `{"closed":true}`.
// Its stdout must carry nothing else: the host's output goes to the log file only.
import { HostConnection } from "../../../../src/host/host-connection.js";
import { createLogger } from "../../../../src/log/logger.js";
import { supportedAssessment, type TestInstall } from "./sim.js";

const install = JSON.parse(process.env.BRIDGE_CHILD_INSTALL ?? "{}") as TestInstall;
const logger = createLogger({ level: "debug", file: process.env.BRIDGE_CHILD_LOG });
const host = new HostConnection({ resolveInstall: async () => supportedAssessment(install), logger, env: process.env });
await host.call("agent", "initialize", { workspacePath: "/w" });
const created = await host.call<{ session: { sessionId: string } }>("agent", "createSession", { workspacePath: "/w" });
await host.call("agent", "readSession", { workspacePath: "/w", sessionId: created.session.sessionId });
process.stdout.write(`${JSON.stringify({ pid: host.pid, incarnation: host.incarnation })}\n`);
if (process.env.BRIDGE_CHILD_EXIT === "1") {
  await host.close();
  process.stdout.write(`${JSON.stringify({ closed: true })}\n`);
} else {
  setInterval(() => undefined, 60_000);
}
