// Runs the agent command given as arguments between a black-box ACP client and the agent, and
// records every line in both directions, in arrival order, into the file named by
// TEE_AGENT_FILE as {"from":"client"|"agent","raw":"<line>"} — so a test can validate them.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [command, ...args] = process.argv.slice(2);
const file = process.env.TEE_AGENT_FILE;
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });

function recorder(from) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.toString("utf8");
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      appendFileSync(file, `${JSON.stringify({ from, raw: buffer.slice(0, newline) })}\n`);
      buffer = buffer.slice(newline + 1);
    }
  };
}
const fromClient = recorder("client");
const fromAgent = recorder("agent");
process.stdin.on("data", (chunk) => {
  fromClient(chunk);
  child.stdin.write(chunk);
});
process.stdin.on("end", () => child.stdin.end());
child.stdout.on("data", (chunk) => {
  fromAgent(chunk);
  process.stdout.write(chunk);
});
child.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal));
