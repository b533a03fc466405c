// The bootstrap's configuration, given by the bridge as one JSON argument (argv[2]).
// Everything install-specific comes from the manifest through this object: nothing here
// hard-codes ZCode export names, channel names, method names or event names.
import { isAbsolute } from "node:path";
import { PROJECTION_NAMES } from "./projections.js";

/** channel keys a manifest may name (src/manifest/release-lines.ts); agent and task are always there */
const SERVICE_KEYS = ["agent", "task", "modelSelection"];
const REQUIRED_SERVICES = ["agent", "task"];
const SHA256 = /^[0-9a-f]{64}$/;

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

function channelNames(value) {
  if (!isRecord(value)) fail("channels must be an object");
  const out = {};
  for (const key of Object.keys(value)) {
    if (!SERVICE_KEYS.includes(key)) fail(`channels.${key} is not a known channel`);
    out[key] = nonEmptyString(value[key], `channels.${key}`);
  }
  for (const key of REQUIRED_SERVICES) if (out[key] === undefined) fail(`channels.${key} is missing`);
  return Object.freeze(out);
}

function stringLists(value, name, services) {
  if (!isRecord(value)) fail(`${name} must be an object`);
  const out = {};
  for (const key of Object.keys(value)) if (!services.includes(key)) fail(`${name}.${key} names no channel`);
  for (const key of services) {
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
 *   channels: Record<string, string>, services: readonly string[], allowlist: Record<string, readonly string[]>,
 *   events: Record<string, readonly string[]>, expectedSha256: {hostIndex: string, rpcModule: string},
 *   initLocal: Record<string, string>, projections: Record<string, string>,
 *   envelopeTypes: Record<string, readonly string[]>, agentSpawnFallbackCwd: string,
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
  const channels = channelNames(value.channels);
  const services = Object.freeze(Object.keys(channels));
  const expected = value.expectedSha256;
  if (!isRecord(expected) || !SHA256.test(String(expected.hostIndex)) || !SHA256.test(String(expected.rpcModule))) {
    fail("expectedSha256 must give the SHA-256 of hostIndex and rpcModule");
  }
  const initLocal = value.initLocal ?? {};
  if (!isRecord(initLocal) || !Object.values(initLocal).every((v) => typeof v === "string" && v !== ""))
    fail("initLocal must map field names to strings");
  const envelopeTypes = value.envelopeTypes ?? {};
  if (
    !isRecord(envelopeTypes) ||
    !Object.entries(envelopeTypes).every(
      ([key, list]) => /^[A-Za-z]+\.[A-Za-z0-9]+$/.test(key) && Array.isArray(list) && list.every((t) => typeof t === "string" && t !== ""),
    )
  )
    fail("envelopeTypes must map <channel>.<method> to lists of command types");
  const projections = value.projections ?? {};
  if (!isRecord(projections) || !Object.values(projections).every((v) => PROJECTION_NAMES.includes(v)))
    fail("projections must name known projections");
  return Object.freeze({
    hostIndex: absolutePath(value.hostIndex, "hostIndex"),
    rpcModule: absolutePath(value.rpcModule, "rpcModule"),
    exports: Object.freeze({
      protocol: nonEmptyString(exportsValue.protocol, "exports.protocol"),
      client: nonEmptyString(exportsValue.client, "exports.client"),
      service: nonEmptyString(exportsValue.service, "exports.service"),
    }),
    channels,
    services,
    allowlist: stringLists(value.allowlist, "allowlist", services),
    events: stringLists(value.events, "events", services),
    expectedSha256: Object.freeze({ hostIndex: expected.hostIndex, rpcModule: expected.rpcModule }),
    initLocal: Object.freeze({ ...initLocal }),
    projections: Object.freeze({ ...projections }),
    envelopeTypes: Object.freeze(Object.fromEntries(Object.entries(envelopeTypes).map(([key, list]) => [key, Object.freeze([...list])]))),
    agentSpawnFallbackCwd: absolutePath(value.agentSpawnFallbackCwd, "agentSpawnFallbackCwd"),
    frameLimitBytes: positiveInteger(value.frameLimitBytes, "frameLimitBytes"),
    disposeTimeoutMs: positiveInteger(value.disposeTimeoutMs, "disposeTimeoutMs"),
    channelFd: positiveInteger(value.channelFd, "channelFd"),
  });
}
