/**
 * Fuzz tests of the host event validator (src/protocol/event-validation.ts): random JSON
 * values and mutations of valid events (keys deleted, values replaced, types changed, deep
 * nesting). Every input is either accepted, and then has the shape the router relies on, or
 * rejected with BridgeError NATIVE_PROTOCOL_ERROR whose message names the event and the problem.
 * Nothing else is ever thrown.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isValidEnvelope, parseHostEvent, parseSessionEventPayload, parseSnapshot } from "../../../src/protocol/event-validation.js";
import { MODEL_STREAMING_KINDS, TOOL_UPDATED_KINDS, type SessionEventEnvelope } from "../../../src/protocol/native-types.js";
import { BridgeError } from "../../../src/util/errors.js";
import { makeSnapshot } from "../../support/fake-host.js";

const RUNS = { numRuns: 400 };

function envelope(type: string, payload: Record<string, unknown>, seq = 7): Record<string, unknown> {
  return {
    type: "session.event",
    event: {
      eventId: `e${seq}`,
      sessionId: "ses_1",
      turnId: "turn_1",
      seq,
      timestamp: 1_760_000_000_000,
      deliveryKind: "desktop-continuous",
      type,
      payload,
    },
  };
}

/** One valid event of every shape the bridge reads. */
const VALID: Record<string, unknown>[] = [
  { type: "snapshot", snapshot: makeSnapshot("ses_1", "/w") },
  {
    type: "state.updated",
    notification: { type: "state.updated", scope: "session", sessionId: "ses_1", revision: 3, patch: { mode: { current: "plan" } } },
  },
  { type: "permission.request", request: { requestId: "p1", toolCallId: "c1", toolName: "Bash", options: [] } },
  { type: "userInput.request", request: { requestId: "u1", questions: [] } },
  { type: "userInput.response", requestId: "u1", response: { action: "cancel" } },
  { type: "providerRuntimeHeaders.request", request: { requestId: "h1" } },
  envelope("model.streaming", { kind: "text_delta", assistantMessageId: "m1", partId: "p1", delta: "hello" }),
  envelope("model.streaming", { kind: "reasoning_delta", assistantMessageId: "m1", delta: "hmm" }),
  envelope("model.streaming", { kind: "tool_input_start", toolCallId: "c1", toolName: "Bash" }),
  envelope("model.streaming", { kind: "tool_input_delta", toolCallId: "c1", delta: '{"co' }),
  envelope("model.streaming", { kind: "tool_input_end", toolCallId: "c1" }),
  envelope("model.streaming", { kind: "tool_call", toolCallId: "c1", toolName: "Bash", input: { command: "ls" } }),
  ...MODEL_STREAMING_KINDS.filter((k) => !k.includes("delta") && !k.startsWith("tool")).map((kind) =>
    envelope("model.streaming", { kind }),
  ),
  envelope("tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Bash", input: { command: "ls" } }),
  envelope("tool.updated", { kind: "started", toolCallId: "c1", toolName: "Bash" }),
  envelope("tool.updated", { kind: "progress", toolCallId: "c1", stdoutTail: "a" }),
  envelope("tool.updated", { kind: "result", toolCallId: "c1", result: { success: true, content: "ok" } }),
  envelope("tool.updated", { kind: "error", toolCallId: "c1", error: { message: "boom" } }),
  envelope("tool.updated", { kind: "batch", toolCallIds: ["c1", "c2"] }),
  envelope("turn.started", { turnNumber: 1, inputId: "in1" }),
  envelope("turn.completed", { resultType: "success", response: "done" }),
  envelope("turn.failed", { error: { type: "api_error", message: "quota" }, turnPhase: "model_request" }),
  envelope("session.titleUpdated", { title: "T", previousTitle: "", source: "generated" }),
  envelope("session.updated", { mode: "plan", previousMode: "build" }),
  envelope("part.delta", { anything: true }),
];

/** Validate like the router does: the top-level event, then the payload of a session.event. */
function validate(raw: unknown): { accepted: true; event: Record<string, any> } | { accepted: false; error: BridgeError } {
  try {
    const event = parseHostEvent(raw) as unknown as Record<string, any>;
    if (event.type === "session.event") parseSessionEventPayload(event.event as SessionEventEnvelope);
    return { accepted: true, event };
  } catch (error) {
    if (!(error instanceof BridgeError)) throw new Error(`the validator threw something else: ${String(error)}`, { cause: error });
    return { accepted: false, error };
  }
}

/** What the router relies on once an event is accepted. */
function expectRouterShape(event: Record<string, any>): void {
  expect(typeof event.type).toBe("string");
  if (event.type === "session.event") {
    const inner = event.event;
    expect(Number.isInteger(inner.seq) && inner.seq >= 0).toBe(true);
    expect(typeof inner.sessionId === "string" && inner.sessionId !== "").toBe(true);
    expect(typeof inner.type === "string" && inner.type !== "").toBe(true);
    expect(typeof inner.payload === "object" && inner.payload !== null && !Array.isArray(inner.payload)).toBe(true);
    const p = inner.payload;
    if (inner.type === "model.streaming" && (p.kind === "text_delta" || p.kind === "reasoning_delta"))
      expect(typeof p.delta).toBe("string");
    if (inner.type === "tool.updated" && p.kind !== "batch") expect(typeof p.toolCallId === "string" && p.toolCallId !== "").toBe(true);
    if (inner.type === "turn.completed") expect(typeof p.resultType).toBe("string");
    if (inner.type === "turn.failed") expect(typeof p.error?.message).toBe("string");
  }
  if (event.type === "snapshot") expect(typeof event.snapshot.session.sessionId).toBe("string");
  if (event.type === "state.updated" && event.notification.scope === "session") expect(typeof event.notification.sessionId).toBe("string");
}

/** The message says what was wrong: the event type (or that there is none) and a reason. */
function expectNamedProblem(raw: unknown, error: BridgeError): void {
  expect(error.code).toBe("NATIVE_PROTOCOL_ERROR");
  expect(error.message).toMatch(/^ZCode sent /);
  const type = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>).type : undefined;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) expect(error.message).toMatch(/not an object/);
  else if (typeof type !== "string") expect(error.message).toMatch(/without a type/);
  else {
    const inner = (raw as { event?: { type?: unknown } }).event?.type;
    const named = error.message.includes(`"${type}"`) || (typeof inner === "string" && error.message.includes(`"${inner}"`));
    expect(named, error.message).toBe(true);
  }
}

type Path = Array<string | number>;

function paths(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (typeof value !== "object" || value === null || prefix.length > 40) return out;
  for (const [key, child] of Object.entries(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(path);
    paths(child, path, out);
  }
  return out;
}

type Mutation = { kind: "delete" | "replace" | "add" | "nest"; pick: number; value: unknown; key: string };

function mutate(original: Record<string, unknown>, mutation: Mutation): unknown {
  const copy = structuredClone(original) as Record<string, any>;
  const all = paths(copy);
  if (all.length === 0) return copy;
  if (mutation.kind === "nest") {
    let deep: unknown = mutation.value;
    for (let i = 0; i < 300; i++) deep = { a: [deep] };
    const target = all[mutation.pick % all.length]!;
    set(copy, target, deep);
    return copy;
  }
  const target = all[mutation.pick % all.length]!;
  if (mutation.kind === "delete") remove(copy, target);
  else if (mutation.kind === "replace") set(copy, target, mutation.value);
  else {
    const parent = get(copy, target.slice(0, -1));
    if (typeof parent === "object" && parent !== null && !Array.isArray(parent))
      (parent as Record<string, unknown>)[mutation.key] = mutation.value;
  }
  return copy;
}

function get(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
}

function set(root: Record<string, unknown>, path: Path, value: unknown): void {
  (get(root, path.slice(0, -1)) as Record<string | number, unknown>)[path[path.length - 1]!] = value;
}

function remove(root: Record<string, unknown>, path: Path): void {
  const parent = get(root, path.slice(0, -1)) as Record<string | number, unknown> | unknown[];
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom("delete", "replace", "replace", "add", "nest"),
  pick: fc.nat(),
  value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom("", -1, 1.5, 2 ** 53, null, [], {}, "__proto__", "constructor")),
  key: fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("__proto__", "constructor", "type", "kind", "seq")),
});

describe("host event validator fuzz", () => {
  it("accepts every event of the valid corpus", () => {
    for (const event of VALID) {
      const result = validate(event);
      expect(result.accepted, JSON.stringify(event).slice(0, 120)).toBe(true);
      if (result.accepted) expectRouterShape(result.event);
    }
  });

  it("mutated valid events: accepted with the router's shape, or a typed error naming the problem", () => {
    fc.assert(
      fc.property(fc.constantFrom(...VALID), fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (event, mutations) => {
        const raw = JSON.parse(
          JSON.stringify(mutations.reduce<unknown>((value, m) => mutate(value as Record<string, unknown>, m), event)) ?? "null",
        ) as unknown;
        const result = validate(raw);
        if (result.accepted) expectRouterShape(result.event);
        else expectNamedProblem(raw, result.error);
      }),
      RUNS,
    );
  });

  it("random JSON values and random typed objects: never anything but a typed error", () => {
    const types = fc.oneof(
      fc.constantFrom(
        "snapshot",
        "state.updated",
        "session.event",
        "permission.request",
        "userInput.request",
        "userInput.response",
        "providerRuntimeHeaders.request",
        "toString",
        "__proto__",
        "constructor",
        "hasOwnProperty",
      ),
      fc.string({ maxLength: 12 }),
    );
    const innerTypes = fc.oneof(
      fc.constantFrom(
        "model.streaming",
        "tool.updated",
        "turn.completed",
        "turn.failed",
        "turn.started",
        "session.titleUpdated",
        "session.updated",
        "toString",
        "__proto__",
      ),
      fc.string({ maxLength: 12 }),
    );
    const randomEnvelope = fc.record({
      type: fc.constant("session.event"),
      event: fc.record(
        {
          eventId: fc.oneof(fc.string(), fc.integer()),
          sessionId: fc.oneof(fc.string(), fc.constant(null)),
          seq: fc.oneof(fc.integer({ min: -5, max: 1e6 }), fc.double(), fc.string()),
          timestamp: fc.oneof(fc.double(), fc.string()),
          deliveryKind: fc.constantFrom("desktop-continuous", "web-remote-replayable", "other"),
          type: innerTypes,
          payload: fc.oneof(
            fc.jsonValue({ maxDepth: 3 }),
            fc.record(
              {
                kind: fc.oneof(fc.constantFrom(...MODEL_STREAMING_KINDS, ...TOOL_UPDATED_KINDS), fc.string()),
                delta: fc.jsonValue({ maxDepth: 1 }),
                toolCallId: fc.jsonValue({ maxDepth: 1 }),
              },
              { requiredKeys: [] },
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    });
    const anyEvent = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })).chain((d) => types.map((type) => ({ ...d, type }))),
      randomEnvelope,
    );
    fc.assert(
      fc.property(anyEvent, (value) => {
        const raw = JSON.parse(JSON.stringify(value) ?? "null") as unknown;
        const result = validate(raw);
        if (result.accepted) expectRouterShape(result.event);
        else expectNamedProblem(raw, result.error);
      }),
      RUNS,
    );
  });

  it("snapshots and bare envelopes: typed errors only", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), mutationArb, (value, mutation) => {
        const snapshot = JSON.parse(JSON.stringify(mutate(makeSnapshot("ses_1", "/w"), mutation))) as unknown;
        for (const candidate of [value, snapshot]) {
          try {
            const parsed = parseSnapshot(candidate, "readSession");
            expect(typeof parsed.session.sessionId === "string" && parsed.session.sessionId !== "").toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(BridgeError);
            expect((error as BridgeError).message).toMatch(/^ZCode returned a malformed session snapshot from readSession: /);
          }
          expect(typeof isValidEnvelope(candidate)).toBe("boolean");
        }
      }),
      RUNS,
    );
  });
});
