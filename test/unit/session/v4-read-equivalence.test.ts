/**
 * The same turns read both ways give the same ACP updates (adr/0024): once as the legacy
 * `onDynamicSessionEvent` stream of a zcode-task-v2 host, once as V4 conversation frames of a
 * zcode-task-v3 host (no legacy prompt, event or answer calls), each through the unchanged
 * session layer with the real interaction broker.
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log/logger.js";
import { CurrentLineApi } from "../../../src/native/current-line-api.js";
import { SessionService } from "../../../src/session/session-service.js";
import { createInteractionBroker } from "../../../src/session/interactions/index.js";
import type { HostEventSink, HostEventTarget, HostSubscription } from "../../../src/host/types.js";
import { FakeHost, type FakeSession } from "../../support/fake-host.js";
import { FakeClient } from "../../support/fake-client.js";
import { until } from "../../support/until.js";

const CWD = "/work/project";
const VIEW = {
  providers: [
    {
      providerId: "builtin:zai-coding-plan",
      providerName: "Z.ai - Coding Plan",
      models: [{ modelId: "GLM-5.2", name: "GLM-5.2", reasoningLevels: ["low", "high"] }],
    },
  ],
};

/** A zcode-task-v3 host: V4 handshake, commands, conversation subscription and frames; no legacy stream. */
class V4Host extends FakeHost {
  frameSink: HostEventSink | undefined;
  private ordinal = 0;
  private seq = 0;
  private rowId = 0;
  /** what runs after an accepted sendText (its command id) and after a resolveInteraction */
  onSendText: ((commandId: string) => void) | undefined;
  onResolve: ((payload: Record<string, unknown>) => void) | undefined;

  constructor() {
    super();
    this.lineId = "zcode-task-v3";
    for (const m of [
      "helloConversationV4",
      "initializeConversationV4",
      "sendConversationCommandV4",
      "subscribeConversationV4",
      "resyncConversationV4",
      "unsubscribeConversationV4",
      "conversationRowsRangeV4",
    ])
      this.allowed.add(`agent.${m}`);
    this.handlers.set("agent.helloConversationV4", () => ({ kind: "hello", protocolVersion: 3 }));
    this.handlers.set("agent.initializeConversationV4", () => null);
    this.handlers.set("agent.unsubscribeConversationV4", () => null);
    this.handlers.set("agent.subscribeConversationV4", (params) => {
      queueMicrotask(() => this.snapshot(params.sessionId as string));
      return { ack: { subscriptionId: "sub-1", mode: "snapshot", logEpoch: "E" } };
    });
    this.handlers.set("agent.sendConversationCommandV4", (params) => {
      const envelope = params.envelope as { commandId: string; type: string; payload: Record<string, unknown> };
      const ack = (result?: Record<string, unknown>) => ({
        commandId: envelope.commandId,
        status: "accepted",
        revisionAtDecision: this.seq,
        result,
      });
      if (envelope.type === "sendText") {
        queueMicrotask(() => this.onSendText?.(envelope.commandId));
        return ack({ type: "inputAccepted", delivery: "startNow", inputId: envelope.commandId });
      }
      if (envelope.type === "resolveInteraction") {
        queueMicrotask(() => this.onResolve?.(envelope.payload));
        return ack({ type: "resolveInteraction", resolvedBy: "client" });
      }
      return ack();
    });
  }

  override async subscribe(target: HostEventTarget, sink: HostEventSink): Promise<HostSubscription> {
    if (!("event" in target)) return super.subscribe(target, sink);
    this.frameSink = sink;
    return { id: "frames-1", incarnation: this.incarnation, dispose: async () => void (this.frameSink = undefined) };
  }

  nextRowId(): number {
    return ++this.rowId;
  }

  private wire(frame: Record<string, unknown>, deliveryKind: string): void {
    this.ordinal += 1;
    void this.frameSink?.onEvent({
      wireVersion: 3,
      kind: "complete",
      deliveryKind,
      logicalFrameId: `lf-${this.ordinal}`,
      logicalFrameOrdinal: this.ordinal,
      topic: frame.topic,
      subscriptionId: "sub-1",
      frame,
    });
  }

  private snapshot(sessionId: string): void {
    this.seq = 1;
    const snapshot = {
      protocolVersion: 1,
      sessionId,
      logEpoch: "E",
      seq: 1,
      revision: 1,
      control: { phase: "completedSuccess", activeWorks: [], lastError: null },
      meta: { title: "", titleSource: "default" },
      config: { provider: "builtin:zai-coding-plan", model: "GLM-5.2", thought: "high", mode: "build", planEnabled: false },
      usage: { contextWindow: { usedTokens: 1000, maxTokens: 200000 }, cumulative: {} },
      pendingInteractions: [],
      plan: { items: [], updatedAt: 0 },
      rows: { window: [], totalCount: 0, firstRowId: null },
    };
    this.wire(
      { topic: `conversation/${sessionId}`, subscriptionId: "sub-1", fromSeq: 0, toSeq: 1, payload: { kind: "snapshot", snapshot } },
      "initial",
    );
  }

  /** one frame of deltas */
  deltas(sessionId: string, ...deltas: unknown[]): void {
    const fromSeq = this.seq;
    this.seq += 1;
    this.wire(
      { topic: `conversation/${sessionId}`, subscriptionId: "sub-1", fromSeq, toSeq: this.seq, payload: { kind: "deltas", deltas } },
      "online",
    );
  }
}

function side<H extends FakeHost>(host: H) {
  host.handlers.set("modelSelection.getView", () => VIEW);
  host.handlers.set("agent.readWorkspacePresentation", () => ({ slashCommands: [{ name: "compact", description: "Compact" }] }));
  const client = new FakeClient({ requests: "hold" });
  client.autoPermission = (params) => ({
    outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once")!.optionId },
  });
  const service = new SessionService({
    native: new CurrentLineApi(host),
    client,
    broker: createInteractionBroker({ logger: silentLogger }),
    logger: silentLogger,
    cancelGraceMs: 2000,
    mergeDeltas: false,
    defaultCwd: CWD,
  });
  return { host, client, service };
}

async function open(s: ReturnType<typeof side>) {
  const opened = await s.service.newSession({ cwd: CWD, mcpServers: [] });
  opened.afterResponse();
  await until(() => s.service.diagnostics().queuedUpdates === 0);
  s.client.notifications.length = 0;
  return { sessionId: opened.sessionId, engine: s.service.get(opened.sessionId) };
}

async function run(s: ReturnType<typeof side>, text: string) {
  const { sessionId, engine } = await open(s);
  const outcome = await engine.prompt([{ type: "text", text }]).then(
    (result) => ({ result }),
    (error: { code?: string; message?: string }) => ({ error: { code: error.code, message: error.message } }),
  );
  await until(() => s.service.diagnostics().queuedUpdates === 0);
  const updates: SessionUpdate[] = s.client.updates(sessionId);
  return { outcome, updates, permissions: s.client.permissions.map((p) => ({ ...p.params, sessionId: "-" })) };
}

const PERMISSION_OPTIONS_LEGACY = [
  { optionId: "allow_once", name: "Allow", kind: "allowOnce", response: { decision: "allow" } },
  { optionId: "deny", name: "Deny", kind: "deny", response: { decision: "deny" } },
];
const PERMISSION_OPTIONS_V4 = [
  { optionId: "allow_once", label: "Allow", kind: "allowOnce" },
  { optionId: "deny", label: "Deny", kind: "deny" },
];

describe("the V4 read path gives the same ACP updates as the legacy stream", () => {
  it("a turn with reasoning, text, a Bash call behind a permission, its progress and result, an Edit with its diff", async () => {
    // ---- legacy ----
    const legacy = side(new FakeHost());
    legacy.host.lineId = "zcode-task-v2";
    let resume: (() => void) | undefined;
    legacy.host.operateResult = async (operation) => {
      if (operation === "respondPermission") queueMicrotask(() => resume?.());
      return true;
    };
    legacy.host.script.onPrompt = (s: FakeSession) => {
      s.startTurn();
      s.event("model.streaming", { kind: "reasoning_delta", assistantMessageId: "m1", delta: "Let me look." });
      s.event("model.streaming", { kind: "text_delta", assistantMessageId: "m1", delta: "I'll run the tests." });
      s.event("tool.updated", { kind: "scheduled", toolCallId: "c1", toolName: "Bash", input: { command: "npm test" } });
      s.raw({
        type: "permission.request",
        request: {
          requestId: "i1",
          sessionId: s.id,
          turnId: s.currentTurnId,
          toolCallId: "c1",
          toolName: "Bash",
          reason: "Run npm test",
          input: { command: "npm test" },
          options: PERMISSION_OPTIONS_LEGACY,
        },
      });
      resume = () => {
        s.event("tool.updated", { kind: "started", toolCallId: "c1", toolName: "Bash" });
        s.event("tool.updated", { kind: "progress", toolCallId: "c1", toolName: "Bash", outputPreview: "PASS a\n" });
        s.event("tool.updated", {
          kind: "result",
          toolCallId: "c1",
          toolName: "Bash",
          result: { success: true, content: "PASS a\nPASS b\n" },
        });
        s.event("tool.updated", {
          kind: "scheduled",
          toolCallId: "e1",
          toolName: "Edit",
          input: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
        });
        s.event("tool.updated", { kind: "started", toolCallId: "e1", toolName: "Edit" });
        s.event("tool.updated", {
          kind: "result",
          toolCallId: "e1",
          toolName: "Edit",
          result: { success: true, content: "Edited src/a.ts" },
        });
        s.event("model.streaming", { kind: "text_delta", assistantMessageId: "m1", delta: " Done." });
        s.complete("success");
      };
    };
    const a = await run(legacy, "test it");

    // ---- V4 ----
    const v4 = side(new V4Host());
    const host = v4.host;
    let sid = "";
    let header: Record<string, unknown> = {};
    const bash = (status: string, extra: Record<string, unknown> = {}) => ({
      rowId: 5,
      kind: "toolCall",
      turnId: "T1",
      toolCallId: "c1",
      toolName: "Bash",
      status,
      input: { command: "npm test" },
      approvalInteractionId: "i1",
      ...extra,
    });
    host.onSendText = (commandId) => {
      sid = [...host.sessions.keys()][0]!;
      header = {
        rowId: host.nextRowId(),
        kind: "turnHeader",
        turnId: "T1",
        origin: "userInput",
        sourceCommandId: commandId,
        state: "running",
      };
      host.deltas(
        sid,
        { op: "row.appended", row: header },
        {
          op: "row.appended",
          row: { rowId: host.nextRowId(), kind: "userInput", turnId: "T1", text: "test it", sourceCommandId: commandId },
        },
        { op: "state.updated", patch: { control: { phase: "running", activeWorks: [] }, revision: 2 } },
      );
      host.deltas(sid, {
        op: "row.appended",
        row: { rowId: host.nextRowId(), kind: "reasoning", turnId: "T1", text: "Let me look.", assistantResponseId: "m1" },
      });
      host.deltas(sid, {
        op: "row.appended",
        row: { rowId: host.nextRowId(), kind: "assistantText", turnId: "T1", text: "I'll run the tests.", assistantResponseId: "m1" },
      });
      host.nextRowId();
      host.deltas(
        sid,
        { op: "row.appended", row: bash("pendingApproval") },
        {
          op: "state.updated",
          patch: {
            pendingInteractions: [
              {
                interactionId: "i1",
                kind: "permission",
                anchorRowId: 5,
                createdAt: 1,
                payload: {
                  kind: "permission",
                  toolCallId: "c1",
                  toolName: "Bash",
                  summary: "Run npm test",
                  detail: { command: "npm test" },
                  options: PERMISSION_OPTIONS_V4,
                },
              },
            ],
          },
        },
      );
    };
    host.onResolve = () => {
      host.deltas(sid, { op: "state.updated", patch: { pendingInteractions: [] } }, { op: "row.upserted", row: bash("running") });
      host.deltas(sid, { op: "row.upserted", row: bash("running", { outputPreview: "PASS a\n" }) });
      host.deltas(sid, { op: "row.upserted", row: bash("success", { output: { text: "PASS a\nPASS b\n" } }) });
      const edit = {
        rowId: host.nextRowId(),
        kind: "toolCall",
        turnId: "T1",
        toolCallId: "e1",
        toolName: "Edit",
        status: "running",
        input: { file_path: "src/a.ts", old_string: "a", new_string: "b" },
      };
      host.deltas(sid, { op: "row.appended", row: edit });
      const display = { kind: "file_diff", filePath: "src/a.ts", additions: 1, deletions: 1, structuredPatch: [] };
      host.deltas(sid, { op: "row.upserted", row: { ...edit, status: "success", output: { text: "Edited src/a.ts", display } } });
      host.deltas(sid, {
        op: "row.appended",
        row: { rowId: host.nextRowId(), kind: "assistantText", turnId: "T1", text: " Done.", assistantResponseId: "m1" },
      });
      host.deltas(
        sid,
        { op: "row.upserted", row: { ...header, state: "completedSuccess" } },
        { op: "state.updated", patch: { control: { phase: "completedSuccess", activeWorks: [] } } },
      );
    };
    const b = await run(v4, "test it");

    expect(a.outcome).toMatchObject({ result: { stopReason: "end_turn" } });
    expect(b.outcome).toEqual(a.outcome);
    expect(a.permissions).toHaveLength(1);
    expect(a.updates.length).toBeGreaterThanOrEqual(10);
    expect(b.permissions).toEqual(a.permissions);
    // the tool results' raw output differs only by what ZCode's V4 row adds (the file_diff display)
    const comparable = (updates: SessionUpdate[]) =>
      updates.map((u) => (u.sessionUpdate === "tool_call_update" && u.toolCallId === "e1" && u.rawOutput ? { ...u, rawOutput: "-" } : u));
    expect(comparable(b.updates)).toEqual(comparable(a.updates));
    expect(a.updates.map((u) => u.sessionUpdate)).toEqual(
      expect.arrayContaining(["agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]),
    );
    // the answer went back once, through V4 only
    expect(
      host.callsOf("sendConversationCommandV4").filter((c) => (c.params.envelope as { type: string }).type === "resolveInteraction"),
    ).toHaveLength(1);
    expect(host.operations).toEqual([]);
    expect(host.callsOf("sendPrompt")).toEqual([]);
  });

  it("a failed turn fails the prompt with the same error", async () => {
    const legacy = side(new FakeHost());
    legacy.host.lineId = "zcode-task-v2";
    legacy.host.script.onPrompt = (s: FakeSession) => {
      s.startTurn();
      s.text("Working", "m1");
      s.snapshot.session.status = "idle";
      s.event("turn.failed", { error: { message: "Too many requests", code: "provider.rateLimited" } });
    };
    const a = await run(legacy, "go");

    const v4 = side(new V4Host());
    const host = v4.host;
    host.onSendText = (commandId) => {
      const sid = [...host.sessions.keys()][0]!;
      const header = {
        rowId: host.nextRowId(),
        kind: "turnHeader",
        turnId: "T1",
        origin: "userInput",
        sourceCommandId: commandId,
        state: "running",
      };
      host.deltas(sid, { op: "row.appended", row: header });
      host.deltas(sid, {
        op: "row.appended",
        row: { rowId: host.nextRowId(), kind: "assistantText", turnId: "T1", text: "Working", assistantResponseId: "m1" },
      });
      host.deltas(
        sid,
        {
          op: "state.updated",
          patch: { control: { phase: "error", lastError: { code: "provider.rateLimited", message: "Too many requests" } } },
        },
        { op: "row.upserted", row: { ...header, state: "failed" } },
      );
    };
    const b = await run(v4, "go");
    expect(a.outcome).toMatchObject({ error: { code: "TURN_FAILED", message: expect.stringContaining("Too many requests") } });
    expect(b.outcome).toEqual(a.outcome);
    expect(b.updates).toEqual(a.updates);
  });
});
