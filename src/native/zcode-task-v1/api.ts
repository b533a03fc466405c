/**
 * The zcode-task-v1 line (ZCode 3.10.2, 3.11.2; docs/zcode-host.md): sign-in from
 * `readWorkspaceState`, models as `{providerId, modelId, variant?}` refs listed in the snapshot,
 * `plan` as a mode of its own. Its snapshots already are the bridge's session model.
 */
import type { ModelRef, SessionSnapshot } from "../../protocol/native-types.js";
import { parseSnapshot } from "../../protocol/event-validation.js";
import type { SessionRef } from "../native-api.js";
import { requireAvailable, signInRequired } from "../shared/sign-in.js";
import { TaskLineApi } from "../shared/task-line-api.js";

export class TaskV1Api extends TaskLineApi {
  readonly lineId: string = "zcode-task-v1";

  async checkSignIn(workspacePath: string): Promise<void> {
    await requireAvailable(this.host, workspacePath);
    const state = await this.host.call<{ modelCatalog?: { providers?: unknown[] } }>(
      "agent",
      "readWorkspaceState",
      { workspacePath },
      { timeout: "signInState" },
    );
    const providers = state?.modelCatalog?.providers;
    if (Array.isArray(providers) && providers.length === 0) throw signInRequired({ providers: 0 });
  }

  async setModel(params: SessionRef & { model: ModelRef }): Promise<SessionSnapshot> {
    const model: Record<string, unknown> = { providerId: params.model.providerId, modelId: params.model.modelId };
    if (params.model.variant) model.variant = params.model.variant;
    const raw = await this.host.call(
      "agent",
      "setModel",
      { workspacePath: params.workspacePath, sessionId: params.sessionId, model },
      { timeout: "setModel" },
    );
    return this.toSession(raw, "setModel");
  }

  protected parseSession(raw: unknown, what: string): SessionSnapshot {
    return parseSnapshot(raw, what);
  }
}
