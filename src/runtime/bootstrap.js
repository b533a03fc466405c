// zcode-acp bootstrap: the program the bridge starts as `<ZCode Electron> bootstrap.js <config JSON>`
// with ELECTRON_RUN_AS_NODE=1 (docs/runtime-contract.md §4). Plain JavaScript, no Electron-only API.
//
// 0. the host index and RPC module are hashed again and must be the bytes the bridge verified;
// 1. a worker thread installs process.parentPort (worker-shim.js) and imports the host index;
// 2./3. init-local is posted with port2 of a MessageChannel (also in the transfer list);
// 4. the install's RPC module is imported and connected on port1 (rpc-wiring.js);
// 5. reverse requests are refused at once, database-startup-state gives readiness (host-messages.js);
// 6. when the bridge's pipe closes (even if the bridge was SIGKILLed), or on SIGTERM/SIGINT, the
//    worker gets `dispose`, a bounded wait, then the process exits;
// 7. a worker exit or error is reported on the channel as host-exit and the process exits non-zero.
//
// The NDJSON channel is the inherited pipe `channelFd` (3), never stdout. Whatever the host
// prints goes to this process's stdout/stderr, which the bridge drains into its log.
import { MessageChannel, Worker } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { parseBootstrapConfig } from "./config.js";
import { createDispatcher } from "./dispatcher.js";
import { createHostMessageHandler } from "./host-messages.js";
import { openNdjsonPipe } from "./ndjson-pipe.js";
import { connectServices } from "./rpc-wiring.js";
import { verifyHostFiles } from "./integrity.js";

const diag = (message) => {
  try {
    process.stderr.write(`[zcode-acp bootstrap ${process.pid}] ${message}\n`);
  } catch {
    // stderr gone with the bridge
  }
};
// the bridge may be gone: writing the host's noise must not crash this process
process.stdout.on("error", () => undefined);
process.stderr.on("error", () => undefined);

let config;
try {
  config = parseBootstrapConfig(process.argv[2]);
} catch (error) {
  diag(error instanceof Error ? error.message : String(error));
  process.exit(2);
}

let phase = "starting"; // → "running" → "stopping"
let hostReady = false;
let servicesConnected = false;
let hostEnded = false;
let rpcClosed = false;
let exitRequested = false;
let exitCode = 0;
let disposeTimer;
let dispatcher; // set below, before any frame can arrive (frames are read asynchronously)

let pipe;
try {
  pipe = openChannelPipe();
} catch (error) {
  diag(`cannot open the channel on fd ${config.channelFd}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}

function openChannelPipe() {
  return openNdjsonPipe({
    fd: config.channelFd,
    frameLimitBytes: config.frameLimitBytes,
    maxBufferedBytes: 4 * config.frameLimitBytes,
    // no dispatcher yet while the host files are re-verified: nothing is served before that
    onFrame: (frame) => dispatcher?.handleFrame(frame),
    onFailure: (error) => protocolFailure(error.code, error.message),
    onClose: () => {
      if (phase !== "stopping") diag("the bridge closed the channel; disposing the host");
      shutdown(0);
    },
  });
}

// Only verified bytes run: the files about to be imported must still be the ones the bridge
// verified (a file swapped after the check is refused before any host code runs).
const integrityProblem = verifyHostFiles(config);
if (integrityProblem !== undefined) {
  diag(`refusing to start the host: ${integrityProblem}`);
  pipe.send({ method: "host-exit", params: { reason: "integrity", error: { name: "IntegrityError", message: integrityProblem } } }, true);
  await new Promise((resolve) => pipe.end(resolve));
  process.exit(1);
}

const { port1, port2 } = new MessageChannel();
const worker = new Worker(new URL("./worker-shim.js", import.meta.url), {
  workerData: { hostIndexUrl: pathToFileURL(config.hostIndex).href },
});

const handleHostMessage = createHostMessageHandler({
  answer: (data) => {
    try {
      worker.postMessage({ data, ports: [] });
    } catch {
      // the worker is gone; its exit is reported separately
    }
  },
  onReady: () => {
    hostReady = true;
    announceReady();
  },
  onStartupFailed: (info) => {
    reportHostExit({ reason: "startup-failed", ...info });
    shutdown(1);
  },
});

function announceReady() {
  if (!hostReady || !servicesConnected || phase !== "starting") return;
  phase = "running";
  pipe.send({ method: "ready", params: { pid: process.pid } }, true);
}

worker.on("message", handleHostMessage);
worker.on("error", (error) => {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  hostGone({ reason: "worker-error", error: { name: String(name).slice(0, 200), message: String(message).slice(0, 2000) } });
});
worker.on("exit", (exitCode) => hostGone({ reason: "worker-exit", exitCode }));

worker.postMessage(
  {
    data: { type: "init-local", deviceMid: "zcode-acp-headless", agentSpawnFallbackCwd: config.agentSpawnFallbackCwd, ...config.initLocal },
    ports: [port2],
  },
  [port2],
);

// registered before the RPC protocol's own listener: a closed port means the host is gone
port1.on("close", onRpcPortClosed);
const services = connectServices(config, port1);
services.then(
  () => {
    servicesConnected = true;
    announceReady();
  },
  (error) => {
    reportHostExit({ reason: "rpc-wiring", error: { name: "RpcWiringError", message: String(error?.message ?? error).slice(0, 2000) } });
    shutdown(1);
  },
);
// calls wait for the connection; a wiring failure is answered by the host-exit above
services.catch(() => undefined);

dispatcher = createDispatcher({
  config,
  services,
  send: (frame, force) => pipe.send(frame, force),
  isHostGone: () => rpcClosed || hostEnded,
  onProtocolFailure: (code, message) => protocolFailure(code, message),
});

function reportHostExit(params) {
  if (hostEnded) return;
  hostEnded = true;
  pipe.send({ method: "host-exit", params }, true);
}

function protocolFailure(code, message) {
  diag(`channel protocol failure (${code}): ${message}`);
  pipe.stopReading();
  reportHostExit({ reason: "protocol", error: { code, message } });
  shutdown(1);
}

/**
 * The host's end of the RPC port closed. Usually the worker is dying: give its exit event a
 * moment to report the exit code, otherwise report the closed connection ourselves.
 */
function onRpcPortClosed() {
  if (phase === "stopping" || rpcClosed) return;
  rpcClosed = true;
  const timer = setTimeout(() => {
    if (phase === "stopping") return;
    reportHostExit({ reason: "rpc-closed" });
    diag("the host closed its RPC connection");
    shutdown(1);
  }, 1000);
  timer.unref();
}

/** The worker ended or threw: the host is gone. */
function hostGone(params) {
  if (phase === "stopping") {
    finish();
    return;
  }
  reportHostExit(params);
  diag(`host ${params.reason}${params.exitCode === undefined ? "" : ` (code ${params.exitCode})`}`);
  phase = "stopping";
  exitCode = 1;
  finish();
}

/** Dispose the worker (bounded wait), then exit with `code`. Idempotent. */
function shutdown(code) {
  if (phase === "stopping") return;
  phase = "stopping";
  exitCode = code;
  dispatcher.disposeAll();
  try {
    worker.postMessage({ data: { type: "dispose" }, ports: [] });
  } catch {
    finish();
    return;
  }
  disposeTimer = setTimeout(() => {
    diag(`the host did not exit within ${config.disposeTimeoutMs} ms of dispose; terminating it`);
    worker.terminate().finally(finish);
  }, config.disposeTimeoutMs);
}

function finish() {
  if (exitRequested) return;
  exitRequested = true;
  clearTimeout(disposeTimer);
  try {
    port1.close();
  } catch {
    // ignore
  }
  pipe.end(() => process.exit(exitCode));
}

const onSignal = (signal) => {
  if (phase === "stopping") {
    diag(`${signal} while stopping; exiting now`);
    process.exit(exitCode || 1);
  }
  diag(`${signal}: disposing the host`);
  shutdown(0);
};
process.on("SIGTERM", () => onSignal("SIGTERM"));
process.on("SIGINT", () => onSignal("SIGINT"));
