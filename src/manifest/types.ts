/** The shape of a manifest (docs/runtime-contract.md §2): an artifact and a protocol descriptor. */
/** The export names of the RPC module's three roles (the protocol, client and service classes). */
export interface RpcExports {
  protocol: string;
  client: string;
  service: string;
}

/** Per-channel values: `agent` and `task` on every line, `modelSelection` on lines that have it. */
export interface PerChannel<T> {
  agent: T;
  task: T;
  modelSelection?: T;
}

/** The protocol descriptor of a manifest (docs/runtime-contract.md §2). */
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

/**
 * The RPC module of an artifact: its path and SHA-256 pinned, or `pin: "first-use"` — found by its
 * exports' roles among the pinned host entry's static imports, its path and SHA-256 recorded in the
 * local pin store on first use (src/compat/first-use-pins.ts). `path`, where given with first use,
 * is the path a public record names; the module found must be that one.
 */
export type RpcModuleFingerprint =
  { path: string; sha256: string; pin?: undefined } | { pin: "first-use"; path?: string; sha256?: undefined };

export interface ArtifactDescriptor {
  id: string;
  appVersion: string;
  /** "x.y.z", or "unknown" (a local manifest whose CLI declares no single version; src/manifest/manifest-schema.ts) */
  cliVersion: string;
  cliSha256: string;
  protocolId: string;
  hostIndex: { path: string; sha256: string };
  /** pinned (path and SHA-256), or left to be pinned on first use (docs/runtime-contract.md §7; adr/0020) */
  rpcModule: RpcModuleFingerprint;
  /** pinned export names; absent: found by shape (docs/runtime-contract.md §2.1) */
  exports?: RpcExports;
  metadata: { runtime: string; entry: string; source: string };
}

/** A release advisory (adr/0021): a public fact about a release that users should know, with its source. */
export interface Advisory {
  /** stable identifier, e.g. "repo-snapshot-uploader" */
  id: string;
  /** "warning": shown as an ACP notice to clients that accept notices; "info": in `check` and the log only */
  severity: "info" | "warning";
  /** one line: what is the case */
  summary: string;
  /** one line: what the user can do */
  action: string;
  /** the public source (https URL) */
  source: string;
  /** the first release without it; absent: none yet */
  fixedIn?: string;
}

export interface Manifest {
  schemaVersion: 1;
  /** absent: pinned (shipped with zcode-acp); "local": accepted with `zcode-acp onboard --accept` */
  trust?: "local";
  acceptedAt?: string;
  acceptedBy?: string;
  artifact: ArtifactDescriptor;
  protocol: ProtocolDescriptor;
  /** release advisories (adr/0021); absent: none */
  advisories?: Advisory[];
}
