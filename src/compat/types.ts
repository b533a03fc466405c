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
export interface ProtocolDescriptor {
  id: string;
  channels: { agent: string; task: string };
  operations: Record<
    "cancelGeneration" | "respondStructuredInput" | "respondPermission",
    { service: "agent" | "task"; method: string; sessionKey: string }
  >;
  allowlist: { agent: string[]; task: string[] };
  /** allowlisted event names per channel, e.g. { agent: ["onDynamicSessionEvent"] } */
  events: { agent: string[]; task: string[] };
}

export interface ArtifactDescriptor {
  id: string;
  appVersion: string;
  cliVersion: string;
  cliSha256: string;
  protocolId: string;
  hostIndex: { path: string; sha256: string };
  rpcModule: { path: string; sha256: string };
  exports: { protocol: string; client: string; service: string };
  metadata: { runtime: string; entry: string; source: string };
}

export interface Manifest {
  schemaVersion: 1;
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
