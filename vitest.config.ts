import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Four projects: every test on the zcode-task-v1 line (simulated ZCode 3.11.2, the fixtures'
 * default), and the end-to-end suites that drive ACP sessions again on the zcode-task-v2 line
 * (simulated ZCode 3.12.3, and 3.14.4, the release most users run now) and on the zcode-task-v3
 * line (simulated 4.0.0: V4 reading, input and answers only). The suites read the release from ZCODE_ACP_SIM_RELEASE
 * (fixtures/sim-install.ts). test/README.md describes the folders.
 *
 * What runs once and what runs per release (CI time, adr/0037): the files that drive sessions
 * through the release line's native API run on every line (E2E_LINE); the ACP-edge files whose
 * behaviour does not depend on the line (the handshake, the requirement table, the advisory
 * notice, stdio hardening without a line branch) run on 3.11.2 only, with everything else. 3.14.4
 * is the zcode-task-v2 line again, with the same protocol as 3.12.3: what differs is how the
 * install is recognised (the RPC module found by shape and pinned on first use, agent CLI 0.16.9),
 * which every session start goes through, so it runs the session suites (test/e2e/acp) only.
 */
const LINE_INDEPENDENT = [
  ...configDefaults.exclude,
  "test/e2e/conformance/{advisory,handshake,requirements}.test.ts",
  "test/e2e/hardening/{host-environment,log-file-private,manifest-files,prompt-content,session-cwd,unknown-session}.test.ts",
];
const E2E_LINE = ["test/e2e/{acp,conformance,faults,hardening,interactions,v4}/**/*.test.ts"];
const V2_AGAIN = ["test/e2e/acp/**/*.test.ts"];

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
      {
        extends: true,
        test: { name: "v2 (3.12.3)", include: E2E_LINE, exclude: LINE_INDEPENDENT, env: { ZCODE_ACP_SIM_RELEASE: "3.12.3" } },
      },
      // the release most users run now: recognised by its public host-entry fingerprint, RPC module pinned on first use
      { extends: true, test: { name: "v2 (3.14.4)", include: V2_AGAIN, env: { ZCODE_ACP_SIM_RELEASE: "3.14.4" } } },
      // a 4.0.0-like install: no sendPrompt, no onDynamicSessionEvent, no zcode-task answer / stop calls;
      // reading and answering only through V4 (frames bounded in the runtime, docs/zcode-host.md §16);
      // provider-header requests come on onDynamicWorkspaceProviderRuntimeHeadersRequest (zcode-v4.md
      // §5.4, docs/zcode-host.md §16.7), and e2e-release-notices runs as a release without advisories
      // (no manifest pins 4.0.0). Every suite of the line runs here.
      {
        extends: true,
        test: {
          name: "v3 (4.0.0)",
          include: E2E_LINE,
          exclude: LINE_INDEPENDENT,
          env: { ZCODE_ACP_SIM_RELEASE: "4.0.0" },
        },
      },
    ],
  },
});
