/**
 * What the ACP client has been told about a session's snapshot-level state: settings (modes,
 * config options), title, plan, context usage and slash commands. Applying a new snapshot
 * returns only the updates for what changed, so repeated snapshots do not flood the client.
 */
import type { SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionSnapshot, TaskTokenUsage } from "../protocol/native-types.js";
import { SessionOptions } from "./session-options.js";
import { clearsPlan, commandsUpdate, planUpdate, titleUpdate, usageUpdate } from "./snapshot-updates.js";

export interface ApplyOptions {
  /** false: record as the baseline without producing updates */
  emit: boolean;
  /** leave out this settings update (the client just asked for the change and gets it in the response) */
  suppress?: "mode" | "config";
}

type Keyed = "title" | "plan" | "usage" | "commands";

function usageKey(update: SessionUpdate | undefined): string | undefined {
  if (!update || update.sessionUpdate !== "usage_update") return undefined;
  const zcode = update._meta?.zcode as { contextBreakdownChars?: unknown } | undefined;
  return JSON.stringify([update.used, update.size, update.cost ?? null, zcode?.contextBreakdownChars ?? null]);
}

export class SnapshotState {
  readonly options = new SessionOptions();
  private readonly keys = new Map<Keyed, string>();
  /**
   * end-of-turn usage reports being read (session-engine.ts `reportUsage`; a count, as a later
   * turn's report can start before an earlier one's ends): while any is, the report says the usage
   */
  usageReportsReading = 0;
  /** the latest snapshot's state, never its messages (the engine keeps no history; docs/history.md) */
  private latest: SessionSnapshot | undefined;

  /** `planOps`: the client advertised plan operations (the to-do list goes out as `plan_update` / `plan_removed`) */
  constructor(private readonly planOps: () => boolean = () => false) {}

  modes(): SessionModeState {
    return this.options.modes();
  }

  configOptions(): SessionConfigOption[] {
    return this.options.configOptions();
  }

  apply(snapshot: SessionSnapshot, how: ApplyOptions): SessionUpdate[] {
    this.latest = snapshot.messages === undefined ? snapshot : { ...snapshot, messages: [] };
    const updates: SessionUpdate[] = [];
    const { modeChanged, optionsChanged } = this.options.apply(snapshot);
    if (how.emit) {
      if (modeChanged && how.suppress !== "mode") {
        updates.push({ sessionUpdate: "current_mode_update", currentModeId: this.options.currentMode });
      }
      if (optionsChanged && how.suppress !== "config") {
        updates.push({ sessionUpdate: "config_option_update", configOptions: this.options.configOptions() });
      }
    }
    const title = titleUpdate(snapshot);
    this.track("title", title, title?.sessionUpdate === "session_info_update" ? (title.title ?? undefined) : undefined, how.emit, updates);
    const plan = planUpdate(snapshot, this.planOps());
    // the first "no plan" of a session says nothing the client does not know
    const clearsUnsent = plan !== undefined && clearsPlan(plan) && plan.sessionUpdate !== "plan" && !this.keys.has("plan");
    if (!clearsUnsent) this.track("plan", plan, plan ? JSON.stringify(plan) : undefined, how.emit, updates);
    const usage = usageUpdate(snapshot);
    if (this.usageReportsReading === 0) this.track("usage", usage, usageKey(usage), how.emit, updates);
    const commands = commandsUpdate(snapshot);
    this.track("commands", commands, commands ? JSON.stringify(commands) : undefined, how.emit, updates);
    return updates;
  }

  /** A mode change seen on the event stream. */
  modeChanged(modeId: string): SessionUpdate[] {
    if (!this.options.setCurrentMode(modeId)) return [];
    return [
      { sessionUpdate: "current_mode_update", currentModeId: modeId },
      { sessionUpdate: "config_option_update", configOptions: this.options.configOptions() },
    ];
  }

  /** A title change seen on the event stream (session.titleUpdated). */
  titleChanged(title: string, timestamp: number): SessionUpdate[] {
    if (this.keys.get("title") === title) return [];
    this.keys.set("title", title);
    return [{ sessionUpdate: "session_info_update", title, updatedAt: new Date(timestamp).toISOString() }];
  }

  /** Context usage reported per model request (session.updated `contextUsage`). */
  contextUsage(used: number, size: number): SessionUpdate[] {
    if (this.usageReportsReading > 0) return [];
    const update: SessionUpdate = { sessionUpdate: "usage_update", used: Math.round(used), size: Math.round(size) };
    const key = usageKey(update)!;
    if (this.keys.get("usage") === key) return [];
    this.keys.set("usage", key);
    return [update];
  }

  /** The end-of-turn usage report: always sent when context usage is known. */
  turnUsage(snapshot: SessionSnapshot, tokens: TaskTokenUsage | undefined): SessionUpdate | undefined {
    const update = usageUpdate(snapshot, tokens);
    const key = usageKey(update);
    if (key) this.keys.set("usage", key);
    return update;
  }

  /** Current slash commands (sent after the session/new, load or resume response). */
  commands(): SessionUpdate | undefined {
    return this.latest ? commandsUpdate(this.latest) : undefined;
  }

  /** Title, plan and usage of the latest snapshot (end of a load replay). */
  metadata(): SessionUpdate[] {
    if (!this.latest) return [];
    return [titleUpdate(this.latest), planUpdate(this.latest, this.planOps()), usageUpdate(this.latest)].filter(
      (u): u is SessionUpdate => u !== undefined && !clearsPlan(u),
    );
  }

  private track(kind: Keyed, update: SessionUpdate | undefined, key: string | undefined, emit: boolean, out: SessionUpdate[]): void {
    if (!update || key === undefined) return;
    if (this.keys.get(kind) === key) return;
    this.keys.set(kind, key);
    if (emit) out.push(update);
  }
}
