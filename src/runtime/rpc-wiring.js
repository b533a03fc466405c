// Connects to the host's services through the install's own RPC module (docs/runtime-contract.md §4
// step 4). The module is opaque: only `new P(port)`, `new C(protocol)`, `client.getChannel(name)`
// and `S.toService(channel)` are used, with the export names and channel names from the manifest.
import { pathToFileURL } from "node:url";

export class RpcWiringError extends Error {
  constructor(message) {
    super(message);
    this.name = "RpcWiringError";
  }
}

function isClass(value) {
  return typeof value === "function" && typeof value.prototype === "object" && value.prototype !== null;
}

/**
 * @param {ReturnType<import("./config.js").parseBootstrapConfig>} config
 * @param {import("node:worker_threads").MessagePort} port the bootstrap's end (port1)
 * @returns {Promise<Record<string, object>>} service proxies by channel key (agent, task, …)
 */
export async function connectServices(config, port) {
  let mod;
  try {
    mod = await import(pathToFileURL(config.rpcModule).href);
  } catch (error) {
    throw new RpcWiringError(`cannot import the RPC module: ${error instanceof Error ? error.message : String(error)}`);
  }
  const names = config.exports;
  const Protocol = mod[names.protocol];
  const Client = mod[names.client];
  const serviceHelper = mod[names.service];
  // re-check the exports by shape before use (the check command verified them too)
  if (!isClass(Protocol)) throw new RpcWiringError(`export ${names.protocol} is not a protocol class`);
  if (!isClass(Client)) throw new RpcWiringError(`export ${names.client} is not a client class`);
  if (
    (typeof serviceHelper !== "object" && typeof serviceHelper !== "function") ||
    serviceHelper === null ||
    typeof serviceHelper.toService !== "function"
  ) {
    throw new RpcWiringError(`export ${names.service} is not a service helper with toService`);
  }
  const protocol = new Protocol(port);
  const client = new Client(protocol);
  if (typeof client.getChannel !== "function") throw new RpcWiringError(`export ${names.client} does not create a client with getChannel`);
  const services = {};
  for (const key of config.services) {
    const channel = client.getChannel(config.channels[key]);
    if (channel === null || typeof channel !== "object" || typeof channel.call !== "function" || typeof channel.listen !== "function") {
      throw new RpcWiringError(`channel ${config.channels[key]} has no call/listen`);
    }
    services[key] = serviceHelper.toService(channel);
  }
  return services;
}
