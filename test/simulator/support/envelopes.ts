import { expect } from "vitest";
import type { Any } from "./host-harness.js";

/** Invariants of every session.event envelope (docs/zcode-host.md §5.3). */
export function expectWellFormed(events: Any[], sessionId: string): void {
  for (const event of events) {
    expect(event).toMatchObject({ sessionId, deliveryKind: "desktop-continuous" });
    expect(typeof event.eventId).toBe("string");
    expect(Number.isInteger(event.seq) && event.seq >= 0).toBe(true);
    expect(typeof event.timestamp).toBe("number");
    expect(typeof event.type).toBe("string");
    expect(event.payload !== null && typeof event.payload === "object").toBe(true);
  }
}

/** seq strictly increasing; returns whether at least one gap occurred. */
export function expectIncreasingSeq(events: Any[]): boolean {
  let gap = false;
  for (let k = 1; k < events.length; k++) {
    expect(events[k].seq).toBeGreaterThan(events[k - 1].seq);
    if (events[k].seq > events[k - 1].seq + 1) gap = true;
  }
  return gap;
}

export function terminals(events: Any[]): Any[] {
  return events.filter((e) => e.type === "turn.completed" || e.type === "turn.failed");
}

export function streamingKinds(events: Any[]): string[] {
  return events.filter((e) => e.type === "model.streaming").map((e) => e.payload.kind);
}

export function toolKinds(events: Any[], toolCallId?: string): string[] {
  return events
    .filter((e) => e.type === "tool.updated" && (toolCallId === undefined || e.payload.toolCallId === toolCallId))
    .map((e) => e.payload.kind);
}
