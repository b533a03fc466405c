/**
 * Adds test-only scenarios to one generated simulated install (not to fixtures/): a single
 * AskUserQuestion question, single- or multi-select (sim-scenarios/single-question.js). The
 * file is copied next to the install's scenario modules and merged into its scenario table.
 * Only the install's host index and RPC module are fingerprinted (docs/runtime-contract.md §2), so the
 * install still verifies. Fails loudly if the scenario table's layout changed.
 */
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SimInstall } from "../../fixtures/sim-install.js";

const SOURCE = fileURLToPath(new URL("./sim-scenarios/single-question.js", import.meta.url));
const ANCHOR = "export const SCENARIOS = Object.freeze({";

export async function addQuestionScenarios(sim: SimInstall): Promise<void> {
  const hostDir = join(sim.appArchive, "out/host");
  await copyFile(SOURCE, join(hostDir, "scenarios/test-single-question.js"));
  const tablePath = join(hostDir, "sim-scenarios.js");
  const table = await readFile(tablePath, "utf8");
  if (!table.includes(ANCHOR)) throw new Error(`${tablePath}: scenario table not found; update question-scenarios.ts`);
  const patched = table.replace(ANCHOR, `${ANCHOR} ...testScenarios,`);
  await writeFile(tablePath, `import { testScenarios } from "./scenarios/test-single-question.js";\n${patched}`);
}
