// Runs the simulated host as a plain child process (the utility-process shape) so signal
// handling can be tested: parentPort posts go to the parent over IPC; init-local is posted
// locally with a port of a channel created here. argv[2] = host index path.
import { MessageChannel } from "node:worker_threads";
import { pathToFileURL } from "node:url";

const listeners = [];
process.parentPort = {
  on(event, fn) {
    if (event === "message") listeners.push(fn);
    return process.parentPort;
  },
  once(event, fn) {
    return process.parentPort.on(event, fn);
  },
  off(event, fn) {
    const i = listeners.indexOf(fn);
    if (i >= 0) listeners.splice(i, 1);
    return process.parentPort;
  },
  removeListener(event, fn) {
    return process.parentPort.off(event, fn);
  },
  postMessage(value) {
    process.send?.(value);
  },
};

function wrap(port) {
  return {
    on(event, fn) {
      port.on(event, event === "message" ? (data) => fn({ data }) : fn);
    },
    once(event, fn) {
      port.once(event, event === "message" ? (data) => fn({ data }) : fn);
    },
    off() {},
    removeListener() {},
    postMessage(value) {
      port.postMessage(value);
    },
    start() {
      port.start();
    },
    close() {
      port.close();
    },
  };
}

await import(pathToFileURL(process.argv[2]).href);
const { port1, port2 } = new MessageChannel();
port1.on("message", () => {}); // keep the bridge side open
for (const fn of [...listeners]) fn({ data: { type: "init-local", deviceMid: "zcode-acp-headless" }, ports: [wrap(port2)] });
