/**
 * The v2 client port (src/acp/v2/client-port-v2.ts): message ids where the session layer gave
 * none — one per message kind per turn, fresh for each turn and for each replayed exchange — and
 * v1 updates v2 has no counterpart for are not sent at all.
 */
import type * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { describe, expect, it } from "vitest";
import { V2ClientPort } from "../../../src/acp/v2/client-port-v2.js";

function port(): { port: V2ClientPort; sent: any[] } {
  const sent: any[] = [];
  const context = { notify: (_method: string, params: unknown) => (sent.push(params), Promise.resolve()) } as unknown as v2.AgentContext;
  return { port: new V2ClientPort(context), sent };
}

const text = (sessionUpdate: string, t: string) =>
  ({ sessionId: "s", update: { sessionUpdate, content: { type: "text", text: t } } }) as any;

describe("V2ClientPort message ids", () => {
  it("one id per message kind within a turn, new ids for the next turn", async () => {
    const { port: p, sent } = port();
    p.beginTurn("s");
    await p.sessionUpdate(text("agent_message_chunk", "a"));
    await p.sessionUpdate(text("agent_thought_chunk", "t"));
    await p.sessionUpdate(text("agent_message_chunk", "b"));
    p.beginTurn("s");
    await p.sessionUpdate(text("agent_message_chunk", "c"));
    const ids = sent.map((n) => n.update.messageId);
    expect(ids[0]).toBe(ids[2]);
    expect(ids[1]).not.toBe(ids[0]);
    expect(ids[3]).not.toBe(ids[0]);
  });

  it("in a replay, each user message after an answer starts a new exchange", async () => {
    const { port: p, sent } = port();
    for (const [kind, t] of [
      ["user_message_chunk", "q1"],
      ["user_message_chunk", "q1 more"],
      ["agent_message_chunk", "a1"],
      ["user_message_chunk", "q2"],
      ["agent_message_chunk", "a2"],
    ] as const) {
      await p.sessionUpdate(text(kind, t));
    }
    const ids = sent.map((n) => n.update.messageId);
    expect(ids[0]).toBe(ids[1]);
    expect(new Set(ids).size).toBe(4);
  });

  it("an update without a v2 counterpart is not sent", async () => {
    const { port: p, sent } = port();
    await p.sessionUpdate({ sessionId: "s", update: { sessionUpdate: "current_mode_update", currentModeId: "ask" } });
    expect(sent).toEqual([]);
  });
});
