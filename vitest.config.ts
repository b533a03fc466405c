import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Four projects: the zcode-task-v1 line (simulated ZCode 3.11.2, the fixtures' default) runs every
 * test that does not depend on the release line and the end-to-end files whose subject differs on
 * it; the end-to-end suites that drive ACP sessions run again on the zcode-task-v2 line (simulated
 * 3.12.3, and 3.14.4, the release most users run now) and on the zcode-task-v3 line (simulated
 * 4.0.0: V4 reading, input and answers only). The suites read the release from
 * ZCODE_ACP_SIM_RELEASE (fixtures/sim-install.ts). test/README.md describes the folders.
 *
 * What runs once and what runs per release (CI time, adr/0037): the files that drive sessions
 * through the release line's native API run on every line (E2E_LINE), except where their subject
 * is the same on two lines:
 * - the ACP-edge files whose behaviour does not depend on the line (the handshake, the requirement
 *   table, the advisory notice, stdio hardening without a line branch) run on 3.11.2 only
 *   (LINE_INDEPENDENT); the stdio hardening files whose only line branch is zcode-task-v3's
 *   answers run on 3.11.2 and 4.0.0, not on 3.12.3 (V1_NOT_V2: the two legacy lines answer and
 *   stop alike, and .ci/run reruns them on 3.11.2 with Node 22 and 24);
 * - what zcode-task-v1 does differently (sign-in from readWorkspaceState, models as refs, plan as a
 *   mode of its own, its snapshots used as they come, slash commands in the snapshot) is what a
 *   session's start, load, resume, settings, modes, models, opening updates, plan approval and
 *   release notices go through: those files run on 3.11.2 and 3.12.3. The files whose subject is
 *   the same on both legacy lines — V4 input (both take it alike), host faults, the permission and
 *   question answers (the same zcode-task calls), history paging, subagents, cancel, ACP v2,
 *   compaction and plan updates, the session list — run on 3.12.3 and 4.0.0, not on 3.11.2
 *   (V2_NOT_V1; e2e-subagent-cancel ran the simulated 3.18.2 on every legacy project);
 * - 3.14.4 is the zcode-task-v2 line again, with the same protocol as 3.12.3: what differs is how
 *   the install is recognised (the RPC module found by shape and pinned on first use, agent CLI
 *   0.16.9: every session start, load and resume goes through it), its manifest's advisories (none)
 *   and its rows pages (session/fork, advertised in initialize), and its queue held after a failed
 *   turn (adr/0038; not reported on its legacy reading): it runs the session files that exercise
 *   those (V2_AGAIN).
 */
const LINE_INDEPENDENT = [
  ...configDefaults.exclude,
  "test/e2e/conformance/{advisory,handshake,requirements}.test.ts",
  "test/e2e/hardening/{host-environment,log-file-private,manifest-files,prompt-content,session-cwd,unknown-session}.test.ts",
];
const E2E_LINE = ["test/e2e/{acp,conformance,faults,hardening,interactions,v4}/**/*.test.ts"];
const V1_NOT_V2 = ["test/e2e/hardening/{cancel-answer-race,log-file-and-signals,malformed-client-messages,oversized-line}.test.ts"];
const V2_NOT_V1 = [
  "test/e2e/acp/{e2e-cancel,e2e-client-view,e2e-compaction-plans,e2e-end-of-input,e2e-history}.test.ts",
  "test/e2e/acp/{e2e-many-sessions,e2e-prompt-failure,e2e-protocol-v2,e2e-session-list}.test.ts",
  "test/e2e/acp/e2e-subagent*.test.ts",
  "test/e2e/{faults,v4}/**/*.test.ts",
  "test/e2e/interactions/{e2e-cancel-request,e2e-headers-cancel-exit,e2e-permissions,e2e-plans-questions,e2e-question-permission}.test.ts",
];
const V2_AGAIN = [
  "test/e2e/acp/{e2e-handshake,e2e-initialize-offer,e2e-prompt,e2e-release-notices,e2e-session-management,e2e-sessions}.test.ts",
  // 3.14 holds ZCode's queue after a failed turn (adr/0038), unreported on its legacy reading
  "test/e2e/acp/{e2e-held-queue,e2e-write-order}.test.ts",
];

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
      {
        extends: true,
        test: {
          name: "v1 (3.11.2)",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...V2_NOT_V1],
          env: { ZCODE_ACP_SIM_RELEASE: "3.11.2" },
        },
      },
      {
        extends: true,
        test: {
          name: "v2 (3.12.3)",
          include: E2E_LINE,
          exclude: [...LINE_INDEPENDENT, ...V1_NOT_V2],
          env: { ZCODE_ACP_SIM_RELEASE: "3.12.3" },
        },
      },
      // the release most users run now: recognised by its public host-entry fingerprint, RPC module pinned on first use;
      // its session starts, resumes, advisories and fork (V2_AGAIN)
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
