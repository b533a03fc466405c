#!/usr/bin/env node
/**
 * Entry point of the `zcode-acp` binary. Parses the command line and dispatches.
 * In ACP mode stdout carries ACP JSON-RPC and nothing else.
 */
import { enableCompileCache } from "./compile-cache.js";
import { parseCli, USAGE, type CliOptions } from "./options.js";
import { PACKAGE_VERSION } from "../version.js";
import { isBridgeError, describeError } from "../util/errors.js";

async function main(): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCli(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`zcode-acp: ${isBridgeError(error) ? error.message : describeError(error)}\n`);
    return 2;
  }
  switch (options.command) {
    case "help":
      process.stdout.write(USAGE);
      return 0;
    case "version":
      process.stdout.write(`zcode-acp ${PACKAGE_VERSION}\n`);
      return 0;
    // each command loads only its own modules: start-up time is part of the product
    case "check":
      enableCompileCache();
      return (await import("./check-command.js")).runCheckCommand(options);
    case "onboard":
      return (await import("./onboard-command.js")).runOnboardCommand(options);
    case "acp":
      enableCompileCache();
      return (await import("./acp-command.js")).runAcpCommand(options);
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
