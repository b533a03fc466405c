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
import type { HostPaths } from "./host-paths.js";
import type { Advisory, Manifest, RpcExports } from "../manifest/types.js";

export type { InstallPaths } from "../install/types.js";
export type { Advisory, ArtifactDescriptor, Manifest, PerChannel, ProtocolDescriptor } from "../manifest/types.js";

/**
 * How the RPC module was found: "pinned path" — the path a manifest or the first-use store pins,
 * looked up among the host entry's imports with no search; "exports" — the one static import whose
 * exports hold the roles (first use).
 */
export interface RpcFound {
  path: string;
  sha256: string;
  exports: RpcExports;
  foundBy: "pinned path" | "exports";
}

/** How one file (or group of files) of the install is pinned. */
export type PinHow =
  | "public fingerprint"
  | "pinned by the given manifest"
  | "accepted locally"
  | "pinned on first use"
  | "will be pinned on first use"
  | "not pinned";

export interface FilePinning {
  /** what it is, for people: "host entry", "RPC module", "executable", … */
  what: string;
  /** its path inside the install or archive, where one file */
  path?: string;
  how: PinHow;
  /** the date (YYYY-MM-DD) of a local acceptance or a first-use pin */
  on?: string;
  /** the first-use pin file */
  record?: string;
  /** why it is (not) pinned, for people */
  note?: string;
}

export type CliVersionSource = "pinned CLI SHA-256" | "CLI file text" | "not read";

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
  /** the RPC module: its path and verified SHA-256, the export names of its roles, and how it was found */
  rpc?: RpcFound;
  /** which file of the install is pinned how (adr/0020): the host entry, the RPC module, and what is not pinned */
  pinning?: FilePinning[];
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
  /** which path the sessions take (read, input, session list, context usage) and what it lacks, once a manifest is selected */
  hostPaths?: HostPaths;
  /** where the CLI version came from: never from running an unpinned CLI (src/install/cli-version.ts) */
  cliVersionFrom?: CliVersionSource;
  /**
   * a supported assessment only: every path its verdict was read from (the manifest set, the
   * default roots tried, the layout's files and directories, every archive member located, the
   * first-use pin). The same bytes at every one of them give the same verdict; a path that does
   * not exist is one too (something appearing there can change the verdict).
   */
  inputs?: string[];
  diagnostics: {
    appBuild?: string;
    metadataSha256?: string;
    /** fingerprint cache use during this assessment (hits = facts not recomputed) */
    cache?: { file?: string; hits: number; misses: number; rebuilt: boolean };
  };
}
