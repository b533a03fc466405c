/**
 * Validation of raw ACP messages against the SDK's own JSON Schema, per definition (docs/acp.md §10):
 * the top-level schema is far too lenient, so every message is checked against the definition
 * of its method (requests and notifications by `method`, responses through the request id).
 * On top of the schema: exact keys for session updates (a misspelt optional field would pass
 * the schema) and capability gating of agent → client methods.
 *
 * Session updates that exist only in the SDK's UNSTABLE schema (`subagent_update`, …: stabilised
 * by the spec after SDK 2.4.0) are checked against that schema, and only accepted when the client
 * advertised their capability (`UNSTABLE_UPDATES`); every other message against the stable one.
 */
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { ClientCapabilities } from "@agentclientprotocol/sdk";

const require = createRequire(import.meta.url);
const SCHEMA_ID = "acp-v1";

type Schema = { $defs: Record<string, any>; $id?: string };
const UNSTABLE_SCHEMA_ID = "acp-v1-unstable";
const schema = structuredClone(require("@agentclientprotocol/sdk/schema/v1/schema.json")) as Schema;
schema.$id = SCHEMA_ID;
const unstableSchema = structuredClone(require("@agentclientprotocol/sdk/schema/v1/schema.unstable.json")) as Schema;
unstableSchema.$id = UNSTABLE_SCHEMA_ID;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema);
ajv.addSchema(unstableSchema);
const compiled = new Map<string, ValidateFunction>();

/** Session updates of the unstable schema only, and the client capability each one needs. */
export const UNSTABLE_UPDATES: Readonly<Record<string, string>> = {
  subagent_update: "subagents",
  session_message: "subagents",
  session_message_chunk: "subagents",
  plan_update: "plan",
  plan_removed: "plan",
};

/** the definitions checked against the unstable schema whatever the caller asks (absent from the stable one) */
const UNSTABLE_DEFINITIONS = new Set(["SetSessionTitleRequest", "SetSessionTitleResponse", "ForkSessionRequest", "ForkSessionResponse"]);

/**
 * ACP's legacy model API (session/set_model), as its last unstable schema defined it before SDK
 * 0.24 removed it (src/acp/session-models.ts): neither 2.4.0 schema has it, so it is restated here.
 */
const META = { type: ["object", "null"], additionalProperties: true };
const LEGACY_DEFINITIONS: Record<string, object> = {
  SetSessionModelRequest: {
    type: "object",
    properties: { sessionId: { type: "string" }, modelId: { type: "string" }, _meta: META },
    required: ["sessionId", "modelId"],
  },
  SetSessionModelResponse: { type: "object", properties: { _meta: META } },
  SessionModelState: {
    type: "object",
    properties: {
      currentModelId: { type: "string" },
      availableModels: {
        type: "array",
        items: {
          type: "object",
          properties: { modelId: { type: "string" }, name: { type: "string" }, description: { type: ["string", "null"] }, _meta: META },
          required: ["modelId", "name"],
        },
      },
      _meta: META,
    },
    required: ["currentModelId", "availableModels"],
  },
};

/** Errors of `value` against `$defs/<definition>` of the stable (default) or the unstable schema (empty when valid). */
export function validateDefinition(definition: string, value: unknown, which: "stable" | "unstable" = "stable"): string[] {
  const legacy = LEGACY_DEFINITIONS[definition];
  if (legacy !== undefined) {
    let validate = compiled.get(`legacy:${definition}`);
    if (!validate) {
      validate = ajv.compile(legacy);
      compiled.set(`legacy:${definition}`, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 5).map((e) => `${definition}${e.instancePath} ${e.message ?? "invalid"}`);
  }
  // the unstable methods the agent serves (session/set_title, session/fork) have unstable definitions only
  if (UNSTABLE_DEFINITIONS.has(definition)) which = "unstable";
  const source = which === "stable" ? schema : unstableSchema;
  if (!(definition in source.$defs)) return [`no schema definition ${definition}`];
  const key = `${which}:${definition}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `${which === "stable" ? SCHEMA_ID : UNSTABLE_SCHEMA_ID}#/$defs/${definition}` });
    compiled.set(key, validate);
  }
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 5).map((e) => `${definition}${e.instancePath} ${e.message ?? "invalid"}`);
}

/** Params of requests / notifications the AGENT sends, by method. */
export const AGENT_OUTBOUND_PARAMS: Record<string, string> = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "elicitation/create": "CreateElicitationRequest",
  "elicitation/complete": "CompleteElicitationNotification",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/release": "ReleaseTerminalRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
  "$/cancel_request": "CancelRequestNotification",
};

/** Results the agent returns, by the method of the client's request. */
export const AGENT_RESULTS: Record<string, string> = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  logout: "LogoutResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/resume": "ResumeSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/close": "CloseSessionResponse",
  "session/delete": "DeleteSessionResponse",
  "session/set_title": "SetSessionTitleResponse",
  "session/fork": "ForkSessionResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  "session/set_model": "SetSessionModelResponse",
  "session/prompt": "PromptResponse",
};

/** Params of what the CLIENT sends, by method (to check our own test traffic). */
export const CLIENT_OUTBOUND_PARAMS: Record<string, string> = {
  initialize: "InitializeRequest",
  authenticate: "AuthenticateRequest",
  logout: "LogoutRequest",
  "session/new": "NewSessionRequest",
  "session/load": "LoadSessionRequest",
  "session/resume": "ResumeSessionRequest",
  "session/list": "ListSessionsRequest",
  "session/close": "CloseSessionRequest",
  "session/delete": "DeleteSessionRequest",
  "session/set_title": "SetSessionTitleRequest",
  "session/fork": "ForkSessionRequest",
  "session/set_mode": "SetSessionModeRequest",
  "session/set_config_option": "SetSessionConfigOptionRequest",
  "session/set_model": "SetSessionModelRequest",
  "session/prompt": "PromptRequest",
  "session/cancel": "CancelNotification",
  "$/cancel_request": "CancelRequestNotification",
};

/** Results the client returns to agent requests, by method. */
export const CLIENT_RESULTS: Record<string, string> = {
  "session/request_permission": "RequestPermissionResponse",
  "elicitation/create": "CreateElicitationResponse",
  "fs/read_text_file": "ReadTextFileResponse",
  "fs/write_text_file": "WriteTextFileResponse",
  "terminal/create": "CreateTerminalResponse",
  "terminal/output": "TerminalOutputResponse",
  "terminal/release": "ReleaseTerminalResponse",
  "terminal/wait_for_exit": "WaitForTerminalExitResponse",
  "terminal/kill": "KillTerminalResponse",
};

/** Allowed keys of each session update variant, read from the schema (stable; unstable for UNSTABLE_UPDATES). */
const UPDATE_KEYS: Map<string, Set<string>> = (() => {
  const keys = new Map<string, Set<string>>();
  for (const source of [schema, unstableSchema]) {
    for (const variant of source.$defs.SessionUpdate.oneOf as any[]) {
      const name = variant.properties.sessionUpdate.const as string;
      if (source === unstableSchema && !(name in UNSTABLE_UPDATES)) continue;
      const ref = (variant.allOf?.[0]?.$ref as string | undefined)?.split("/").pop();
      const props = ref ? Object.keys(source.$defs[ref].properties ?? {}) : [];
      keys.set(name, new Set(["sessionUpdate", ...props]));
    }
  }
  return keys;
})();

/** Exact-key check of one session update (misspelt fields pass the schema, not this). */
export function checkUpdateKeys(update: Record<string, unknown>): string[] {
  const allowed = UPDATE_KEYS.get(String(update.sessionUpdate));
  if (!allowed) return [`unknown sessionUpdate "${String(update.sessionUpdate)}"`];
  return Object.keys(update)
    .filter((key) => !allowed.has(key))
    .map((key) => `${String(update.sessionUpdate)} has a field "${key}" the stable schema does not define`);
}

/** Agent → client methods allowed only with a client capability (docs/acp.md §12.2 #18). */
export function capabilityProblem(method: string, params: any, caps: ClientCapabilities): string | undefined {
  if (method === "fs/read_text_file" && !caps.fs?.readTextFile) return `${method} without fs.readTextFile`;
  if (method === "fs/write_text_file" && !caps.fs?.writeTextFile) return `${method} without fs.writeTextFile`;
  if (method.startsWith("terminal/") && !caps.terminal) return `${method} without terminal`;
  if (method === "elicitation/create") {
    const mode = params?.mode ?? "form";
    const advertised = (caps.elicitation as Record<string, unknown> | undefined)?.[mode];
    if (advertised === undefined || advertised === null) return `elicitation/create (${mode}) without elicitation.${mode}`;
  }
  if (method === "session/update") {
    const kind = params?.update?.sessionUpdate;
    const session = caps.session as Record<string, unknown> | undefined;
    if (kind === "notice" && !session?.notices) return "notice update without session.notices";
    if ((kind === "compaction_update" || kind === "compaction_summary_chunk") && !session?.compaction) {
      return `${kind} without session.compaction`;
    }
    const needs = typeof kind === "string" ? UNSTABLE_UPDATES[kind] : undefined;
    const advertised = needs === undefined ? undefined : (caps as Record<string, unknown>)[needs];
    if (needs !== undefined && (typeof advertised !== "object" || advertised === null))
      return `${kind} without clientCapabilities.${needs}`;
  }
  return undefined;
}

/** Errors of `value` against the unstable schema's `$defs/<definition>` (the unstable updates, `UNSTABLE_UPDATES`). */
export function validateUnstableDefinition(definition: string, value: unknown): string[] {
  return validateDefinition(definition, value, "unstable");
}
