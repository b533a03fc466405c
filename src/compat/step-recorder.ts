/**
 * Records the ordered steps of an assessment (docs/runtime-contract.md §3). The first failure decides: every
 * later step is recorded as skipped, and the failing step's message becomes the verdict.
 */
import { describeError, isBridgeError } from "../util/errors.js";
import { evidenceOf, type Evidence } from "../install/install-problem.js";
import type { AssessmentStep, StepId, StepStatus } from "./types.js";

export const STEP_ORDER: readonly StepId[] = ["layout", "metadata", "platform", "version", "host-artifacts", "cli-integrity"];

export const STEP_TITLES: Readonly<Record<StepId, string>> = {
  layout: "install layout",
  metadata: "bundle metadata",
  platform: "platform",
  version: "app and CLI version",
  "host-artifacts": "host files and exports",
  "cli-integrity": "agent CLI integrity",
};

export class StepRecorder {
  readonly steps: AssessmentStep[] = [];
  failure: { step: StepId; message: string } | undefined;

  record(id: StepId, status: StepStatus, summary: string, evidence?: Evidence): void {
    const step: AssessmentStep = { id, status, summary };
    if (evidence !== undefined && Object.keys(evidence).length > 0) step.evidence = evidence;
    this.steps.push(step);
  }

  fail(id: StepId, message: string, evidence?: Evidence): void {
    this.record(id, "fail", message, evidence);
    this.failure = { step: id, message };
    for (const later of STEP_ORDER.slice(STEP_ORDER.indexOf(id) + 1)) {
      this.record(later, "skipped", `not checked: ${STEP_TITLES[id]} failed`);
    }
  }

  /**
   * Runs one step body; an install problem (`installProblem`: UNSUPPORTED_ZCODE with evidence)
   * fails the step with its message and evidence, anything else as an unexpected error.
   */
  async run<T>(id: StepId, body: () => Promise<T>): Promise<T | undefined> {
    try {
      return await body();
    } catch (error) {
      if (isBridgeError(error, "UNSUPPORTED_ZCODE")) this.fail(id, error.message, evidenceOf(error));
      else {
        this.fail(
          id,
          `Unexpected error while checking the ${STEP_TITLES[id]}: ${describeError(error)}. ` +
            `Reinstall ZCode; if this persists, report it with the output of "zcode-acp check --json".`,
          {
            error: { actual: describeError(error) },
          },
        );
      }
      return undefined;
    }
  }
}
