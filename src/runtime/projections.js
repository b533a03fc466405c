// Reductions of host results that must not leave the Electron process whole (docs/runtime-contract.md
// §4.1). `model-selection.getView` holds provider API keys and headers: only ids, names, context
// windows and reasoning levels are copied out — by allow-list, field by field, so a new secret
// field of a later release is never forwarded. Errors name the field, never a value.
// Session snapshots, events and histories are reduced so that no frame grows with a session's
// history (docs/history.md, adr/0018): `session-state` drops the messages of a snapshot,
// `session-event` does that for snapshot events and bounds every event, `history-pages` holds a
// full history here and answers a handle the bridge pages through (history-pages.js).
// `provider-headers-request` (zcode-task-v3): a provider runtime header request leaves as its ids
// and reason only, copied by allow-list; its account access, model and workspace never do.
import { boundValue, eventLimits } from "./bounds.js";
import { conversationFrames, conversationRows } from "./conversation-frames.js";

const MAX_PROVIDERS = 64;
const MAX_MODELS = 512;
const MAX_LEVELS = 32;
const MAX_TEXT = 200;

function isRecord(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function text(value, field) {
  if (typeof value !== "string" || value === "") throw new Error(`${field} is not a non-empty string`);
  return value.slice(0, MAX_TEXT);
}

function optionalText(value) {
  return typeof value === "string" && value !== "" ? value.slice(0, MAX_TEXT) : undefined;
}

function selection(value) {
  if (!isRecord(value) || typeof value.providerId !== "string" || typeof value.modelId !== "string") return undefined;
  const out = { providerId: value.providerId.slice(0, MAX_TEXT), modelId: value.modelId.slice(0, MAX_TEXT) };
  const level = isRecord(value.options) ? optionalText(value.options.reasoningLevel) : undefined;
  if (level !== undefined) out.options = { reasoningLevel: level };
  return out;
}

function reasoningLevels(model) {
  const spec = isRecord(model.config) && isRecord(model.config.optionSpecs) ? model.config.optionSpecs.reasoningLevel : undefined;
  if (!isRecord(spec) || !Array.isArray(spec.values)) return [];
  return spec.values
    .filter((v) => typeof v === "string" && v !== "")
    .slice(0, MAX_LEVELS)
    .map((v) => v.slice(0, MAX_TEXT));
}

function contextWindow(model) {
  const properties = isRecord(model.config) ? model.config.properties : undefined;
  const value = isRecord(properties) ? properties.contextWindow : undefined;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * getView → {revision?, providers:[{providerId, providerName, models:[{modelId, name, contextWindow?, reasoningLevels}]}],
 *   preferredSelection?, effectiveSelection?, selectionIssue?}
 */
function modelSelectionView(view) {
  if (!isRecord(view) || !Array.isArray(view.providers)) throw new Error("the view has no providers list");
  const providers = view.providers.slice(0, MAX_PROVIDERS).map((provider, p) => {
    if (!isRecord(provider) || !Array.isArray(provider.models)) throw new Error(`providers[${p}] has no models list`);
    return {
      providerId: text(provider.providerId, `providers[${p}].providerId`),
      providerName: optionalText(provider.providerName) ?? text(provider.providerId, `providers[${p}].providerId`),
      models: provider.models.slice(0, MAX_MODELS).flatMap((model, m) => {
        if (!isRecord(model)) throw new Error(`providers[${p}].models[${m}] is not an object`);
        if (isRecord(model.config) && model.config.enabled === false) return [];
        const out = { modelId: text(model.modelId, `providers[${p}].models[${m}].modelId`), reasoningLevels: reasoningLevels(model) };
        const name = optionalText(model.displayName) ?? optionalText(model.name);
        if (name !== undefined) out.name = name;
        const window = contextWindow(model);
        if (window !== undefined) out.contextWindow = window;
        return [out];
      }),
    };
  });
  const out = { providers };
  if (typeof view.revision === "number" || typeof view.revision === "string") out.revision = view.revision;
  const preferred = selection(view.preferredSelection);
  if (preferred) out.preferredSelection = preferred;
  const effective = selection(view.effectiveSelection);
  if (effective) out.effectiveSelection = effective;
  if (view.selectionIssue !== undefined && view.selectionIssue !== null) {
    const issue = view.selectionIssue;
    out.selectionIssue = isRecord(issue)
      ? { code: optionalText(issue.code) ?? optionalText(issue.kind) ?? "selection_issue" }
      : { code: "selection_issue" };
  }
  return out;
}

/**
 * A session snapshot without its history: `messages` is emptied (the host sends every message of
 * the session with createSession, resumeSession, setMode / setModel / setThoughtLevel and a
 * subscription's snapshot event), and the rest is bounded like an event.
 */
function sessionState(snapshot, context) {
  if (!isRecord(snapshot)) throw new Error("the snapshot is not an object");
  const reduced = { ...snapshot, messages: [] };
  return boundValue(reduced, eventLimits(context.frameLimitBytes)).value;
}

/** One subscription event: a snapshot event loses its history; every event is bounded. Never throws. */
function sessionEvent(event, context) {
  let value = event;
  if (isRecord(event) && event.type === "snapshot" && isRecord(event.snapshot)) {
    value = { ...event, snapshot: { ...event.snapshot, messages: [] } };
  }
  return boundValue(value, eventLimits(context.frameLimitBytes)).value;
}

/** the fields of a provider header request the bridge reads (docs/zcode-host.md §6.4): ids, then texts */
const HEADER_REQUEST_IDS = ["requestId", "sessionId", "turnId"];
const HEADER_REQUEST_TEXTS = ["providerId", "reason"];
const MAX_HEADER_FIELD = 512;

/**
 * A provider runtime header request (onDynamicWorkspaceProviderRuntimeHeadersRequest) reduced to
 * {requestId?, sessionId?, turnId?, providerId?, reason?}, each a string the host gave: an id
 * longer than 512 characters is left out (a cut id would answer another request; the bridge refuses
 * a request without the ids it needs), a text is cut there. Never throws.
 */
function providerHeadersRequest(request) {
  const out = {};
  if (!isRecord(request)) return out;
  for (const field of HEADER_REQUEST_IDS) {
    const value = request[field];
    if (typeof value === "string" && value.length <= MAX_HEADER_FIELD) out[field] = value;
  }
  for (const field of HEADER_REQUEST_TEXTS) {
    const value = request[field];
    if (typeof value === "string") out[field] = value.slice(0, MAX_HEADER_FIELD);
  }
  return out;
}

/** A full history read: held in this process, answered as `{historyId, total}` (history-pages.js). */
function historyPages(messages, context) {
  return context.history.hold(messages);
}

const PROJECTIONS = {
  "model-selection-view": modelSelectionView,
  "session-state": sessionState,
  "session-event": sessionEvent,
  "history-pages": historyPages,
  // the V4 read path (conversation-frames.js): a wire frame becomes a list of frames to send
  "conversation-frame": conversationFrames,
  "conversation-rows": conversationRows,
  "provider-headers-request": providerHeadersRequest,
};
/** projections of an event whose result is a list of events to send, in order */
const SPLITTING = new Set(["conversation-frame"]);
export const PROJECTION_NAMES = Object.freeze(Object.keys(PROJECTIONS));

/**
 * Apply the named projection (the config parser accepts only names defined here).
 * @param {{ frameLimitBytes: number, history: { hold(messages: unknown): unknown } }} context
 */
export function project(name, value, context) {
  const projection = PROJECTIONS[name];
  if (projection === undefined) throw new Error(`unknown projection ${name}`);
  return projection(value, context);
}

/** An event reduced to the events to send: one, or (a splitting projection) several. */
export function projectEvent(name, value, context) {
  const out = project(name, value, context);
  return SPLITTING.has(name) ? out : [out];
}
