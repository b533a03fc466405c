// Runs the vitest suite (or the given files) with the node running this script and ends with the
// plain line "N passed, M failed" (the landing check reads that line). Exit code: vitest's own.
//
// With --lint first (`npm test`), TypeScript, ESLint and Prettier check the tree after the tests: each one
// that fails counts as one failure in that line (and makes the exit code 1), and its report is
// printed just above it. `npm run format` fixes formatting and what ESLint can fix by itself.
//
// CI runs several suites (the machine's Node, then Node 22 and 24: .ci/run). With
// ZCODE_ACP_TEST_TOTALS=<file> each run appends its counts to that file and prints a labelled
// line instead, and `node test/run-tests.mjs --total <file>` prints the one plain line summing
// every run (exit 1 when any run failed).
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const lint = args[0] === "--lint";
if (lint) args.shift();

if (args[0] === "--total") {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let bad = false;
  let runs = 0;
  const failures = [];
  let text = "";
  try {
    text = readFileSync(args[1], "utf8");
  } catch {
    // no run recorded anything: that is a failure, not a pass
  }
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    runs += 1;
    try {
      const run = JSON.parse(line);
      passed += run.passed ?? 0;
      failed += run.failed ?? 0;
      skipped += run.skipped ?? 0;
      for (const name of run.failures ?? []) failures.push(`${run.label}: ${name}`);
      if (run.code !== 0) bad = true;
    } catch {
      failed += 1;
      bad = true;
    }
  }
  if (runs === 0) failed = Math.max(failed, 1);
  // the failed tests by name, right above the last line (a log shown only by its end still names them)
  for (const name of failures) console.log(`failed: ${name}`);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  process.exit(failed > 0 || bad || runs === 0 ? 1 : 0);
}

const dir = mkdtempSync(join(tmpdir(), "zcode-acp-tests-"));
const summaryFile = join(dir, "vitest.json");
const result = spawnSync(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...args], {
  stdio: "inherit",
  env: { ...process.env, CI_SUMMARY_FILE: summaryFile },
});
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
try {
  const report = JSON.parse(readFileSync(summaryFile, "utf8"));
  for (const file of report.testResults ?? []) {
    const where = String(file.name ?? "").replace(`${process.cwd()}/`, "");
    const tests = (file.assertionResults ?? []).filter((t) => t.status === "failed");
    for (const t of tests) failures.push(`${where} > ${t.fullName ?? t.title}: ${firstLine(t.failureMessages?.[0])}`);
    if (tests.length === 0 && file.status === "failed") failures.push(`${where}: ${firstLine(file.message)}`);
  }
  passed = report.numPassedTests ?? 0;
  failed = report.numFailedTests ?? 0;
  // a suite that fails to load has no failed test of its own: count the suite
  if (failed === 0) failed = report.numFailedTestSuites ?? 0;
  skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
} catch {
  failed = Math.max(failed, 1);
}
rmSync(dir, { recursive: true, force: true });
let code = result.status ?? 1;
if (code !== 0 && failed === 0) failed = 1;

const lintFailures = lint ? runLint() : [];
const totals = process.env.ZCODE_ACP_TEST_TOTALS;
if (totals) {
  const label = `Node ${process.version}${args.length > 0 ? ` (${args.join(" ")})` : ""}`;
  appendFileSync(totals, `${JSON.stringify({ label, passed, failed, skipped, code, failures: failures.slice(0, 50) })}\n`);
  console.log(`${label}: ${passed} tests passed and ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  if (lint) {
    const lintCode = lintFailures.length > 0 ? 1 : 0;
    appendFileSync(totals, `${JSON.stringify({ label: "lint", passed: 0, failed: lintFailures.length, code: lintCode })}\n`);
    console.log(`lint: ${lintFailures.length > 0 ? `${lintFailures.join(" and ")} failed` : "TypeScript, ESLint and Prettier passed"}`);
  }
} else {
  for (const name of failures) console.log(`failed: ${name}`);
  console.log(`${passed} passed, ${failed + lintFailures.length} failed${skipped ? `, ${skipped} skipped` : ""}`);
}
if (lintFailures.length > 0 && code === 0) code = 1;
process.exit(code);

/** the first line of a failure message, at most 300 characters */
function firstLine(text) {
  return String(text ?? "")
    .split("\n")[0]
    .slice(0, 300);
}

/** ESLint, then Prettier, each over the whole tree; returns the names of those that failed */
function runLint() {
  const checks = [
    // vitest strips types without checking them: the tests and fixtures are type-checked here
    ["TypeScript", "node_modules/typescript/bin/tsc", ["-p", "tsconfig.json", "--noEmit"]],
    ["ESLint", "node_modules/eslint/bin/eslint.js", ["."]],
    ["Prettier", "node_modules/prettier/bin/prettier.cjs", ["--check", "."]],
  ];
  const failures = [];
  for (const [name, bin, binArgs] of checks) {
    console.log(`\n== lint: ${name} ==`);
    const run = spawnSync(process.execPath, [bin, ...binArgs], { stdio: "inherit" });
    if (run.status === 0) continue;
    failures.push(name);
    console.log(`lint: ${name} failed (its report is above; \`npm run format\` fixes formatting and what ESLint can fix)`);
  }
  return failures;
}
