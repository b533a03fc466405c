/**
 * The opening sequence reaches late learners (adr/0017): a client that learns a session's id from
 * the session/new response (Paseo) gets the opening updates (slash commands) after the response,
 * and again when the first prompt starts; a loaded session gets them before its response (its
 * replay, ACP-LOAD-002) and again at its first prompt; a resumed one after its response.
 */
import { describe, expect, it } from "vitest";
import type { AcpTestClient } from "../../support/acp-test-client.js";
import { e2e } from "../../support/e2e-harness.js";

const t = e2e();

const isCommands = (sessionId: string) => (l: { message: any }) =>
  l.message.method === "session/update" &&
  l.message.params.sessionId === sessionId &&
  l.message.params.update.sessionUpdate === "available_commands_update";

/** indexes of the session's command updates in the transcript */
function commandLines(client: AcpTestClient, sessionId: string): number[] {
  const match = isCommands(sessionId);
  return client.transcript.lines.flatMap((l, i) => (l.from === "agent" && l.message !== undefined && match(l) ? [i] : []));
}

/** index of the agent's response to the client request with this method (the last one) */
function responseTo(client: AcpTestClient, method: string): number {
  const request = client.transcript.lines.filter((l) => l.from === "client" && l.message?.method === method).at(-1)!;
  return client.transcript.lines.findIndex(
    (l) => l.from === "agent" && l.message?.id === request.message.id && l.message.method === undefined,
  );
}

function requestOf(client: AcpTestClient, method: string): number {
  return client.transcript.lines.findLastIndex((l) => l.from === "client" && l.message?.method === method);
}

describe("e2e: the opening updates of a session", () => {
  it("session/new: after the response, and again when the first prompt starts", async () => {
    const client = await t.start();
    await client.initialize();
    const { sessionId } = await client.newSession(await t.workspace());
    await client.waitForLine((l) => l.from === "agent" && isCommands(sessionId)(l));
    const response = responseTo(client, "session/new");
    expect(commandLines(client, sessionId)).toHaveLength(1);
    expect(commandLines(client, sessionId)[0]).toBeGreaterThan(response);
    await client.prompt(sessionId, "hello");
    const again = commandLines(client, sessionId);
    expect(again).toHaveLength(2);
    expect(again[1]).toBeGreaterThan(requestOf(client, "session/prompt"));
    expect(again[1]).toBeLessThan(responseTo(client, "session/prompt"));
    await client.prompt(sessionId, "hello again");
    expect(commandLines(client, sessionId)).toHaveLength(2);
    client.expectValid();
  });

  it("session/load: before the response (its replay), none after it, and again when the first prompt starts", async () => {
    const ws = await t.workspace();
    const first = await t.start();
    await first.initialize();
    const { sessionId } = await first.newSession(ws);
    await first.prompt(sessionId, "keep this session");
    await first.close();

    const client = await t.start();
    await client.initialize();
    await client.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
    const response = responseTo(client, "session/load");
    expect(commandLines(client, sessionId)).toHaveLength(1);
    expect(commandLines(client, sessionId)[0]).toBeLessThan(response);
    await client.prompt(sessionId, "after the load");
    const again = commandLines(client, sessionId);
    expect(again).toHaveLength(2);
    expect(again[1]).toBeGreaterThan(requestOf(client, "session/prompt"));
    expect(again[1]).toBeLessThan(responseTo(client, "session/prompt"));
    client.expectValid();
  });

  it("session/resume: after the response", async () => {
    const ws = await t.workspace();
    const first = await t.start();
    await first.initialize();
    const { sessionId } = await first.newSession(ws);
    await first.prompt(sessionId, "keep this session");
    await first.close();

    const client = await t.start();
    await client.initialize();
    await client.agent.request("session/resume", { sessionId, cwd: ws });
    await client.waitForLine((l) => l.from === "agent" && isCommands(sessionId)(l));
    expect(commandLines(client, sessionId)[0]).toBeGreaterThan(responseTo(client, "session/resume"));
    client.expectValid();
  });
});
