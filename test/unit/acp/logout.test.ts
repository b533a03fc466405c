import { describe, expect, it } from "vitest";
import { ConnectionSignIn, LOGGED_OUT_MESSAGE } from "../../../src/acp/logout.js";
import { isBridgeError } from "../../../src/util/errors.js";

const refusal = (signIn: ConnectionSignIn): unknown => {
  try {
    signIn.require();
    return undefined;
  } catch (error) {
    return error;
  }
};

describe("ConnectionSignIn (logout scoped to the connection)", () => {
  it("is signed in until logout, then AUTH_REQUIRED with the logged-out message until authenticate succeeds", async () => {
    const signIn = new ConnectionSignIn();
    expect(refusal(signIn)).toBeUndefined();
    signIn.logout();
    const error = refusal(signIn);
    expect(isBridgeError(error, "AUTH_REQUIRED")).toBe(true);
    expect((error as Error).message).toBe(LOGGED_OUT_MESSAGE);
    await expect(signIn.authenticate(() => Promise.reject(new Error("ZCode is signed out")))).rejects.toThrow("signed out");
    expect(refusal(signIn)).toBeDefined(); // a failed check does not sign the connection in
    await signIn.authenticate(() => Promise.resolve());
    expect(refusal(signIn)).toBeUndefined();
  });

  it("an authenticate whose check ends after a later logout does not undo that logout", async () => {
    const signIn = new ConnectionSignIn();
    let finish!: () => void;
    const authenticating = signIn.authenticate(() => new Promise<void>((resolve) => (finish = resolve)));
    signIn.logout();
    finish();
    await authenticating;
    expect(isBridgeError(refusal(signIn), "AUTH_REQUIRED")).toBe(true);
  });
});
