/**
 * The model catalogue of the zcode-task-v2 line: `model-selection.getView` as the bootstrap reduced
 * it inside the Electron process (ids, names, reasoning levels only — the raw view holds provider
 * API keys and never crosses the channel; src/runtime/projections.js), and the rules of
 * docs/zcode-host.md §13.4–§13.5: a model is a `ModelSelection`, its default reasoning level
 * is the LAST of its levels.
 */
import type { SnapshotModelEntry, SnapshotThoughtLevel } from "../../protocol/native-types.js";
import { BridgeError } from "../../util/errors.js";

export interface ModelSelection {
  providerId: string;
  modelId: string;
  options?: { reasoningLevel?: string };
}

export interface ViewModel {
  providerId: string;
  providerName: string;
  modelId: string;
  name: string;
  contextWindow: number | undefined;
  reasoningLevels: string[];
}

export interface ModelView {
  models: ViewModel[];
  preferred: ModelSelection | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

export function parseSelection(value: unknown): ModelSelection | undefined {
  if (!isRecord(value) || !nonEmpty(value.providerId) || !nonEmpty(value.modelId)) return undefined;
  const selection: ModelSelection = { providerId: value.providerId, modelId: value.modelId };
  const level = isRecord(value.options) ? value.options.reasoningLevel : undefined;
  if (nonEmpty(level)) selection.options = { reasoningLevel: level };
  return selection;
}

/** The reduced view → the catalogue; anything malformed is NATIVE_PROTOCOL_ERROR (fail closed). */
export function parseModelView(raw: unknown): ModelView {
  const bad = (why: string): BridgeError => new BridgeError("NATIVE_PROTOCOL_ERROR", `ZCode returned a model selection view that ${why}.`);
  if (!isRecord(raw) || !Array.isArray(raw.providers)) throw bad("has no provider list");
  const models: ViewModel[] = [];
  for (const provider of raw.providers) {
    if (!isRecord(provider) || !nonEmpty(provider.providerId) || !Array.isArray(provider.models)) throw bad("has a malformed provider");
    const providerName = nonEmpty(provider.providerName) ? provider.providerName : provider.providerId;
    for (const model of provider.models) {
      if (!isRecord(model) || !nonEmpty(model.modelId)) throw bad("has a malformed model");
      const levels = Array.isArray(model.reasoningLevels) ? model.reasoningLevels.filter(nonEmpty) : [];
      models.push({
        providerId: provider.providerId,
        providerName,
        modelId: model.modelId,
        name: nonEmpty(model.name) ? model.name : model.modelId,
        contextWindow: typeof model.contextWindow === "number" && Number.isFinite(model.contextWindow) ? model.contextWindow : undefined,
        reasoningLevels: [...new Set(levels)],
      });
    }
  }
  return { models, preferred: parseSelection(raw.effectiveSelection) ?? parseSelection(raw.preferredSelection) };
}

export function findModel(view: ModelView, ref: { providerId: string; modelId: string }): ViewModel | undefined {
  return view.models.find((m) => m.providerId === ref.providerId && m.modelId === ref.modelId);
}

/** The default reasoning level of a model: the last one it offers (undefined when it offers none). */
export function defaultLevel(model: ViewModel | undefined): string | undefined {
  return model?.reasoningLevels.at(-1);
}

/** The selection to send for `model`, keeping `level` when the model offers it, else its default. */
export function selectionFor(model: ViewModel, level: string | undefined): ModelSelection {
  const chosen = level !== undefined && model.reasoningLevels.includes(level) ? level : defaultLevel(model);
  return chosen === undefined
    ? { providerId: model.providerId, modelId: model.modelId }
    : { providerId: model.providerId, modelId: model.modelId, options: { reasoningLevel: chosen } };
}

export function modelEntries(view: ModelView): SnapshotModelEntry[] {
  return view.models.map((m) => {
    const entry: SnapshotModelEntry = {
      ref: { providerId: m.providerId, modelId: m.modelId },
      label: m.name,
      providerLabel: m.providerName,
    };
    if (m.contextWindow !== undefined) entry.contextWindow = m.contextWindow;
    return entry;
  });
}

const label = (level: string): string => level.charAt(0).toUpperCase() + level.slice(1);

export function thoughtLevels(model: ViewModel | undefined, current: string | undefined): SnapshotThoughtLevel {
  const levels = model?.reasoningLevels ?? [];
  if (levels.length === 0) return { enabled: false, available: [] };
  const fallback = defaultLevel(model)!;
  return {
    enabled: true,
    current: current !== undefined && levels.includes(current) ? current : fallback,
    defaultLevel: fallback,
    available: levels.map((value) => ({ value, label: label(value) })),
  };
}
