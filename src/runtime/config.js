// The bootstrap's configuration, given by the bridge as one JSON argument (argv[2]).
// Everything install-specific comes from the manifest through this object: nothing here
// hard-codes ZCode export names, channel names, method names or event names.
import { isAbsolute } from "node:path";

const SERVICE_KEYS = ["agent", "task"];

function fail(reason) {
  throw new Error(`invalid bootstrap configuration: ${reason}`);
}

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function nonEmptyString(value, name) {
  if (typeof value !== "string" || value === "") fail(`${name} must be a non-empty string`);
  return value;
}

function absolutePath(value, name) {
  nonEmptyString(value, name);
  if (!isAbsolute(value)) fail(`${name} must be an absolute path`);
  return value;
}

function positiveInteger(value, name) {
  if (!Number.isSafeInteger(value) || value <= 0) fail(`${name} must be a positive integer`);
  return value;
}

function stringLists(value, name) {
  if (!isRecord(value)) fail(`${name} must be an object`);
  const out = {};
  for (const key of SERVICE_KEYS) {
    const list = value[key];
    if (!Array.isArray(list) || !list.every((item) => typeof item === "string" && item !== "")) {
      fail(`${name}.${key} must be a list of names`);
    }
    out[key] = Object.freeze([...list]);
  }
  return Object.freeze(out);
}

/**
 * @param {string | undefined} raw
 * @returns {{ hostIndex: string, rpcModule: string, exports: {protocol: string, client: string, service: string},
 *   channels: {agent: string, task: string}, allowlist: {agent: readonly string[], task: readonly string[]},
 *   events: {agent: readonly string[], task: readonly string[]}, agentSpawnFallbackCwd: string,
 *   frameLimitBytes: number, disposeTimeoutMs: number, channelFd: number }}
 */
export function parseBootstrapConfig(raw) {
  if (typeof raw !== "string") fail("missing argument");
  let value;
  try {
    value = JSON.parse(raw);
  } catch {
    fail("not JSON");
  }
  if (!isRecord(value) || value.schema !== 1) fail("unknown schema");
  const exportsValue = value.exports;
  if (!isRecord(exportsValue)) fail("exports must be an object");
  const channels = value.channels;
  if (!isRecord(channels)) fail("channels must be an object");
  return Object.freeze({
    hostIndex: absolutePath(value.hostIndex, "hostIndex"),
    rpcModule: absolutePath(value.rpcModule, "rpcModule"),
    exports: Object.freeze({
      protocol: nonEmptyString(exportsValue.protocol, "exports.protocol"),
      client: nonEmptyString(exportsValue.client, "exports.client"),
      service: nonEmptyString(exportsValue.service, "exports.service"),
    }),
    channels: Object.freeze({
      agent: nonEmptyString(channels.agent, "channels.agent"),
      task: nonEmptyString(channels.task, "channels.task"),
    }),
    allowlist: stringLists(value.allowlist, "allowlist"),
    events: stringLists(value.events, "events"),
    agentSpawnFallbackCwd: absolutePath(value.agentSpawnFallbackCwd, "agentSpawnFallbackCwd"),
    frameLimitBytes: positiveInteger(value.frameLimitBytes, "frameLimitBytes"),
    disposeTimeoutMs: positiveInteger(value.disposeTimeoutMs, "disposeTimeoutMs"),
    channelFd: positiveInteger(value.channelFd, "channelFd"),
  });
}

export const SERVICES = Object.freeze([...SERVICE_KEYS]);
