/** resolveConfig: flags over the environment over the defaults, once, into a frozen object. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_CANCEL_GRACE_MS, DEFAULT_LOG_LEVEL, resolveConfig } from "../../../src/cli/config.js";
import { isBridgeError } from "../../../src/util/errors.js";

const HOME = { HOME: "/h" };

describe("resolveConfig", () => {
  it("has a default for every setting", () => {
    const config = resolveConfig([], HOME, "linux");
    expect(config).toEqual({
      command: "acp",
      json: false,
      accept: false,
      probe: false,
      report: undefined,
      zcodeInstall: undefined,
      manifest: undefined,
      logFile: undefined,
      logLevel: DEFAULT_LOG_LEVEL,
      cacheDir: join("/h", ".cache", "zcode-acp"),
      configDir: join("/h", ".config", "zcode-acp"),
      timeouts: {},
      cancelGraceMs: DEFAULT_CANCEL_GRACE_MS,
      mergeDeltas: true,
      readPath: "legacy",
      diagnostics: false,
      protocolV2: true,
      warnings: [],
    });
  });

  it("reads every setting from the environment", () => {
    const config = resolveConfig([], {
      ...HOME,
      ZCODE_ACP_ZCODE_INSTALL: "/opt/Z",
      ZCODE_ACP_MANIFEST: "/m.json",
      ZCODE_ACP_LOG_FILE: "/tmp/log",
      ZCODE_ACP_LOG_LEVEL: "debug",
      ZCODE_ACP_CACHE_DIR: "/cache",
      ZCODE_ACP_CONFIG_DIR: "/config",
      ZCODE_ACP_TIMEOUTS_MS: '{"startup":500}',
      ZCODE_ACP_CANCEL_GRACE_MS: "400",
      ZCODE_ACP_MERGE_DELTAS: "0",
      ZCODE_ACP_DIAGNOSTICS: "1",
      ZCODE_ACP_PROTOCOL_V2: "0",
    });
    expect(config).toMatchObject({
      zcodeInstall: "/opt/Z",
      manifest: "/m.json",
      logFile: "/tmp/log",
      logLevel: "debug",
      cacheDir: "/cache",
      configDir: "/config",
      timeouts: { startup: 500 },
      cancelGraceMs: 400,
      mergeDeltas: false,
      diagnostics: true,
      protocolV2: false,
      warnings: [],
    });
  });

  it("a flag wins over its variable; an empty variable counts as unset", () => {
    const env = { ZCODE_ACP_ZCODE_INSTALL: "/env", ZCODE_ACP_MANIFEST: "", ZCODE_ACP_LOG_FILE: "/env.log", ZCODE_ACP_LOG_LEVEL: "loud" };
    const config = resolveConfig(["check", "--zcode-install", "/flag", "--log-file=/flag.log", "--log-level", "warn"], env);
    expect(config).toMatchObject({ command: "check", zcodeInstall: "/flag", manifest: undefined, logFile: "/flag.log", logLevel: "warn" });
  });

  it("is frozen, nested values included", () => {
    const config = resolveConfig([], { ZCODE_ACP_TIMEOUTS_MS: '{"cancel":300,"nope":1}' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.timeouts)).toBe(true);
    expect(Object.isFrozen(config.warnings)).toBe(true);
    expect(Object.isFrozen(config.warnings[0])).toBe(true);
    expect(() => {
      (config as { logLevel: string }).logLevel = "debug";
    }).toThrow(TypeError);
  });

  it("keeps the defaults of unusable tuning variables and says why", () => {
    const config = resolveConfig([], { ZCODE_ACP_TIMEOUTS_MS: '{"cancel":300,"nope":1,"startup":0}', ZCODE_ACP_CANCEL_GRACE_MS: "soon" });
    expect(config.timeouts).toEqual({ cancel: 300 });
    expect(config.cancelGraceMs).toBe(DEFAULT_CANCEL_GRACE_MS);
    expect(config.warnings.map((w) => w.message)).toEqual([
      "ZCODE_ACP_TIMEOUTS_MS: ignored an unknown timeout name",
      "ZCODE_ACP_TIMEOUTS_MS: ignored an invalid timeout",
      "ZCODE_ACP_CANCEL_GRACE_MS must be an integer between 1 and 600000; using the default",
    ]);
    expect(config.warnings[0]!.fields).toMatchObject({ key: "nope" });
  });

  it("an invalid log level is a usage error, naming where it came from", () => {
    const refused = (argv: string[], env: NodeJS.ProcessEnv): unknown => {
      try {
        resolveConfig(argv, env);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const fromEnv = refused([], { ZCODE_ACP_LOG_LEVEL: "loud" });
    expect(isBridgeError(fromEnv, "USAGE") && fromEnv.message).toMatch(
      /^ZCODE_ACP_LOG_LEVEL must be one of error, warn, info, debug, got "loud"/,
    );
    const fromFlag = refused(["--log-level", "loud"], {});
    expect(isBridgeError(fromFlag, "USAGE") && fromFlag.message).toMatch(/^--log-level must be one of/);
  });

  it("finds the cache dir of each platform", () => {
    expect(resolveConfig([], { HOME: "/h" }, "darwin").cacheDir).toBe(join("/h", "Library", "Caches", "zcode-acp"));
    expect(resolveConfig([], { LOCALAPPDATA: "/l" }, "win32").cacheDir).toBe(join("/l", "zcode-acp", "Cache"));
    expect(resolveConfig([], { XDG_CACHE_HOME: "/x", XDG_CONFIG_HOME: "/y" }, "linux")).toMatchObject({
      cacheDir: join("/x", "zcode-acp"),
      configDir: join("/y", "zcode-acp"),
    });
  });
});
