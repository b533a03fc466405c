/** The one classification of "outcome unknown" (src/util/errors.ts), shared by the native and session layers. */
import { describe, expect, it } from "vitest";
import { BridgeError, isOutcomeUnknown, OUTCOME_UNKNOWN_CODES } from "../../../src/util/errors.js";

describe("isOutcomeUnknown", () => {
  it("is true for a lost answer: a timeout, a closed channel, an exited host, the channel's limits", () => {
    for (const code of ["HOST_TIMEOUT", "CHANNEL_CLOSED", "HOST_EXITED", "CHANNEL_OVERFLOW", "FRAME_TOO_LARGE"] as const) {
      expect(isOutcomeUnknown(new BridgeError(code, "x"))).toBe(true);
    }
    expect([...OUTCOME_UNKNOWN_CODES].sort()).toEqual([
      "CHANNEL_CLOSED",
      "CHANNEL_OVERFLOW",
      "FRAME_TOO_LARGE",
      "HOST_EXITED",
      "HOST_TIMEOUT",
    ]);
  });

  it("is false for a refusal, a start failure, and anything that is not a BridgeError", () => {
    for (const code of ["HOST_CALL_FAILED", "HOST_START_FAILED", "SESSION_NOT_FOUND", "INVALID_PARAMS", "METHOD_NOT_ALLOWED"] as const) {
      expect(isOutcomeUnknown(new BridgeError(code, "x"))).toBe(false);
    }
    expect(isOutcomeUnknown(new Error("HOST_TIMEOUT"))).toBe(false);
    expect(isOutcomeUnknown({ code: "HOST_TIMEOUT" })).toBe(false);
    expect(isOutcomeUnknown(undefined)).toBe(false);
  });
});
