/**
 * The result of the ordered compatibility assessment (runtime contract §3), shared by
 * `zcode-acp check` and the launcher (which refuses anything not supported).
 */
export type StepStatus = "pass" | "fail" | "diagnostic" | "skipped";

export type StepId =
  | "layout"
  | "metadata"
  | "platform"
  | "version"
  | "host-artifacts"
  | "cli-integrity";

export interface AssessmentStep {
  id: StepId;
  status: StepStatus;
  /** human-readable summary of what was checked and found */
  summary: string;
  /** expected vs actual evidence, e.g. { expected: "sha…", actual: "sha…" } per field */
  evidence?: Record<string, { expected?: unknown; actual?: unknown }>;
}

/** Resolved absolute paths of a verified install. */
export interface InstallPaths {
  root: string;
  platform: "darwin" | "linux" | "win32";
  executable: string;
  resourcesDir: string;
  appArchive: string;
  /** true when app.asar is a directory (simulated installs) */
  appArchiveIsDirectory: boolean;
  hostIndex: string;
  rpcModule: string;
  cli: string;
  bundleMeta: string;
  /** darwin only: Contents/Info.plist (app version and build) */
  infoPlist?: string;
}

/** The protocol descriptor of a manifest (runtime contract §2). */
/** Per-channel values: `agent` and `task` on every line, `modelSelection` on lines that have it. */
export interface PerChannel<T> {
  agent: T;
  task: T;
  modelSelection?: T;
}

export interface ProtocolDescriptor {
  id: string;
  channels: PerChannel<string>;
  operations: Record<
    "cancelGeneration" | "respondStructuredInput" | "respondPermission",
    { service: "agent" | "task"; method: string; sessionKey: string }
  >;
  allowlist: PerChannel<string[]>;
  /** allowlisted event names per channel, e.g. { agent: ["onDynamicSessionEvent"] } */
  events: PerChannel<string[]>;
}

export interface ArtifactDescriptor {
  id: string;
  appVersion: string;
  cliVersion: string;
  cliSha256: string;
  protocolId: string;
  hostIndex: { path: string; sha256: string };
  rpcModule: { path: string; sha256: string };
  /** pinned export names; absent: found by shape (runtime contract §2.1) */
  exports?: { protocol: string; client: string; service: string };
  metadata: { runtime: string; entry: string; source: string };
}

export interface Manifest {
  schemaVersion: 1;
  /** absent: pinned (shipped with zcode-acp); "local": accepted with `zcode-acp onboard --accept` */
  trust?: "local";
  acceptedAt?: string;
  acceptedBy?: string;
  artifact: ArtifactDescriptor;
  protocol: ProtocolDescriptor;
}

export interface Assessment {
  supported: boolean;
  /** the first failing step decides (contract §3) */
  failedStep?: StepId;
  /** what to do, for people */
  message: string;
  steps: AssessmentStep[];
  manifest?: Manifest;
  manifestFile?: string;
  /** the install root that was assessed (as given or defaulted), also when it failed early */
  installRoot?: string;
  /** "<platform>-<arch>" of this system */
  systemPlatform?: string;
  paths?: InstallPaths;
  appVersion?: string;
  cliVersion?: string;
  cliIntegrity?: "verified" | "modified" | "unknown";
  diagnostics: {
    appBuild?: string;
    metadataSha256?: string;
    /** fingerprint cache use during this assessment (hits = facts not recomputed) */
    cache?: { file?: string; hits: number; misses: number; rebuilt: boolean };
  };
}
