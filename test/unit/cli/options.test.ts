import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../src/cli/config.js";
import { isBridgeError } from "../../../src/util/errors.js";

describe("command line", () => {
  it("defaults to the ACP agent with info logs", () => {
    const o = resolveConfig([], {});
    expect(o).toMatchObject({ command: "acp", logLevel: "info", json: false });
  });
  it("reads options from the environment, flags win", () => {
    const o = resolveConfig(["check", "--manifest", "/m.json"], {
      ZCODE_ACP_MANIFEST: "/env.json",
      ZCODE_ACP_ZCODE_INSTALL: "/opt/Z",
      ZCODE_ACP_LOG_LEVEL: "debug",
    });
    expect(o).toMatchObject({ command: "check", manifest: "/m.json", zcodeInstall: "/opt/Z", logLevel: "debug" });
  });
  it("accepts --flag=value", () => {
    expect(resolveConfig(["--zcode-install=/x"], {}).zcodeInstall).toBe("/x");
  });
  it("reads onboard --probe and --report", () => {
    expect(resolveConfig(["onboard", "--probe", "--report", "r.md"], {})).toMatchObject({
      command: "onboard",
      probe: true,
      report: "r.md",
    });
    expect(resolveConfig(["onboard"], {})).toMatchObject({ probe: false, report: undefined });
  });
  it.each([
    [["--bogus"]],
    [["frobnicate"]],
    [["--json"]],
    [["--log-level", "loud"]],
    [["--manifest"]],
    [["check", "--probe"]],
    [["--probe"]],
    [["onboard", "--report", "r.json"]],
    [["onboard", "--probe", "--report"]],
  ])("rejects %j as a usage error", (argv) => {
    let caught: unknown;
    try {
      resolveConfig(argv, {});
    } catch (e) {
      caught = e;
    }
    expect(isBridgeError(caught, "USAGE")).toBe(true);
  });
});
