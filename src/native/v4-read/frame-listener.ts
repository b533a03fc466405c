/**
 * One `onDynamicConversationFrame` listener per (host incarnation, workspace), shared by every
 * conversation subscription of that workspace (zcode-v4.md §3.1, §9.3 "one per workspace,
 * demultiplex by topic + subscriptionId"). The event carries every conversation topic of the
 * workspace: with a listener per session each frame would cross the channel, and be staged and
 * bounded in the host process (src/runtime/conversation-frames.js), once per session of the
 * workspace. Here each frame crosses once and goes to the reader of its `subscriptionId`; before a
 * reader's subscribe answer names its subscription, the frames of its topic are its early frames.
 *
 * - The listener opens with the workspace's first reader and is disposed with its last.
 * - It ends for good (host exit, channel failure): every reader of it ends with that error; the
 *   next subscription of the workspace opens a new listener (the new incarnation's).
 * - It ends with CHANNEL_OVERFLOW (the bridge read the channel too slowly, frames were lost): a new
 *   listener replaces it and every reader resynchronises from its held position (ZCode's
 *   subscriptions live on, only their delivery to us lost frames). Past RELISTEN_LIMIT
 *   replacements within RELISTEN_WINDOW_MS the readers end with the overflow.
 */
import type { HostClient, HostSubscription } from "../../host/types.js";
import type { Logger } from "../../log/logger.js";
import type { BridgeError } from "../../util/errors.js";
import { describeError } from "../../util/errors.js";

/** the frames' event (its target names only the workspace) */
export const FRAME_EVENT = "onDynamicConversationFrame";
/** listener replacements after a channel overflow allowed within RELISTEN_WINDOW_MS */
export const RELISTEN_LIMIT = 3;
export const RELISTEN_WINDOW_MS = 60_000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** a reader, as the listener sees it */
export interface FrameRoute {
  /** `conversation/<sessionId>`: the frames of this topic before the subscribe answer are its early frames */
  readonly topic: string;
  /** a frame of its subscription (or of its topic, before the answer) */
  physical(frame: unknown): void | Promise<void>;
  /** the listener ended for good */
  end(error: BridgeError | null): void;
  /** the listener was replaced after frames were lost: resynchronise */
  lost(): void;
}

export interface FrameAttachment {
  /** the host listener's id and incarnation (the subscription's) */
  readonly id: string;
  readonly incarnation: number;
  /** the subscribe answer named the route's subscription */
  bind(subscriptionId: string): void;
  /** the route leaves; the last one disposes the listener */
  detach(): Promise<void>;
}

/** per host (a test's stub host, the bridge's one), per workspace */
const listeners = new WeakMap<HostClient, Map<string, WorkspaceFrames>>();

/** Attach a reader to its workspace's frame listener (opened if it is the first). */
export async function attachFrames(host: HostClient, workspacePath: string, route: FrameRoute, logger: Logger): Promise<FrameAttachment> {
  let byWorkspace = listeners.get(host);
  if (!byWorkspace) {
    byWorkspace = new Map<string, WorkspaceFrames>();
    listeners.set(host, byWorkspace);
  }
  let frames = byWorkspace.get(workspacePath);
  if (!frames || frames.stale()) {
    frames?.retire();
    frames = new WorkspaceFrames(host, workspacePath, logger, byWorkspace);
    byWorkspace.set(workspacePath, frames);
  }
  return frames.add(route);
}

/** the listeners open for a host (diagnostics and tests) */
export function frameListeners(host: HostClient): { workspaces: number; readers: number; framesIn: number } {
  let readers = 0;
  let framesIn = 0;
  const byWorkspace = listeners.get(host);
  for (const frames of byWorkspace?.values() ?? []) {
    readers += frames.readers;
    framesIn += frames.framesIn;
  }
  return { workspaces: byWorkspace?.size ?? 0, readers, framesIn };
}

class WorkspaceFrames {
  private readonly bound = new Map<string, FrameRoute>();
  private readonly pending = new Set<FrameRoute>();
  private subscription: HostSubscription | undefined;
  private listening: Promise<HostSubscription> | undefined;
  /** the current listener's generation: an end of an older one is not this one's */
  private generation = 0;
  private retired = false;
  private readonly relistens: number[] = [];
  framesIn = 0;

  constructor(
    private readonly host: HostClient,
    private readonly workspacePath: string,
    private readonly logger: Logger,
    private readonly registry: Map<string, WorkspaceFrames>,
  ) {}

  get readers(): number {
    return this.bound.size + this.pending.size;
  }

  /** a listener of an older host incarnation (its end has not reached us yet) */
  stale(): boolean {
    return this.retired || (this.subscription !== undefined && this.subscription.incarnation !== this.host.incarnation);
  }

  async add(route: FrameRoute): Promise<FrameAttachment> {
    this.pending.add(route);
    let subscription: HostSubscription;
    try {
      subscription = await this.listen();
    } catch (error) {
      this.pending.delete(route);
      throw error;
    }
    let attached = true;
    return {
      id: subscription.id,
      incarnation: subscription.incarnation,
      bind: (subscriptionId) => {
        if (!attached || !this.pending.delete(route)) return;
        this.bound.set(subscriptionId, route);
      },
      detach: async () => {
        if (!attached) return;
        attached = false;
        this.remove(route);
        if (this.readers === 0) await this.close();
      },
    };
  }

  private remove(route: FrameRoute): void {
    this.pending.delete(route);
    for (const [id, bound] of this.bound) if (bound === route) this.bound.delete(id);
  }

  private listen(): Promise<HostSubscription> {
    if (this.listening) return this.listening;
    const generation = ++this.generation;
    const listening = this.host.subscribe(
      { event: FRAME_EVENT, workspacePath: this.workspacePath },
      {
        onEvent: (frame) => (generation === this.generation ? this.dispatch(frame) : undefined),
        onEnd: (error) => {
          if (generation === this.generation) this.ended(error);
        },
      },
    );
    this.listening = listening;
    listening.then(
      (subscription) => {
        if (generation === this.generation) this.subscription = subscription;
      },
      () => {
        // no listener: the next reader of the workspace tries again
        if (generation === this.generation) this.retire();
      },
    );
    return listening;
  }

  /** one frame of the workspace: to the reader of its subscription, else (before their answers) to those of its topic */
  private dispatch(frame: unknown): void | Promise<void> {
    this.framesIn++;
    const id = isRecord(frame) ? frame.subscriptionId : undefined;
    const route = typeof id === "string" ? this.bound.get(id) : undefined;
    if (route) return route.physical(frame);
    if (this.pending.size === 0) return; // another client's subscription, or one already released
    const topic = isRecord(frame) ? frame.topic : undefined;
    for (const waiting of [...this.pending]) if (typeof topic !== "string" || topic === waiting.topic) void waiting.physical(frame);
  }

  private ended(error: BridgeError | null): void {
    const routes = [...this.bound.values(), ...this.pending];
    if (error?.code === "CHANNEL_OVERFLOW" && routes.length > 0 && this.mayRelisten()) {
      this.logger.warn("V4 frame listener overflowed: listening again, every reader of the workspace resynchronises", {
        readers: routes.length,
      });
      this.subscription = undefined;
      this.listening = undefined;
      this.listen().then(
        () => {
          for (const route of [...this.bound.values(), ...this.pending]) route.lost();
        },
        (relistenError: unknown) => {
          this.logger.warn("V4 frame listener could not listen again", { error: describeError(relistenError) });
          this.endAll(error);
        },
      );
      return;
    }
    this.endAll(error);
  }

  private mayRelisten(): boolean {
    const now = Date.now();
    while (this.relistens.length > 0 && now - this.relistens[0]! > RELISTEN_WINDOW_MS) this.relistens.shift();
    if (this.relistens.length >= RELISTEN_LIMIT) return false;
    this.relistens.push(now);
    return true;
  }

  private endAll(error: BridgeError | null): void {
    this.retire();
    const routes = [...this.bound.values(), ...this.pending];
    this.bound.clear();
    this.pending.clear();
    for (const route of routes) route.end(error);
  }

  /** out of the registry: the workspace's next reader opens a new listener (this one still ends its readers) */
  retire(): void {
    this.retired = true;
    if (this.registry.get(this.workspacePath) === this) this.registry.delete(this.workspacePath);
  }

  private async close(): Promise<void> {
    this.retire();
    this.generation++; // nothing of this listener reaches a reader any more
    const listening = this.listening;
    this.listening = undefined;
    this.subscription = undefined;
    const subscription = await listening?.catch(() => undefined);
    await subscription?.dispose();
  }
}
