// A misbehaving stand-in for src/runtime/bootstrap.js (tests only), selected with ROGUE_MODE:
//   malformed     answer every request with a line that is not JSON
//   unknown-id    answer with an id that was never sent
//   unknown-frame send a notification the channel does not know
//   stubborn      ready, then ignore the pipe closing and SIGTERM (only SIGKILL ends it)
import net from "node:net";

const mode = process.env.ROGUE_MODE ?? "malformed";
const socket = new net.Socket({ fd: 3, readable: true, writable: true });
const send = (value) => socket.write(typeof value === "string" ? value : `${JSON.stringify(value)}\n`);
send({ method: "ready", params: { pid: process.pid } });

if (mode === "stubborn") {
  process.on("SIGTERM", () => undefined);
  setInterval(() => undefined, 1000);
}
socket.on("error", () => undefined);
socket.on("end", () => {
  if (mode !== "stubborn") process.exit(0);
});

let partial = "";
socket.on("data", (chunk) => {
  partial += chunk.toString("utf8");
  let nl;
  while ((nl = partial.indexOf("\n")) !== -1) {
    const frame = JSON.parse(partial.slice(0, nl));
    partial = partial.slice(nl + 1);
    if (mode === "malformed") send("{this is not json\n");
    else if (mode === "unknown-id") send({ id: frame.id + 1000, result: { available: true } });
    else if (mode === "unknown-frame") send({ method: "teleport", params: {} });
  }
});
