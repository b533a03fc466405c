// Run through the install's Electron stand-in: start the host in a worker (parentPort shim),
// connect with the install's RPC module, call initialize, dispose, exit with the worker's code.
// argv: <host-worker.mjs> <host index> <rpc module> <export names JSON {protocol, client, service}>
// [<builtin provider config path> (v2: init-local carries it)]
import { MessageChannel, Worker } from "node:worker_threads";
import { pathToFileURL } from "node:url";

const [workerEntry, hostIndex, rpcModule, exportsJson, providerConfig] = process.argv.slice(2);
const names = JSON.parse(exportsJson);
const worker = new Worker(workerEntry, { workerData: { hostIndex }, stdout: true, stderr: true });
worker.on("message", (m) => {
  if (m?.type === "browser-execute-request")
    worker.postMessage({
      data: {
        type: "browser-execute-result",
        requestId: m.requestId,
        result: { ok: false, elapsedMs: 0, error: { code: "backend_unavailable", message: "n/a", sideEffect: "none" } },
      },
      ports: [],
    });
});
const { port1, port2 } = new MessageChannel();
const init = { type: "init-local", deviceMid: "zcode-acp-headless" };
if (providerConfig) init.zcodeBuiltinProviderConfigFilePath = providerConfig;
worker.postMessage({ data: init, ports: [port2] }, [port2]);
const rpc = await import(pathToFileURL(rpcModule).href);
const client = new rpc[names.client](new rpc[names.protocol](port1));
const agent = rpc[names.service].toService(client.getChannel("zcode-agent"));
const result = await agent.initialize({ workspacePath: "/w" });
process.stdout.write(`${JSON.stringify({ result, electronRunAsNode: process.env.ELECTRON_RUN_AS_NODE })}\n`);
worker.postMessage({ data: { type: "dispose" }, ports: [] });
worker.on("exit", (code) => {
  port1.close();
  process.exit(code);
});
