// Only verified bytes run (docs/runtime-contract.md §2.1): right before the host index and the RPC module
// are imported, their SHA-256 is computed again here, inside the Electron process, and must equal
// what the bridge verified. Electron's fs reads members of app.asar transparently, so the same code
// serves a packed archive and the directory form.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

function sha256(path) {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** @returns {string | undefined} what differs, for people (paths only, never contents) */
export function verifyHostFiles(config) {
  const checks = [
    ["host index", config.hostIndex, config.expectedSha256.hostIndex],
    ["RPC module", config.rpcModule, config.expectedSha256.rpcModule],
  ];
  for (const [what, path, expected] of checks) {
    let actual;
    try {
      actual = sha256(path);
    } catch (error) {
      return `the ${what} ${path} cannot be read (${error && error.code ? error.code : "error"})`;
    }
    if (actual !== expected) return `the ${what} ${path} changed after zcode-acp verified it (SHA-256 ${actual}, verified ${expected})`;
  }
  return undefined;
}
