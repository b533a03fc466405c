/**
 * The zcode-task-v2 line (ZCode 3.12.3 and later; docs/runtime-contract.md §4.1,
 * docs/zcode-host.md §13.3–§13.5): no `readWorkspaceState` — models come from
 * `model-selection.getView` (reduced in the bootstrap), mode and slash commands from
 * `readWorkspacePresentation`; models are `ModelSelection`s with reasoning levels; plan is the
 * orthogonal `planEnabled` flag beside the editing modes build / edit / yolo. Snapshots and
 * mode notices are turned into the bridge's session model, where plan is the mode "plan".
 */
import type { ModelRef, SessionSnapshot } from "../../protocol/native-types.js";
import { parseSnapshot } from "../../protocol/event-validation.js";
import { BridgeError } from "../../util/errors.js";
import type { ResumeSession, SessionRef } from "../native-api.js";
import { requireAvailable, signInRequired } from "../shared/sign-in.js";
import { TaskLineApi } from "../shared/task-line-api.js";
import { bridgeMode, PLAN } from "../shared/modes.js";
import { findModel, modelEntries, parseModelView, parseSelection, selectionFor, thoughtLevels, type ModelView } from "./model-view.js";

type Commands = Array<{ name: string; description?: string; inputHint?: string }>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export { bridgeMode };

export class TaskV2Api extends TaskLineApi {
  readonly lineId: string = "zcode-task-v2";
  /** per workspace: the model catalogue and the slash commands, read at sign-in */
  private readonly views = new Map<string, ModelView>();
  private readonly commands = new Map<string, Commands>();

  async checkSignIn(workspacePath: string): Promise<void> {
    await requireAvailable(this.host, workspacePath);
    const view = await this.readView(workspacePath);
    if (view.models.length === 0) throw signInRequired({ providers: 0 });
    await this.readPresentation(workspacePath);
  }

  override async resumeSession(params: ResumeSession): Promise<SessionSnapshot> {
    const snapshot = await super.resumeSession(params);
    // a cold resume may lose plan (upstream 3.12.3): re-apply what the bridge knew
    if (params.expectedMode === PLAN && snapshot.settings?.mode?.current !== PLAN) return this.setMode({ ...params, mode: PLAN });
    return snapshot;
  }

  async setModel(params: SessionRef & { model: ModelRef; thoughtLevel?: string | undefined }): Promise<SessionSnapshot> {
    const view = await this.viewOf(params.workspacePath);
    const model = findModel(view, params.model);
    if (!model)
      throw new BridgeError(
        "INVALID_PARAMS",
        `Unknown model "${params.model.providerId}/${params.model.modelId}". Pick one of the listed models.`,
      );
    const raw = await this.host.call(
      "agent",
      "setModel",
      { workspacePath: params.workspacePath, sessionId: params.sessionId, model: selectionFor(model, params.thoughtLevel) },
      { timeout: "setModel" },
    );
    return this.toSession(raw, "setModel");
  }

  protected parseSession(raw: unknown, what: string): SessionSnapshot {
    const workspacePath =
      isRecord(raw) && isRecord(raw.session) && isRecord(raw.session.workspace) ? raw.session.workspace.workspacePath : undefined;
    const view = typeof workspacePath === "string" ? this.views.get(workspacePath) : undefined;
    const commands = typeof workspacePath === "string" ? this.commands.get(workspacePath) : undefined;
    return parseSnapshot(normaliseSnapshot(raw, view, commands), what);
  }

  protected override normaliseEvent(event: unknown, ref: SessionRef): unknown {
    if (!isRecord(event)) return event;
    switch (event.type) {
      case "snapshot":
        return {
          ...event,
          snapshot: normaliseSnapshot(event.snapshot, this.views.get(ref.workspacePath), this.commands.get(ref.workspacePath)),
        };
      case "state.updated":
        return normaliseStateUpdate(event);
      case "session.event":
        return normaliseSessionEvent(event);
      default:
        return event;
    }
  }

  private async viewOf(workspacePath: string): Promise<ModelView> {
    return this.views.get(workspacePath) ?? this.readView(workspacePath);
  }

  private async readView(workspacePath: string): Promise<ModelView> {
    const view = parseModelView(await this.host.call("modelSelection", "getView", {}, { timeout: "signInState" }));
    this.views.set(workspacePath, view);
    return view;
  }

  private async readPresentation(workspacePath: string): Promise<void> {
    const raw = await this.host.call<unknown>(
      "agent",
      "readWorkspacePresentation",
      { workspacePath },
      { timeout: "workspacePresentation" },
    );
    const list = isRecord(raw) && Array.isArray(raw.slashCommands) ? raw.slashCommands : [];
    const commands: Commands = [];
    for (const item of list) {
      if (!isRecord(item) || typeof item.name !== "string" || item.name === "") continue;
      const command: Commands[number] = { name: item.name };
      if (typeof item.description === "string") command.description = item.description;
      if (typeof item.inputHint === "string") command.inputHint = item.inputHint;
      commands.push(command);
    }
    this.commands.set(workspacePath, commands);
  }
}

/** A v2 snapshot in the bridge's session model; anything not shaped as expected is left for the validator to refuse. */
export function normaliseSnapshot(raw: unknown, view: ModelView | undefined, commands: Commands | undefined): unknown {
  if (!isRecord(raw) || !isRecord(raw.session)) return raw;
  const settings = isRecord(raw.settings) ? raw.settings : {};
  const modeSettings = isRecord(settings.mode) ? settings.mode : {};
  const planEnabled = raw.session.planEnabled === true || modeSettings.planEnabled === true;
  const mode = bridgeMode(modeSettings.current ?? raw.session.mode, planEnabled);
  const modelSettings = isRecord(settings.model) ? settings.model : {};
  const current = parseSelection(modelSettings.current);
  const currentModel = current && view ? findModel(view, current) : undefined;
  const level =
    current?.options?.reasoningLevel ??
    (isRecord(settings.thoughtLevel) && typeof settings.thoughtLevel.current === "string" ? settings.thoughtLevel.current : undefined);
  const normalised: Record<string, unknown> = {
    ...raw,
    session: mode === undefined ? raw.session : { ...raw.session, mode },
    settings: {
      ...settings,
      model: {
        current: current ? { providerId: current.providerId, modelId: current.modelId } : null,
        available: view ? modelEntries(view) : [],
      },
      thoughtLevel: thoughtLevels(currentModel, level),
      mode: mode === undefined ? modeSettings : { current: mode },
    },
  };
  if (commands) normalised.slashCommands = commands;
  return normalised;
}

function normaliseStateUpdate(event: Record<string, unknown>): unknown {
  const notification = event.notification;
  if (!isRecord(notification) || !isRecord(notification.patch) || !isRecord(notification.patch.mode)) return event;
  const patchMode = notification.patch.mode;
  const mode = bridgeMode(patchMode.current, patchMode.planEnabled);
  if (mode === undefined) return event;
  return { ...event, notification: { ...notification, patch: { ...notification.patch, mode: { current: mode } } } };
}

function normaliseSessionEvent(event: Record<string, unknown>): unknown {
  const inner = event.event;
  if (!isRecord(inner) || inner.type !== "session.updated" || !isRecord(inner.payload) || typeof inner.payload.planEnabled !== "boolean")
    return event;
  const mode = bridgeMode(inner.payload.mode, inner.payload.planEnabled);
  return { ...event, event: { ...inner, payload: { ...inner.payload, mode } } };
}
