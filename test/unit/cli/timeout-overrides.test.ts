/** ZCODE_ACP_TIMEOUTS_MS: the fault tests' way to shorten host timeouts; invalid input keeps the defaults. */
import { describe, expect, it } from "vitest";
import { timeoutOverridesFrom } from "../../../src/cli/timeout-overrides.js";
import type { Logger } from "../../../src/log/logger.js";

function recorder(): { logger: Logger; warnings: string[] } {
  const warnings: string[] = [];
  const logger: Logger = {
    level: "warn",
    error: () => undefined,
    warn: (m) => void warnings.push(m),
    info: () => undefined,
    debug: () => undefined,
    child: () => logger,
  };
  return { logger, warnings };
}

describe("ZCODE_ACP_TIMEOUTS_MS", () => {
  it("reads positive integer milliseconds by key", () => {
    const { logger, warnings } = recorder();
    expect(timeoutOverridesFrom({ ZCODE_ACP_TIMEOUTS_MS: '{"startup":500,"cancel":300}' }, logger)).toEqual({ startup: 500, cancel: 300 });
    expect(timeoutOverridesFrom({}, logger)).toEqual({});
    expect(warnings).toEqual([]);
  });

  it("ignores what is not JSON, not an object, or not a positive integer, with a warning", () => {
    const { logger, warnings } = recorder();
    expect(timeoutOverridesFrom({ ZCODE_ACP_TIMEOUTS_MS: "{startup:5" }, logger)).toEqual({});
    expect(timeoutOverridesFrom({ ZCODE_ACP_TIMEOUTS_MS: "[1,2]" }, logger)).toEqual({});
    expect(
      timeoutOverridesFrom(
        {
          ZCODE_ACP_TIMEOUTS_MS:
            '{"setMode":0,"setModel":-1,"cancel":1.5,"startup":"100","dispose":null,"readSession":99999999999,"sendPrompt":7,"agent.sendPrompt":5}',
        },
        logger,
      ),
    ).toEqual({ sendPrompt: 7 });
    expect(warnings.length).toBe(2 + 7);
  });
});
