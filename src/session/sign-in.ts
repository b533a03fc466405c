/** What the user must do when ZCode has no usable provider (AUTH_REQUIRED). */
export const SIGN_IN_MESSAGE =
  "ZCode has no usable model provider. Open the ZCode desktop app, sign in (or set up a provider), then try again.";
