import { describe, expect, it } from "vitest";
import { isBridgeError } from "../../../src/util/errors.js";
import { CWD, joined, openSession, setup } from "./harness.js";
import { until } from "../../support/until.js";

describe("session engine: a prompt turn", () => {
  it("streams text and reasoning with message ids, ends end_turn, then reports usage", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    h.client.clear();
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("model.streaming", { kind: "reasoning_delta", assistantMessageId: "m1", delta: "thinking" });
      s.text("Hello ", "m2");
      s.text("world", "m2");
      s.complete("success", { response: "Hello world" });
    };
    await expect(engine.prompt([{ type: "text", text: "hi" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    // the first prompt repeats the slash commands (for a client that learned the session id late)
    const [commands, ...updates] = h.client.updates(opened.sessionId);
    expect(commands!.sessionUpdate).toBe("available_commands_update");
    expect(updates[0]).toEqual({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "thinking" }, messageId: "m1" });
    const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
    expect(chunks.every((u) => u.sessionUpdate === "agent_message_chunk" && u.messageId === "m2")).toBe(true);
    expect(joined(updates, "agent_message_chunk")).toBe("Hello world");
    const usage = updates.at(-1);
    expect(usage).toEqual({
      sessionUpdate: "usage_update",
      used: 1000,
      size: 200000,
      cost: { amount: 0.01, currency: "USD" },
      _meta: {
        zcode: {
          tokenUsage: {
            totalTokens: 1500,
            inputTokens: 1000,
            outputTokens: 400,
            reasoningTokens: 100,
            cacheCreationTokens: 0,
            cacheReadTokens: 50,
          },
        },
      },
    });
    const send = h.host.callsOf("sendPrompt")[0]!.params;
    expect(send).toEqual({ workspacePath: CWD, sessionId: opened.sessionId, content: "hi" });
    expect(h.host.callsOf("getTaskTokenUsage")).toHaveLength(1);
  });

  it("maps result types: limits → max_turn_requests, cancelled → cancelled", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    for (const [resultType, stopReason] of [
      ["error_max_turns", "max_turn_requests"],
      ["error_max_tool_calls", "max_turn_requests"],
      ["error_max_budget", "max_turn_requests"],
      ["cancelled", "cancelled"],
      ["success", "end_turn"],
    ] as const) {
      h.host.script.onPrompt = (s) => {
        s.startTurn();
        s.complete(resultType);
      };
      await expect(engine.prompt([{ type: "text", text: resultType }])).resolves.toMatchObject({ stopReason });
    }
  });

  it("fails the prompt on error_during_execution, an unknown result type and turn.failed, never end_turn", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete("error_during_execution");
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toMatchObject({ code: "TURN_FAILED" });
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete("weird");
    };
    const unknown = await engine.prompt([{ type: "text", text: "x" }]).catch((e: unknown) => e);
    expect(isBridgeError(unknown, "NATIVE_PROTOCOL_ERROR")).toBe(true);
    expect((unknown as Error).message).toContain('"weird"');
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.snapshot.session.status = "idle";
      s.event("turn.failed", { error: { type: "api_error", message: "rate limited", code: "1302" }, turnPhase: "model_request" });
      s.currentTurnId = undefined;
    };
    const failed = await engine.prompt([{ type: "text", text: "x" }]).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: "TURN_FAILED" });
    expect((failed as Error).message).toContain("rate limited");
  });

  it("fails closed on an unknown session event type, naming it, and stops generation once", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("turn.mystery", {});
    };
    const error = await engine.prompt([{ type: "text", text: "x" }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "NATIVE_PROTOCOL_ERROR" });
    expect((error as Error).message).toContain('"turn.mystery"');
    // the stop goes once the prompt's send has answered (the event came before that answer)
    const stops = () => h.host.operations.filter((o) => o.operation === "cancelGeneration");
    await until(() => stops().length > 0, { what: "the stop" });
    expect(stops()).toHaveLength(1);
  });

  it("fails closed on an unknown top-level type and on a malformed envelope", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.raw({ type: "something.new" });
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toThrow('"something.new"');
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.raw({
        type: "session.event",
        event: { eventId: "x", sessionId: s.id, seq: 999, timestamp: 1, type: "model.streaming", payload: {} },
      });
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toThrow(/malformed "session.event"/);
  });

  it("accepts seq gaps and rejects a seq regression or duplicate", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("model.streaming", { kind: "text_delta", delta: "a" }, { gap: 5 });
      s.complete();
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("a");
      s.event("model.streaming", { kind: "text_delta", delta: "b" }, { seq: s.seq });
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).rejects.toThrow(/seq \d+ .* after seq \d+/);
  });

  it("on a release without V4 input, answers a second concurrent prompt with a clear busy error and leaves the first alone", async () => {
    const h = setup();
    const { engine, native } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("first");
    };
    const first = engine.prompt([{ type: "text", text: "one" }]);
    const second = await engine.prompt([{ type: "text", text: "two" }]).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: "SESSION_BUSY" });
    expect((second as Error).message).toMatch(/cannot queue input while a turn runs/);
    await h.client.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk");
    native.complete();
    await expect(first).resolves.toMatchObject({ stopReason: "end_turn" });
    expect(h.host.callsOf("sendPrompt")).toHaveLength(1);
  });

  it("drops late events of a finished turn instead of showing them in the next one", async () => {
    const h = setup();
    const { opened, engine } = await openSession(h);
    let oldTurn = "";
    h.host.script.onPrompt = (s) => {
      oldTurn = s.startTurn();
      s.text("one");
      s.complete();
      s.event("model.streaming", { kind: "text_delta", delta: "LATE" }, { turnId: oldTurn });
    };
    await engine.prompt([{ type: "text", text: "1" }]);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.event("model.streaming", { kind: "text_delta", delta: "LATE again" }, { turnId: oldTurn });
      s.text("two");
      s.complete();
    };
    h.client.clear();
    await engine.prompt([{ type: "text", text: "2" }]);
    const texts = h.client
      .updates(opened.sessionId)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []));
    expect(texts).toEqual(["two"]);
  });

  it("handles idle events (title, background turn) without corrupting the next prompt", async () => {
    const h = setup();
    const { opened, engine, native } = await openSession(h);
    h.client.clear();
    native.event("session.titleUpdated", { title: "Fix tests", previousTitle: "", source: "generated" }, { turnId: null });
    const background = "bg-1";
    native.event("turn.started", { inputSource: "background_task" }, { turnId: background });
    native.event("model.streaming", { kind: "text_delta", delta: "background text" }, { turnId: background });
    native.event("turn.completed", { resultType: "success" }, { turnId: background });
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.text("mine");
      s.complete();
    };
    await expect(engine.prompt([{ type: "text", text: "x" }])).resolves.toMatchObject({ stopReason: "end_turn" });
    const updates = h.client.updates(opened.sessionId);
    expect(updates[0]).toEqual({
      sessionUpdate: "session_info_update",
      title: "Fix tests",
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const texts = updates.flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []));
    expect(texts).toEqual(["mine"]);
  });

  it("converts prompt content to host content and attachments", async () => {
    const h = setup();
    const { engine } = await openSession(h);
    h.host.script.onPrompt = (s) => {
      s.startTurn();
      s.complete();
    };
    await engine.prompt([
      { type: "text", text: "look" },
      { type: "resource_link", name: "a.ts", uri: "file:///work/project/a.ts" },
      { type: "resource", resource: { uri: "file:///work/project/b.md", text: "# B", mimeType: "text/markdown" } },
      { type: "resource", resource: { uri: "mem://blob.bin", blob: "AAEC" } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
    ]);
    const params = h.host.callsOf("sendPrompt")[0]!.params;
    expect(params.content).toBe("look\n\n@/work/project/a.ts");
    // a.ts does not exist on disk, so the link is text only: a local path goes to the host only for
    // a real file inside the session's directory (adr/0011; test/hardening/prompt-content.test.ts)
    expect(params.attachments).toEqual([
      { kind: "file", filename: "b.md", mimeType: "text/markdown", textContent: "# B", sizeBytes: 3 },
      { kind: "file", filename: "blob.bin", mimeType: "application/octet-stream", dataBase64: "AAEC", sizeBytes: 3 },
      { kind: "image", filename: "image-1.png", mimeType: "image/png", dataBase64: "iVBORw0KGgo=", sizeBytes: 8 },
      { kind: "audio", filename: "audio-2.wav", mimeType: "audio/wav", dataBase64: "UklGRg==", sizeBytes: 4 },
    ]);
    await expect(engine.prompt([{ type: "text", text: "  " }])).rejects.toMatchObject({ code: "INVALID_PARAMS" });
  });
});
