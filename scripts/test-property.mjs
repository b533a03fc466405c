#!/usr/bin/env node
// The session write-order property test (adr/0036), per simulated release, with more runs than CI's:
//   npm run test:property -- --runs 1000 [--seed 42]
// (or ZCODE_ACP_PROPERTY_RUNS / ZCODE_ACP_PROPERTY_SEED). One vitest worker, the unit project.
import { spawnSync } from "node:child_process";

const args = process.argv.slice(2);
const env = { ...process.env };
for (let i = 0; i < args.length; i++) {
  const value = args[i + 1];
  if (args[i] === "--runs" && value && /^\d+$/.test(value)) env.ZCODE_ACP_PROPERTY_RUNS = value;
  else if (args[i] === "--seed" && value && /^-?\d+$/.test(value)) env.ZCODE_ACP_PROPERTY_SEED = value;
  else {
    console.error(`unknown or malformed argument "${args[i]}": use --runs <count> and --seed <integer>`);
    process.exit(2);
  }
  i++;
}
const result = spawnSync(
  "npx",
  ["vitest", "run", "--project", "v1 (3.11.2)", "--maxWorkers=1", "--minWorkers=1", "test/unit/session/write-order.property.test.ts"],
  { stdio: "inherit", env },
);
process.exit(result.status ?? 1);
