import { defineConfig } from "vitest/config";

/**
 * Two projects: every test on the zcode-task-v1 line (simulated ZCode 3.11.2, the fixtures'
 * default), and every end-to-end suite again on the zcode-task-v2 line (simulated ZCode 3.12.3).
 * The suites read the release from ZCODE_ACP_SIM_RELEASE (fixtures/sim-install.ts).
 */
const E2E = ["test/acp/**/*.test.ts", "test/hardening/**/*.test.ts", "test/interactions/e2e-*.test.ts", "test/faults/**/*.test.ts", "test/conformance/**/*.test.ts", "test/e2e/**/*.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    reporters: process.env.CI_SUMMARY_FILE
      ? ["default", ["json", { outputFile: process.env.CI_SUMMARY_FILE }]]
      : ["default"],
    projects: [
      { extends: true, test: { name: "v1 (3.11.2)", include: ["test/**/*.test.ts"], env: { ZCODE_ACP_SIM_RELEASE: "3.11.2" } } },
      { extends: true, test: { name: "v2 (3.12.3)", include: E2E, env: { ZCODE_ACP_SIM_RELEASE: "3.12.3" } } },
    ],
  },
});
