// Runs the whole vitest suite and ends with the plain line "N passed, M failed"
// (the landing check reads that line). Exit code: vitest's own.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "zcode-acp-tests-"));
const summaryFile = join(dir, "vitest.json");
const result = spawnSync(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, CI_SUMMARY_FILE: summaryFile },
});
let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const report = JSON.parse(readFileSync(summaryFile, "utf8"));
  passed = report.numPassedTests ?? 0;
  failed = report.numFailedTests ?? 0;
  // a suite that fails to load has no failed test of its own: count the suite
  if (failed === 0) failed = report.numFailedTestSuites ?? 0;
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
} catch {
  failed = Math.max(failed, 1);
}
rmSync(dir, { recursive: true, force: true });
const code = result.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code);
