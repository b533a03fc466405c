import { defineConfig } from "vitest/config";

/**
 * Three projects: every test on the zcode-task-v1 line (simulated ZCode 3.11.2, the fixtures'
 * default), and the end-to-end suites that drive ACP sessions again on the zcode-task-v2 line
 * (simulated ZCode 3.12.3, and 3.14.4, the release most users run now). The suites read the release from ZCODE_ACP_SIM_RELEASE
 * (fixtures/sim-install.ts). test/README.md describes the folders.
 */
const E2E = ["test/e2e/{acp,conformance,faults,hardening,interactions,v4}/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: process.env.CI_SUMMARY_FILE ? ["default", ["json", { outputFile: process.env.CI_SUMMARY_FILE }]] : ["default"],
    projects: [
      { extends: true, test: { name: "v1 (3.11.2)", include: ["test/**/*.test.ts"], env: { ZCODE_ACP_SIM_RELEASE: "3.11.2" } } },
      { extends: true, test: { name: "v2 (3.12.3)", include: E2E, env: { ZCODE_ACP_SIM_RELEASE: "3.12.3" } } },
      // the release most users run now: recognised by its public host-entry fingerprint, RPC module pinned on first use
      { extends: true, test: { name: "v2 (3.14.4)", include: E2E, env: { ZCODE_ACP_SIM_RELEASE: "3.14.4" } } },
    ],
  },
});
