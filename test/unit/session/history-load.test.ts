/**
 * session/load reads the history in pieces (docs/history.md): updates are written as pieces come,
 * each replayed part is bounded, a host restart before the load resumes the session first, and a
 * load that stops early releases the held history.
 */
import { describe, expect, it } from "vitest";
import { makeSnapshot } from "../../support/fake-host.js";
import { CWD, openSession, setup } from "./harness.js";

function longSnapshot(id: string, turns: number) {
  const messages = [];
  for (let i = 0; i < turns; i += 1) {
    messages.push({ info: { messageId: `u${i}`, role: "user" }, parts: [{ type: "text", text: `question ${i}` }] });
    messages.push({
      info: { messageId: `a${i}`, role: "assistant" },
      parts: [
        {
          type: "tool",
          callId: `c${i}`,
          tool: "Write",
          state: { status: "completed", input: { file_path: `f${i}.txt`, content: "w".repeat(200_000) }, output: "o".repeat(300_000) },
        },
        { type: "text", text: `answer ${i}` },
      ],
    });
  }
  return makeSnapshot(id, CWD, { messages });
}

describe("session/load in pieces", () => {
  it("replays every piece in order, each text, input and output bounded with a marker", async () => {
    const h = setup();
    h.host.addSession(longSnapshot("old", 5));
    await h.service.resumeSession({ sessionId: "old", cwd: CWD, mcpServers: [], replay: true });
    expect(h.host.records.filter((r) => r.name === "history.next")).toHaveLength(5);
    const updates = h.client.updates("old");
    const questions = updates.flatMap((u) =>
      u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    expect(questions).toEqual([0, 1, 2, 3, 4].map((i) => `question ${i}`));
    const tool = updates.find((u) => u.sessionUpdate === "tool_call") as Record<string, any>;
    expect(tool.rawInput.content).toMatch(/^w{65536}\n… \[zcode-acp: 134\.5 kB more not shown\]$/);
    expect(tool.rawOutput).toMatch(/^o{65536}\n… \[zcode-acp: 234\.5 kB more not shown\]$/);
    expect(JSON.stringify(tool).length).toBeLessThan(600 * 1024);
    expect(h.host.heldHistories.size).toBe(0);
  });

  it("a load of an open session after a host restart resumes it before reading its history", async () => {
    const h = setup();
    const { opened } = await openSession(h);
    h.host.crash();
    await h.service.resumeSession({ sessionId: opened.sessionId, cwd: CWD, mcpServers: [], replay: true });
    const order = h.host.records.map((r) => r.name).filter((n) => n === "agent.resumeSession" || n === "agent.readSessionMessages");
    expect(order).toEqual(["agent.resumeSession", "agent.readSessionMessages"]);
  });

  it("a piece that is not as expected fails the load and releases the held history", async () => {
    const h = setup();
    h.host.addSession(longSnapshot("old", 3));
    const next = h.host.history.bind(h.host);
    let pieces = 0;
    h.host.history = async (historyId, op) => {
      if (op === "next" && ++pieces === 2) return { messages: [{ parts: [] }], done: false };
      return next(historyId, op);
    };
    await expect(h.service.resumeSession({ sessionId: "old", cwd: CWD, mcpServers: [], replay: true })).rejects.toMatchObject({
      code: "NATIVE_PROTOCOL_ERROR",
    });
    expect(h.host.records.map((r) => r.name)).toContain("history.close");
    expect(h.host.heldHistories.size).toBe(0);
  });
});
