/**
 * The baseline of the streaming benchmark: the same simulated host and the same bootstrap,
 * launched by HostConnection (launcher + NDJSON channel), with the host events going straight
 * to a reader: no validation, no translation, no ACP. What the bridge adds is measured against it.
 */
import { HostConnection } from "../../src/host/host-connection.js";
import type { HostSubscription } from "../../src/host/types.js";
import { resolveConfig } from "../../src/cli/config.js";
import { installOptionsFrom } from "../../src/cli/install-options.js";
import { assessInstall } from "../../src/compat/assess.js";
import { silentLogger } from "../../src/log/logger.js";

type Raw = { type?: string; event?: { type?: string; payload?: { kind?: string; delta?: unknown } } };

export class RawRelay {
  private readonly host: HostConnection;
  private subscription: HostSubscription | undefined;
  private onText: ((text: string) => void) | undefined;
  private onTerminal: (() => void) | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.host = new HostConnection({
      resolveInstall: () => assessInstall({ ...installOptionsFrom(resolveConfig([], env), env), logger: silentLogger }),
      logger: silentLogger,
      env,
    });
  }

  /** initialize + createSession + subscribe, as the bridge does before its first prompt */
  async open(workspacePath: string): Promise<string> {
    await this.host.call("agent", "initialize", { workspacePath });
    const created = await this.host.call<{ session: { sessionId: string } }>("agent", "createSession", {
      workspacePath,
      mcpServers: [],
      persistence: "immediate",
    });
    const sessionId = created.session.sessionId;
    this.subscription = await this.host.subscribe(
      { workspacePath, sessionId, deliveryKind: "desktop-continuous", includeSnapshot: true },
      {
        onEvent: (event) => {
          const inner = (event as Raw).event;
          if ((event as Raw).type !== "session.event" || !inner) return;
          if (inner.type === "model.streaming" && inner.payload?.kind === "text_delta" && typeof inner.payload.delta === "string")
            this.onText?.(inner.payload.delta);
          else if (inner.type === "turn.completed" || inner.type === "turn.failed") this.onTerminal?.();
        },
        onEnd: () => undefined,
      },
    );
    return sessionId;
  }

  /** Send the prompt; resolves at the turn's terminal event. */
  prompt(workspacePath: string, sessionId: string, text: string, onText: (text: string) => void): Promise<void> {
    this.onText = onText;
    const ended = new Promise<void>((resolve) => (this.onTerminal = resolve));
    return this.host.call("agent", "sendPrompt", { workspacePath, sessionId, content: [{ type: "text", text }] }).then(() => ended);
  }

  async close(): Promise<void> {
    await this.subscription?.dispose().catch(() => undefined);
    await this.host.close();
  }
}
