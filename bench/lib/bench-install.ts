/** A simulated install for the benchmarks, and the environment the bridge and the host get. */
import { createSimulatedInstall, type SimInstall } from "../../fixtures/sim-install.js";
import type { SimRelease } from "../../fixtures/sim-releases.js";

export interface BenchInstall {
  sim: SimInstall;
  /** process.env + the install's env, without the call log (it would cost the host a line per event) */
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

/** `release`: the simulated release (default: the fixtures' default, 3.11.2) */
export async function createBenchInstall(release?: SimRelease): Promise<BenchInstall> {
  const sim = await createSimulatedInstall(release ? { release } : {});
  const env: NodeJS.ProcessEnv = { ...process.env, ...sim.env, ZCODE_ACP_LOG_LEVEL: "warn" };
  delete env.ZCODE_SIM_CALL_LOG;
  delete env.ZCODE_SIM_PROFILE;
  return { sim, env, cleanup: () => sim.cleanup() };
}
