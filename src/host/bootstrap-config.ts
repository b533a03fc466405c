/**
 * The configuration the bridge hands to the bootstrap (src/runtime/config.js parses it).
 * Everything install-specific comes from the verified assessment: paths, export names,
 * channel names and the allowlists of the manifest's protocol descriptor.
 */
import type { InstallPaths, Manifest } from "../compat/types.js";

export const CHANNEL_FD = 3;

export interface BootstrapConfig {
  schema: 1;
  hostIndex: string;
  rpcModule: string;
  exports: { protocol: string; client: string; service: string };
  channels: { agent: string; task: string };
  allowlist: { agent: string[]; task: string[] };
  events: { agent: string[]; task: string[] };
  agentSpawnFallbackCwd: string;
  frameLimitBytes: number;
  disposeTimeoutMs: number;
  channelFd: number;
}

export function buildBootstrapConfig(
  paths: InstallPaths,
  manifest: Manifest,
  options: { frameLimitBytes: number; disposeTimeoutMs: number },
): BootstrapConfig {
  const { artifact, protocol } = manifest;
  if (!artifact.exports) throw new Error("RPC exports found by shape are not supported yet");
  return {
    schema: 1,
    hostIndex: paths.hostIndex,
    rpcModule: paths.rpcModule,
    exports: { protocol: artifact.exports.protocol, client: artifact.exports.client, service: artifact.exports.service },
    channels: { agent: protocol.channels.agent, task: protocol.channels.task },
    allowlist: { agent: [...protocol.allowlist.agent], task: [...protocol.allowlist.task] },
    events: { agent: [...protocol.events.agent], task: [...protocol.events.task] },
    agentSpawnFallbackCwd: paths.resourcesDir,
    frameLimitBytes: options.frameLimitBytes,
    disposeTimeoutMs: Math.round(options.disposeTimeoutMs),
    channelFd: CHANNEL_FD,
  };
}
