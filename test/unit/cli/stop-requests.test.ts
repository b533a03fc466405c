/** Stop requests of the ACP command (src/cli/stop-requests.ts): the first stops gracefully, a signal after it forces the exit. */
import { afterEach, describe, expect, it } from "vitest";
import { signalExitCode, StopRequests } from "../../../src/cli/stop-requests.js";
import { silentLogger } from "../../../src/log/logger.js";

let stops: StopRequests[] = [];
afterEach(() => {
  for (const stop of stops) stop.dispose();
  stops = [];
});

function stopRequests() {
  const exits: number[] = [];
  const order: string[] = [];
  const stop = new StopRequests(silentLogger, {
    exit: (code) => {
      order.push("exit");
      exits.push(code);
    },
  });
  stops.push(stop);
  return { stop, exits, order };
}

describe("StopRequests", () => {
  it("hands the first request to the shutdown (also one made before it registered); a second request does not force", async () => {
    const { stop, exits } = stopRequests();
    const reasons: string[] = [];
    stop.request("stdin closed");
    stop.onStop((reason) => reasons.push(reason));
    stop.request("stdout closed");
    expect(await stop.requested).toBe("stdin closed");
    expect(reasons).toEqual(["stdin closed", "stdout closed"]);
    expect(exits).toEqual([]);
  });

  it("a signal once a stop is under way kills the host first, then exits with 128 + its number", () => {
    const { stop, exits, order } = stopRequests();
    const reasons: string[] = [];
    stop.onStop((reason) => reasons.push(reason));
    stop.onForce(() => order.push("kill host"));
    process.emit("SIGTERM", "SIGTERM");
    expect(reasons).toEqual(["SIGTERM"]);
    expect(exits).toEqual([]);
    process.emit("SIGINT", "SIGINT");
    expect(order).toEqual(["kill host", "exit"]);
    expect(exits).toEqual([signalExitCode("SIGINT")]);
    expect(signalExitCode("SIGINT")).toBe(130);
    expect(signalExitCode("SIGTERM")).toBe(143);
  });

  it("a stop that came from stdin makes the first signal force the exit too; a throwing kill still exits", () => {
    const { stop, exits } = stopRequests();
    stop.request("stdin closed");
    stop.onForce(() => {
      throw new Error("no host");
    });
    process.emit("SIGHUP", "SIGHUP");
    expect(exits).toEqual([129]);
  });
});
