import { defineConfig } from "vitest/config";

/**
 * Four projects: every test on the zcode-task-v1 line (simulated ZCode 3.11.2, the fixtures'
 * default), and the end-to-end suites that drive ACP sessions again on the zcode-task-v2 line
 * (simulated ZCode 3.12.3, and 3.14.4, the release most users run now) and on the zcode-task-v3
 * line (simulated 4.0.0: V4 reading, input and answers only). The suites read the release from ZCODE_ACP_SIM_RELEASE
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
      // a 4.0.0-like install: no sendPrompt, no onDynamicSessionEvent, no zcode-task answer / stop calls.
      // Not yet passing there: provider-header requests (zcode-v4.md §5.4: they need the
      // onDynamicProviderRuntimeHeadersRequest listen the v3 line does not make yet); e2e-release-notices
      // reads the advisories of the release's pinned manifest, and 4.0.0 has none pinned (a simulated guess).
      {
        extends: true,
        test: {
          name: "v3 (4.0.0)",
          include: E2E,
          exclude: [
            "test/e2e/acp/e2e-cancel.test.ts",
            "test/e2e/interactions/e2e-headers-cancel-exit.test.ts",
            "test/e2e/acp/e2e-release-notices.test.ts",
          ],
          env: { ZCODE_ACP_SIM_RELEASE: "4.0.0" },
        },
      },
    ],
  },
});
