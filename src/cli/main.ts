#!/usr/bin/env node
/**
 * Entry point of the `zcode-acp` binary, the composition root: resolves the settings once
 * (./config.ts) and dispatches. In ACP mode stdout carries ACP JSON-RPC and nothing else.
 */
import { enableCompileCache } from "./compile-cache.js";
import { resolveConfig, type Config } from "./config.js";
import { TTY_HINT, USAGE } from "./options.js";
import { PACKAGE_VERSION } from "../version.js";
import { isBridgeError, describeError } from "../util/errors.js";

async function main(): Promise<number> {
  let config: Config;
  try {
    config = resolveConfig(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`zcode-acp: ${isBridgeError(error) ? error.message : describeError(error)}\n`);
    return 2;
  }
  switch (config.command) {
    case "help":
      process.stdout.write(USAGE);
      return 0;
    case "version":
      process.stdout.write(`zcode-acp ${PACKAGE_VERSION}\n`);
      return 0;
    // each command loads only its own modules: start-up time is part of the product
    case "check":
      enableCompileCache(config.cacheDir);
      return (await import("./check-command.js")).runCheckCommand(config);
    case "onboard":
      return (await import("./onboard-command.js")).runOnboardCommand(config);
    case "acp":
      // started by hand in a terminal: it would wait silently for JSON-RPC (stdout stays ACP-only)
      if (process.stdin.isTTY) process.stderr.write(TTY_HINT);
      enableCompileCache(config.cacheDir);
      return (await import("./acp-command.js")).runAcpCommand(config);
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`zcode-acp: unexpected failure: ${describeError(error)}\n`);
    process.exitCode = 1;
  },
);
