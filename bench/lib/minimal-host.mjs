// Baseline of the start-up benchmark: a minimal bridge that launches the same simulated host
// with the same bootstrap, without verifying anything. It answers `initialize` from its first
// line, starts the host when `session/new` arrives (launch "session", the launch policy of
// zcode-acp) or at once when it starts (launch "spawn", a lower bound), and answers
// `session/new` after the host said "ready" and answered the host calls zcode-acp makes for a
// new session (initialize, readWorkspaceState, createSession, then the event subscription).
// No imports besides node:child_process; no validation, no SDK.
//
//   node minimal-host.mjs '<{"executable": …, "args": [bootstrap, configJson], "launch": "session" | "spawn"}>'
import { spawn } from "node:child_process";

const spec = JSON.parse(process.argv[2]);
const pending = new Map();
let nextId = 1;
let markReady;
const ready = new Promise((resolve) => (markReady = resolve));
let host;
let channel;

function launch() {
  if (host) return;
  host = spawn(spec.executable, spec.args, {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
    stdio: ["ignore", "ignore", "ignore", "pipe"],
  });
  channel = host.stdio[3];
  lines(channel, (frame) => {
    if (frame.method === "ready") markReady();
    else if (frame.id !== undefined && pending.has(frame.id)) {
      const settle = pending.get(frame.id);
      pending.delete(frame.id);
      settle(frame);
    }
  });
}

function lines(stream, onLine) {
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim() !== "") onLine(JSON.parse(line));
    }
  });
}

if (spec.launch === "spawn") launch();

function request(method, params) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, (frame) => (frame.error ? reject(new Error(JSON.stringify(frame.error))) : resolve(frame.result)));
    channel.write(`${JSON.stringify({ id, method, params })}\n`);
  });
}
const call = (method, params) => request("__call", { service: "agent", method, params });

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
const INITIALIZE = {
  protocolVersion: 1,
  agentCapabilities: { loadSession: true, sessionCapabilities: { list: {}, resume: {}, close: {} } },
  authMethods: [],
};

async function newSession(id, cwd) {
  launch();
  await ready;
  await call("initialize", { workspacePath: cwd });
  await call("readWorkspaceState", { workspacePath: cwd });
  const created = await call("createSession", { workspacePath: cwd, mcpServers: [], persistence: "immediate" });
  const sessionId = created.session.sessionId;
  const target = { workspacePath: cwd, sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true };
  await request("__subscribe", { subscriptionId: "s1", service: "agent", event: "onDynamicSessionEvent", target });
  send({ id, result: { sessionId } });
}

lines(process.stdin, (message) => {
  if (message.method === "initialize") send({ id: message.id, result: INITIALIZE });
  else if (message.method === "session/new") {
    newSession(message.id, message.params.cwd).catch((error) =>
      send({ id: message.id, error: { code: -32603, message: String(error.message) } }),
    );
  }
});
process.stdin.on("end", () => {
  if (!host) process.exit(0);
  channel.end();
  host.once("exit", () => process.exit(0));
});
