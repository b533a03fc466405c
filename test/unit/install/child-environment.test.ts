/** The one list of variables kept from the install's Electron run as Node (adr/0021). */
import { describe, expect, it } from "vitest";
import { electronNodeEnv, isRemovedVariable, removedVariables } from "../../../src/install/child-environment.js";

describe("electronNodeEnv", () => {
  it("removes Node's preload, debug and IPC variables and every ELECTRON_ switch; sets ELECTRON_RUN_AS_NODE=1", () => {
    const base = {
      NODE_OPTIONS: "--require /tmp/x.cjs",
      NODE_PATH: "/tmp/mods",
      NODE_DEBUG: "net",
      NODE_INSPECT_RESUME_ON_START: "1",
      NODE_REPL_EXTERNAL_MODULE: "/tmp/repl.js",
      NODE_CHANNEL_FD: "3",
      NODE_V8_COVERAGE: "/tmp/cov",
      ELECTRON_ENABLE_LOGGING: "1",
      ELECTRON_NO_ASAR: "1",
      ELECTRON_RUN_AS_NODE: "0",
      node_options: "--inspect", // Windows: names are case-insensitive
      // kept: what the user's ZCode needs to reach its service
      HOME: "/home/u",
      HTTPS_PROXY: "http://proxy:3128",
      NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
      ZCODE_DATA_BASE_DIR: "/data",
      UNSET: undefined,
    };
    expect(electronNodeEnv(base)).toEqual({
      HOME: "/home/u",
      HTTPS_PROXY: "http://proxy:3128",
      NODE_EXTRA_CA_CERTS: "/etc/ca.pem",
      ZCODE_DATA_BASE_DIR: "/data",
      ELECTRON_RUN_AS_NODE: "1",
    });
    expect(removedVariables(base)).toEqual([
      "ELECTRON_ENABLE_LOGGING",
      "ELECTRON_NO_ASAR",
      "NODE_CHANNEL_FD",
      "NODE_DEBUG",
      "NODE_INSPECT_RESUME_ON_START",
      "NODE_OPTIONS",
      "NODE_PATH",
      "NODE_REPL_EXTERNAL_MODULE",
      "NODE_V8_COVERAGE",
      "node_options",
    ]);
  });

  it("the check's child runs use the same function (electron-node.ts re-exports it)", async () => {
    const { electronNodeEnv: fromRuns } = await import("../../../src/install/electron-node.js");
    expect(fromRuns).toBe(electronNodeEnv);
    expect(isRemovedVariable("NODE_ENV")).toBe(false);
  });
});
