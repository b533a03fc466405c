/**
 * The ACP view of a session's settings (adr/0005): session modes, and config options with the
 * standard categories `model`, `thought_level` and `mode`, built from the native snapshot.
 * Keeps the full model list across the 3.11.2 `setMode` quirk (docs/zcode-host.md §9).
 */
import type { SessionConfigOption, SessionModeState } from "@agentclientprotocol/sdk";
import type { ModelRef, SessionSnapshot, SnapshotModelEntry, SnapshotThoughtLevel } from "../protocol/native-types.js";
import { BridgeError } from "../util/errors.js";

export const MODE_OPTION_ID = "mode";
export const MODEL_OPTION_ID = "model";
export const THOUGHT_LEVEL_OPTION_ID = "thought_level";

/** The modes offered over ACP, in order. `auto` is left out: CLI 0.16 does not implement it. */
export const ACP_MODES: ReadonlyArray<{ id: string; name: string; description: string }> = [
  { id: "build", name: "Ask before changes", description: "ZCode asks before editing files or running commands" },
  { id: "edit", name: "Accept edits", description: "ZCode edits files without asking; other actions still ask" },
  { id: "plan", name: "Plan", description: "ZCode plans without changing anything, then asks to approve the plan" },
  { id: "yolo", name: "Full access", description: "ZCode edits files and runs commands without asking" },
];

interface ModelChoice {
  value: string;
  ref: ModelRef;
  name: string;
  description: string | undefined;
}

function refKey(ref: ModelRef): string {
  return ref.variant ? `${ref.providerId}/${ref.modelId}#${ref.variant}` : `${ref.providerId}/${ref.modelId}`;
}

function toChoice(entry: SnapshotModelEntry): ModelChoice {
  return { value: refKey(entry.ref), ref: entry.ref, name: entry.label ?? entry.ref.modelId, description: entry.providerLabel };
}

export class SessionOptions {
  private models: ModelChoice[] = [];
  private currentModel: string | undefined;
  private thought: SnapshotThoughtLevel | undefined;
  private modeId = "build";

  /** Apply settings from a snapshot. Returns what changed (for update notifications). */
  apply(snapshot: SessionSnapshot): { modeChanged: boolean; optionsChanged: boolean } {
    const before = JSON.stringify(this.configOptions());
    const beforeMode = this.modeId;
    const settings = snapshot.settings;
    const available = settings?.model?.available;
    if (available) {
      const incoming = available.map(toChoice);
      const known = new Set(this.models.map((m) => m.value));
      // setMode's snapshot lists only the current model: keep the list unless something is new.
      if (this.models.length === 0 || incoming.some((m) => !known.has(m.value))) this.models = incoming;
    }
    const current = settings?.model?.current;
    if (current) {
      this.currentModel = refKey(current);
      if (!this.models.some((m) => m.value === this.currentModel)) {
        this.models.push({ value: this.currentModel, ref: current, name: current.modelId, description: undefined });
      }
    }
    if (settings?.thoughtLevel) this.thought = settings.thoughtLevel;
    const mode = settings?.mode?.current ?? snapshot.session.mode;
    if (mode) this.modeId = mode;
    return { modeChanged: beforeMode !== this.modeId, optionsChanged: before !== JSON.stringify(this.configOptions()) };
  }

  /** A mode change seen on the event stream (state.updated / session.updated). */
  setCurrentMode(modeId: string): boolean {
    if (modeId === this.modeId) return false;
    this.modeId = modeId;
    return true;
  }

  get currentMode(): string {
    return this.modeId;
  }

  /** the current thinking level, if the model has levels */
  get currentThoughtLevel(): string | undefined {
    const thought = this.thought;
    return thought?.enabled ? (thought.current ?? thought.defaultLevel ?? undefined) : undefined;
  }

  modes(): SessionModeState {
    const availableModes = ACP_MODES.map((m) => ({ ...m }));
    if (!availableModes.some((m) => m.id === this.modeId)) {
      // a native mode we do not offer (e.g. "auto" set elsewhere): show it truthfully
      availableModes.push({ id: this.modeId, name: this.modeId, description: "Set outside this client" });
    }
    return { currentModeId: this.modeId, availableModes };
  }

  configOptions(): SessionConfigOption[] {
    const options: SessionConfigOption[] = [];
    if (this.models.length > 0) {
      options.push({
        id: MODEL_OPTION_ID,
        name: "Model",
        category: "model",
        type: "select",
        currentValue: this.currentModel ?? this.models[0]!.value,
        options: this.models.map((m) =>
          m.description ? { value: m.value, name: m.name, description: m.description } : { value: m.value, name: m.name },
        ),
      });
    }
    const thought = this.thought;
    if (thought?.enabled && thought.available && thought.available.length > 0) {
      const current = thought.current ?? thought.defaultLevel ?? thought.available[0]!.value;
      options.push({
        id: THOUGHT_LEVEL_OPTION_ID,
        name: "Thinking",
        category: "thought_level",
        type: "select",
        currentValue: current,
        options: thought.available.map((t) =>
          t.description
            ? { value: t.value, name: t.label ?? t.value, description: t.description }
            : { value: t.value, name: t.label ?? t.value },
        ),
      });
    }
    const modes = this.modes();
    options.push({
      id: MODE_OPTION_ID,
      name: "Mode",
      category: "mode",
      type: "select",
      currentValue: modes.currentModeId,
      options: modes.availableModes.map((m) => ({ value: m.id, name: m.name, description: m.description ?? null })),
    });
    return options;
  }

  /** The native model reference of an ACP model value; throws INVALID_PARAMS if unknown. */
  modelRef(value: string): ModelRef {
    const choice = this.models.find((m) => m.value === value);
    if (!choice) throw new BridgeError("INVALID_PARAMS", `Unknown model "${value}". Pick one of the listed models.`);
    return choice.ref;
  }

  /** Validate a thought level value; throws INVALID_PARAMS if unknown or disabled. */
  thoughtLevel(value: string): string {
    if (!this.thought?.enabled) throw new BridgeError("INVALID_PARAMS", "This model has no thinking levels.");
    if (!this.thought.available?.some((t) => t.value === value)) {
      throw new BridgeError("INVALID_PARAMS", `Unknown thinking level "${value}".`);
    }
    return value;
  }

  /** Validate a mode id against the offered modes; throws INVALID_PARAMS otherwise. */
  mode(value: string): string {
    if (!ACP_MODES.some((m) => m.id === value)) {
      throw new BridgeError("INVALID_PARAMS", `Unknown mode "${value}". Use one of: ${ACP_MODES.map((m) => m.id).join(", ")}.`);
    }
    return value;
  }
}
