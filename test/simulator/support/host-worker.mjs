// Worker entry for simulator tests: installs a process.parentPort that imitates Electron's
// utility-process port (docs/runtime-contract.md §4 step 2), then imports the host index by file URL.
import { parentPort, workerData } from "node:worker_threads";
import { pathToFileURL } from "node:url";

/** Node MessagePort -> Electron MessagePortMain shape: message handlers receive { data }. */
function wrapPort(port) {
  const handlers = new Map();
  const adapt = (event, fn) => (event === "message" ? (data) => fn({ data }) : fn);
  const wrapped = {
    on(event, fn) {
      const h = adapt(event, fn);
      handlers.set(fn, h);
      port.on(event, h);
      return wrapped;
    },
    once(event, fn) {
      const h = adapt(event, fn);
      handlers.set(fn, h);
      port.once(event, h);
      return wrapped;
    },
    off(event, fn) {
      const h = handlers.get(fn) ?? fn;
      handlers.delete(fn);
      port.off(event, h);
      return wrapped;
    },
    removeListener(event, fn) {
      return wrapped.off(event, fn);
    },
    postMessage(value, transfer) {
      port.postMessage(value, transfer);
    },
    start() {
      port.start();
    },
    close() {
      port.close();
    },
  };
  return wrapped;
}

const listeners = new Map();
const adaptMessage = (fn) => (value) => fn({ ...value, ports: Array.isArray(value?.ports) ? value.ports.map(wrapPort) : [] });

process.parentPort = {
  on(event, fn) {
    if (event === "message") {
      const h = adaptMessage(fn);
      listeners.set(fn, h);
      parentPort.on("message", h);
    }
    return process.parentPort;
  },
  once(event, fn) {
    if (event === "message") {
      const h = adaptMessage(fn);
      listeners.set(fn, h);
      parentPort.once("message", h);
    }
    return process.parentPort;
  },
  off(event, fn) {
    const h = listeners.get(fn);
    if (h) {
      listeners.delete(fn);
      parentPort.off("message", h);
    }
    return process.parentPort;
  },
  removeListener(event, fn) {
    return process.parentPort.off(event, fn);
  },
  postMessage(value, transfer) {
    parentPort.postMessage(value, transfer);
  },
};

await import(pathToFileURL(workerData.hostIndex).href);
