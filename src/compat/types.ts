/**
 * The result of the ordered compatibility assessment (docs/runtime-contract.md §3), shared by
 * `zcode-acp check` and the launcher (which refuses anything not supported).
 */
export type StepStatus = "pass" | "fail" | "diagnostic" | "skipped";

export type StepId = "layout" | "metadata" | "platform" | "version" | "host-artifacts" | "cli-integrity";

export interface AssessmentStep {
  id: StepId;
  status: StepStatus;
  /** human-readable summary of what was checked and found */
  summary: string;
  /** expected vs actual evidence, e.g. { expected: "sha…", actual: "sha…" } per field */
  evidence?: Record<string, { expected?: unknown; actual?: unknown }>;
}

import type { InstallPaths } from "../install/types.js";
import type { Advisory, Manifest, RpcExports } from "../manifest/types.js";

export type { InstallPaths } from "../install/types.js";
export type { Advisory, ArtifactDescriptor, Manifest, PerChannel, ProtocolDescriptor } from "../manifest/types.js";

export interface Assessment {
  supported: boolean;
  /** the first failing step decides (docs/runtime-contract.md §3) */
  failedStep?: StepId;
  /** what to do, for people */
  message: string;
  steps: AssessmentStep[];
  manifest?: Manifest;
  manifestFile?: string;
  /** "pinned" (shipped with zcode-acp) or "local" (accepted with `zcode-acp onboard --accept`) */
  manifestTrust?: "pinned" | "local";
  /** how the RPC module was found and the export names of its roles */
  rpc?: { path: string; exports: RpcExports; foundBy: "shape" };
  /** the install root that was assessed (as given or defaulted), also when it failed early */
  installRoot?: string;
  /** "<platform>-<arch>" of this system */
  systemPlatform?: string;
  paths?: InstallPaths;
  appVersion?: string;
  cliVersion?: string;
  cliIntegrity?: "verified" | "modified" | "unknown";
  /** true: no manifest covers this app version, so `zcode-acp onboard` can review the build (adr/0021) */
  unpinned?: boolean;
  /** the advisories of the selected manifest, once its host entry is verified (adr/0021); empty: none */
  advisories?: Advisory[];
  diagnostics: {
    appBuild?: string;
    metadataSha256?: string;
    /** fingerprint cache use during this assessment (hits = facts not recomputed) */
    cache?: { file?: string; hits: number; misses: number; rebuilt: boolean };
  };
}
