import { availableParallelism } from "node:os";
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
    // one test file per core, and at least two: the end-to-end files mostly wait on the processes
    // they spawn (vitest's default of cores - 1 ran them one at a time on a 2-core machine);
    // ZCODE_ACP_TEST_WORKERS overrides it
    maxWorkers: Number(process.env.ZCODE_ACP_TEST_WORKERS) || Math.max(2, availableParallelism()),
    reporters: process.env.CI_SUMMARY_FILE ? ["default", ["json", { outputFile: process.env.CI_SUMMARY_FILE }]] : ["default"],
    projects: [
      { extends: true, test: { name: "v1 (3.11.2)", include: ["test/**/*.test.ts"], env: { ZCODE_ACP_SIM_RELEASE: "3.11.2" } } },
      { extends: true, test: { name: "v2 (3.12.3)", include: E2E, env: { ZCODE_ACP_SIM_RELEASE: "3.12.3" } } },
      // the release most users run now: recognised by its public host-entry fingerprint, RPC module pinned on first use
      { extends: true, test: { name: "v2 (3.14.4)", include: E2E, env: { ZCODE_ACP_SIM_RELEASE: "3.14.4" } } },
      // a 4.0.0-like install: no sendPrompt, no onDynamicSessionEvent, no zcode-task answer / stop calls;
      // reading and answering only through V4 (frames bounded in the runtime, docs/zcode-host.md §16);
      // provider-header requests come on onDynamicWorkspaceProviderRuntimeHeadersRequest (zcode-v4.md
      // §5.4, docs/zcode-host.md §16.7), and e2e-release-notices runs as a release without advisories
      // (no manifest pins 4.0.0). Every end-to-end suite runs here.
      {
        extends: true,
        test: {
          name: "v3 (4.0.0)",
          include: E2E,
          env: { ZCODE_ACP_SIM_RELEASE: "4.0.0" },
        },
      },
    ],
  },
});
