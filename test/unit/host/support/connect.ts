/** HostConnection wiring for tests: a debug log file per connection and an event collector. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HostConnection, type HostConnectionOptions } from "../../../../src/host/host-connection.js";
import type { HostEventSink } from "../../../../src/host/types.js";
import { createLogger } from "../../../../src/log/logger.js";
import type { BridgeError } from "../../../../src/util/errors.js";
import { supportedAssessment, type TestInstall } from "./sim.js";

export interface TestConnection {
  host: HostConnection;
  logFile: string;
  readLog(): string;
  exits: Array<{ incarnation: number; error: BridgeError }>;
}

let counter = 0;

export function openConnection(
  install: TestInstall,
  options: { profile?: Record<string, unknown>; env?: Record<string, string> } & Partial<
    Omit<HostConnectionOptions, "resolveInstall" | "logger" | "env">
  > = {},
): TestConnection {
  counter += 1;
  const logFile = join(install.root, `bridge-${counter}.log`);
  const { profile, env, ...rest } = options;
  const host = new HostConnection({
    resolveInstall: async () => supportedAssessment(install),
    logger: createLogger({ level: "debug", file: logFile }),
    env: {
      ...process.env,
      ...install.env,
      ...(profile ? { ZCODE_SIM_PROFILE: JSON.stringify(profile) } : {}),
      ...env,
    },
    ...rest,
  });
  const exits: TestConnection["exits"] = [];
  host.onExit((info) => exits.push(info));
  return {
    host,
    logFile,
    exits,
    readLog: () => {
      try {
        return readFileSync(logFile, "utf8");
      } catch {
        return "";
      }
    },
  };
}

/** Collects subscription events; `until` waits for a condition on them (no sleeps). */
export class EventCollector implements HostEventSink {
  readonly events: unknown[] = [];
  ended: BridgeError | null | undefined;
  endCount = 0;
  private waiters = new Set<() => void>();

  onEvent(event: unknown): void {
    this.events.push(event);
    this.wake();
  }

  onEnd(error: BridgeError | null): void {
    this.ended = error;
    this.endCount += 1;
    this.wake();
  }

  until(condition: (c: EventCollector) => boolean, timeoutMs = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!condition(this)) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`condition not met; ${this.events.length} events, ended=${String(this.ended?.code ?? this.ended)}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** inner session.event types, in order */
  sessionEventTypes(): string[] {
    return this.events
      .filter((e): e is { type: string; event: { type: string } } => (e as { type?: string }).type === "session.event")
      .map((e) => e.event.type);
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export async function rejectionOf(promise: Promise<unknown>): Promise<BridgeError> {
  try {
    await promise;
  } catch (error) {
    return error as BridgeError;
  }
  throw new Error("expected a rejection");
}
