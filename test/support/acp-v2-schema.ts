/**
 * Validation of raw ACP v2 messages against the SDK's own v2 JSON Schema (SDK 2.4.0,
 * `@agentclientprotocol/sdk/schema/v2/schema.json`), per definition, as ./acp-schema.ts does for
 * v1: requests and notifications by `method`, responses through the request id, plus exact keys
 * for session updates (the v2 schema's catch-all variants would let a misspelt field through)
 * and the v2 rule that an agent never calls client fs or terminal methods (v2 has none).
 */
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { TranscriptRules } from "./acp-transcript.js";

const require = createRequire(import.meta.url);
const SCHEMA_ID = "acp-v2";

type Schema = { $defs: Record<string, any>; $id?: string };
const schema = structuredClone(require("@agentclientprotocol/sdk/schema/v2/schema.json")) as Schema;
schema.$id = SCHEMA_ID;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema);
const compiled = new Map<string, ValidateFunction>();

/** Errors of `value` against the v2 `$defs/<definition>` (empty when valid). */
export function validateV2Definition(definition: string, value: unknown): string[] {
  if (!(definition in schema.$defs)) return [`no v2 schema definition ${definition}`];
  let validate = compiled.get(definition);
  if (!validate) {
    validate = ajv.compile({ $ref: `${SCHEMA_ID}#/$defs/${definition}` });
    compiled.set(definition, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 5).map((e) => `v2 ${definition}${e.instancePath} ${e.message ?? "invalid"}`);
}

const AGENT_OUTBOUND_PARAMS: Record<string, string> = {
  "session/update": "UpdateSessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "elicitation/create": "CreateElicitationRequest",
  "elicitation/complete": "CompleteElicitationNotification",
  "$/cancel_request": "CancelRequestNotification",
};

const AGENT_RESULTS: Record<string, string> = {
  initialize: "InitializeResponse",
  "auth/login": "LoginAuthResponse",
  "auth/logout": "LogoutAuthResponse",
  "session/new": "NewSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/close": "CloseSessionResponse",
  "session/delete": "DeleteSessionResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  "session/prompt": "PromptResponse",
  "tool_call/cancel": "CancelToolCallResponse",
  "terminal/cancel": "CancelTerminalResponse",
};

const CLIENT_OUTBOUND_PARAMS: Record<string, string> = {
  initialize: "InitializeRequest",
  "auth/login": "LoginAuthRequest",
  "auth/logout": "LogoutAuthRequest",
  "session/new": "NewSessionRequest",
  "session/resume": "ResumeSessionRequest",
  "session/list": "ListSessionsRequest",
  "session/close": "CloseSessionRequest",
  "session/delete": "DeleteSessionRequest",
  "session/set_config_option": "SetSessionConfigOptionRequest",
  "session/prompt": "PromptRequest",
  "tool_call/cancel": "CancelToolCallRequest",
  "terminal/cancel": "CancelTerminalRequest",
  "session/cancel": "CancelSessionNotification",
  "$/cancel_request": "CancelRequestNotification",
};

const CLIENT_RESULTS: Record<string, string> = {
  "session/request_permission": "RequestPermissionResponse",
  "elicitation/create": "CreateElicitationResponse",
};

/** every property a definition may have: its own, its allOf refs' and those of each of its variants */
function propertiesOf(def: any, seen = new Set<any>()): Set<string> {
  const keys = new Set<string>();
  if (!def || typeof def !== "object" || seen.has(def)) return keys;
  seen.add(def);
  if (typeof def.$ref === "string") return propertiesOf(schema.$defs[def.$ref.split("/").pop()!], seen);
  for (const key of Object.keys(def.properties ?? {})) keys.add(key);
  for (const part of [...(def.allOf ?? []), ...(def.anyOf ?? []), ...(def.oneOf ?? [])])
    for (const key of propertiesOf(part, seen)) keys.add(key);
  return keys;
}

/** Allowed keys of each named v2 session update variant, read from the schema. */
const UPDATE_KEYS: Map<string, Set<string>> = (() => {
  const keys = new Map<string, Set<string>>();
  for (const variant of schema.$defs.SessionUpdate.anyOf as any[]) {
    const name = variant.properties?.sessionUpdate?.const as string | undefined;
    if (!name) continue; // the catch-all for custom and future updates
    keys.set(name, new Set(["sessionUpdate", ...propertiesOf({ allOf: variant.allOf ?? [] })]));
  }
  return keys;
})();

function checkV2UpdateKeys(update: Record<string, unknown>): string[] {
  const allowed = UPDATE_KEYS.get(String(update.sessionUpdate));
  if (!allowed) return [`unknown v2 sessionUpdate "${String(update.sessionUpdate)}"`];
  return Object.keys(update)
    .filter((key) => !allowed.has(key))
    .map((key) => `${String(update.sessionUpdate)} has a field "${key}" the v2 schema does not define`);
}

function capabilityProblem(method: string, params: any, caps: any): string | undefined {
  if (method.startsWith("fs/") || method.startsWith("terminal/")) return `${method}: ACP v2 has no client fs or terminal methods`;
  if (method === "elicitation/create") {
    const mode = params?.mode ?? "form";
    if (caps?.elicitation?.[mode] === undefined || caps?.elicitation?.[mode] === null)
      return `elicitation/create (${mode}) without elicitation.${mode}`;
  }
  return undefined;
}

/** The v2 rules for a Transcript (./acp-transcript.ts). */
export const V2_RULES: TranscriptRules = {
  name: "v2",
  agentOutboundParams: AGENT_OUTBOUND_PARAMS,
  agentResults: AGENT_RESULTS,
  clientOutboundParams: CLIENT_OUTBOUND_PARAMS,
  clientResults: CLIENT_RESULTS,
  validate: validateV2Definition,
  checkUpdateKeys: checkV2UpdateKeys,
  capabilityProblem,
  clientCapabilitiesOf: (params) => params?.capabilities ?? {},
};
