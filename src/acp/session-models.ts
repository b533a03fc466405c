/**
 * ACP's legacy model API beside the model config option (docs/acp.md "Models"): a `models` field
 * `{availableModels, currentModelId}` in the session/new, load, resume and fork answers, and
 * `session/set_model {sessionId, modelId}`. It was unstable and left the schema (SDK 0.24), so SDK
 * 2.4.0 neither types nor routes it: registered here as an extension method, its params checked as
 * its last schema said. Clients still send it (codex-acp and gemini-cli serve it; the registry's
 * nightly protocol matrix probes it and records `setModel` from a `models` field). Both are views of
 * the `category: "model"` config option (src/session/session-options.ts): the same values, the same
 * current value, and set_model goes through the same native call as session/set_config_option.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { invalidParams } from "./request-errors.js";

export const SET_MODEL_METHOD = "session/set_model";

export interface SessionModels {
  availableModels: Array<{ modelId: string; name: string; description?: string }>;
  currentModelId: string;
}

/** The config option that set_model changes: the one of category `model`. */
export function modelOptionOf(
  configOptions: readonly acp.SessionConfigOption[],
): (acp.SessionConfigOption & { type: "select" }) | undefined {
  return configOptions.find((o): o is acp.SessionConfigOption & { type: "select" } => o.category === "model" && o.type === "select");
}

/** `models` of the model config option (grouped options flattened); undefined when the session offers no model choice. */
export function modelsOf(configOptions: readonly acp.SessionConfigOption[]): SessionModels | undefined {
  const option = modelOptionOf(configOptions);
  if (option === undefined) return undefined;
  const values: acp.SessionConfigSelectOption[] = [];
  for (const entry of option.options) {
    if ("group" in entry) values.push(...entry.options);
    else values.push(entry);
  }
  return {
    availableModels: values.map((v) =>
      v.description ? { modelId: v.value, name: v.name, description: v.description } : { modelId: v.value, name: v.name },
    ),
    currentModelId: option.currentValue,
  };
}

/** A session answer with `models` added where the session has a model choice. */
export function withModels<T extends { configOptions?: acp.SessionConfigOption[] | null }>(response: T): T & { models?: SessionModels } {
  const models = modelsOf(response.configOptions ?? []);
  return models === undefined ? response : { ...response, models };
}

/** session/set_model params: `{sessionId, modelId}`, both non-empty strings. */
export function parseSetModel(params: unknown): { sessionId: string; modelId: string } {
  const record = typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : undefined;
  if (record === undefined) throw invalidParams(`${SET_MODEL_METHOD} takes an object with sessionId and modelId.`);
  const { sessionId, modelId } = record;
  if (typeof sessionId !== "string" || sessionId === "") throw invalidParams(`${SET_MODEL_METHOD} needs a sessionId.`);
  if (typeof modelId !== "string" || modelId === "")
    throw invalidParams(`${SET_MODEL_METHOD} needs a modelId (one of the session's models).`);
  return { sessionId, modelId };
}
