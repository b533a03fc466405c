/**
 * The configuration the bridge hands to the bootstrap (src/runtime/config.js parses it).
 * Everything install-specific comes from the verified assessment: paths, the SHA-256 the bootstrap
 * checks again before importing, the RPC export names found by shape, the channel names and
 * allowlists of the manifest's protocol descriptor, and what the release line adds to `init-local`.
 */
import type { InstallPaths } from "../install/types.js";
import type { Manifest, RpcExports } from "../manifest/types.js";
import { findLine, V4_COMMAND_TYPES } from "../manifest/release-lines.js";
import { BridgeError } from "../util/errors.js";

export const CHANNEL_FD = 3;
/** the environment variable that overrides the builtin provider config path (docs/runtime-contract.md §4.1) */
export const BUILTIN_PROVIDER_CONFIG_ENV = "ZCODE_BUILTIN_PROVIDER_CONFIG_FILE";

export interface BootstrapConfig {
  schema: 1;
  hostIndex: string;
  rpcModule: string;
  expectedSha256: { hostIndex: string; rpcModule: string };
  exports: RpcExports;
  channels: Record<string, string>;
  allowlist: Record<string, string[]>;
  events: Record<string, string[]>;
  initLocal: Record<string, string>;
  projections: Record<string, string>;
  /** by `<channel>.<method>`: the command envelope types the bootstrap lets through (any other is refused) */
  envelopeTypes: Record<string, string[]>;
  agentSpawnFallbackCwd: string;
  frameLimitBytes: number;
  disposeTimeoutMs: number;
  channelFd: number;
}

export interface BootstrapInstall {
  paths: InstallPaths;
  manifest: Manifest;
  /** the RPC export names the check found (by shape) */
  rpcExports: RpcExports;
  /** the RPC module's SHA-256 the check verified (pinned by the manifest or on first use) */
  rpcModuleSha256: string;
}

/** The builtin provider config the line needs: the environment override, else the install's file. */
export function builtinProviderConfig(install: BootstrapInstall, env: NodeJS.ProcessEnv): string | undefined {
  const line = findLine(install.manifest.protocol.id);
  if (!line?.needsBuiltinProviderConfig) return undefined;
  const path = env[BUILTIN_PROVIDER_CONFIG_ENV] || install.paths.builtinProviderConfig;
  if (!path)
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      "This ZCode release needs its builtin provider config (resources/config/provider/zcode-builtin.json), which the install lacks. Reinstall ZCode.",
    );
  return path;
}

export function buildBootstrapConfig(
  install: BootstrapInstall,
  options: { frameLimitBytes: number; disposeTimeoutMs: number; builtinProviderConfig: string | undefined },
): BootstrapConfig {
  const { paths, manifest } = install;
  const { artifact, protocol } = manifest;
  const line = findLine(protocol.id);
  if (!line)
    throw new BridgeError(
      "UNSUPPORTED_ZCODE",
      `The manifest names the release line "${protocol.id}", which this zcode-acp does not implement.`,
    );
  const channels: Record<string, string> = {};
  const allowlist: Record<string, string[]> = {};
  const events: Record<string, string[]> = {};
  for (const key of Object.keys(protocol.channels) as (keyof typeof protocol.channels)[]) {
    const name = protocol.channels[key];
    if (name === undefined) continue;
    channels[key] = name;
    allowlist[key] = [...(protocol.allowlist[key] ?? [])];
    events[key] = [...(protocol.events[key] ?? [])];
  }
  // a V4 command envelope passes only with a type the bridge sends (adr/0022)
  const envelopeTypes: Record<string, string[]> = {};
  if (allowlist.agent?.includes("sendConversationCommandV4")) envelopeTypes["agent.sendConversationCommandV4"] = [...V4_COMMAND_TYPES];
  const initLocal: Record<string, string> = {};
  if (options.builtinProviderConfig !== undefined) initLocal.zcodeBuiltinProviderConfigFilePath = options.builtinProviderConfig;
  return {
    schema: 1,
    hostIndex: paths.hostIndex,
    rpcModule: paths.rpcModule,
    expectedSha256: { hostIndex: artifact.hostIndex.sha256, rpcModule: install.rpcModuleSha256 },
    exports: { ...install.rpcExports },
    channels,
    allowlist,
    events,
    initLocal,
    projections: { ...line.projections },
    envelopeTypes,
    agentSpawnFallbackCwd: paths.resourcesDir,
    frameLimitBytes: options.frameLimitBytes,
    disposeTimeoutMs: Math.round(options.disposeTimeoutMs),
    channelFd: CHANNEL_FD,
  };
}
