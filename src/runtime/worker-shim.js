// Runs INSIDE the worker thread of the Electron-as-Node process (docs/runtime-contract.md §4 steps 1–2).
// Plain JavaScript: no TypeScript loader exists there. Installs `process.parentPort` imitating
// Electron's utility-process port, then imports the official host index by file URL.
//
// - parentPort.on/once/off("message", fn): fn receives `{ ...value, ports: value.ports.map(wrapPort) }`
//   where `value` is what the bootstrap posted (`{ data, ports }`).
// - parentPort.postMessage(value, transfer?) passes straight through (host → bootstrap, raw).
// - wrapPort(port) imitates Electron's MessagePortMain: on("message", fn) calls fn({ data });
//   "close", once, off, postMessage, start and close pass through.
import { parentPort as workerPort, workerData } from "node:worker_threads";

if (!workerPort) throw new Error("zcode-acp worker shim must run in a worker thread");

/** A listener registry so that off() finds the adapter registered by on()/once(). */
function createAdapterRegistry() {
  const byEvent = new Map();
  return {
    remember(event, fn, adapter) {
      let map = byEvent.get(event);
      if (!map) byEvent.set(event, (map = new Map()));
      map.set(fn, adapter);
    },
    take(event, fn) {
      const map = byEvent.get(event);
      const adapter = map?.get(fn);
      map?.delete(fn);
      return adapter;
    },
  };
}

/** Node MessagePort → Electron MessagePortMain shape. */
function wrapPort(port) {
  const registry = createAdapterRegistry();
  const adapt = (event, fn) => {
    if (event !== "message") return fn;
    return (data) => fn({ data, ports: [] });
  };
  const wrapped = {
    on(event, fn) {
      const adapter = adapt(event, fn);
      registry.remember(event, fn, adapter);
      port.on(event, adapter);
      return wrapped;
    },
    once(event, fn) {
      const adapter = adapt(event, fn);
      registry.remember(event, fn, adapter);
      port.once(event, adapter);
      return wrapped;
    },
    off(event, fn) {
      const adapter = registry.take(event, fn);
      if (adapter) port.off(event, adapter);
      return wrapped;
    },
    postMessage(message, transfer) {
      if (transfer === undefined) port.postMessage(message);
      else port.postMessage(message, transfer);
    },
    start() {
      port.start();
    },
    close() {
      port.close();
    },
  };
  wrapped.addListener = wrapped.on;
  wrapped.removeListener = wrapped.off;
  return wrapped;
}

function toUtilityMessage(value) {
  const source = value !== null && typeof value === "object" ? value : {};
  const ports = Array.isArray(source.ports) ? source.ports.map(wrapPort) : [];
  return { ...source, ports };
}

const registry = createAdapterRegistry();
const parentPortShim = {
  on(event, fn) {
    if (event !== "message") return parentPortShim; // Electron's parentPort only emits "message"
    const adapter = (value) => fn(toUtilityMessage(value));
    registry.remember(event, fn, adapter);
    workerPort.on("message", adapter);
    return parentPortShim;
  },
  once(event, fn) {
    if (event !== "message") return parentPortShim;
    const adapter = (value) => fn(toUtilityMessage(value));
    registry.remember(event, fn, adapter);
    workerPort.once("message", adapter);
    return parentPortShim;
  },
  off(event, fn) {
    const adapter = registry.take(event, fn);
    if (adapter) workerPort.off("message", adapter);
    return parentPortShim;
  },
  postMessage(value, transfer) {
    if (transfer === undefined) workerPort.postMessage(value);
    else workerPort.postMessage(value, transfer);
  },
};
parentPortShim.addListener = parentPortShim.on;
parentPortShim.removeListener = parentPortShim.off;

Object.defineProperty(process, "parentPort", { value: parentPortShim, configurable: true, enumerable: false, writable: false });

await import(workerData.hostIndexUrl);
