/**
 * Prompt content through the built CLI (src/session/prompt-content.ts, adr/0011): invalid
 * images and prompts too large for one channel frame are refused with -32602 before the host
 * sees them; a resource link is a host `localPath` only inside the session's directory.
 */
import { mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatedInstall, type SimInstall } from "../../../fixtures/sim-install.js";
import { callsFor } from "../../support/bridge-process.js";
import { RawAcpClient } from "../../support/raw-acp-client.js";

const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

let sim: SimInstall;
let client: RawAcpClient;
let ws: string;
let sessionId: string;

beforeAll(async () => {
  sim = await createSimulatedInstall();
  ws = await realpath(await mkdtemp(join(dirname(sim.root), "ws-")));
  client = RawAcpClient.start({ env: sim.env });
  sessionId = await client.openSession(ws);
});
afterAll(async () => {
  expect(client.transcript.problems).toEqual([]);
  expect(await client.close()).toEqual({ code: 0, signal: null });
  await sim?.cleanup();
});

const prompt = (blocks: unknown[]): Promise<any> => client.request("session/prompt", { sessionId, prompt: blocks }, 60_000);
const sendPrompts = async (): Promise<Array<Record<string, unknown>>> => callsFor(await sim.readCallLog(), "sendPrompt", sessionId);

describe("image blocks", () => {
  it("refuses invalid base64 and non-image mime types with -32602; the host never sees them", async () => {
    const before = (await sendPrompts()).length;
    const bad = [
      { type: "image", mimeType: "image/png", data: "not base64!!" },
      { type: "image", mimeType: "image/png", data: "" },
      { type: "image", mimeType: "text/html", data: PNG_1X1 },
      { type: "image", mimeType: "application/x-sh", data: PNG_1X1 },
    ];
    for (const block of bad) {
      const response = await prompt([{ type: "text", text: "look" }, block]);
      expect(response.error, JSON.stringify(block).slice(0, 80)).toMatchObject({ code: -32602, data: { code: "INVALID_PARAMS" } });
      expect(response.error.message).toMatch(/block 1/);
    }
    expect(await sendPrompts()).toHaveLength(before);
    // a valid image still reaches the host as an image attachment
    const ok = await prompt([
      { type: "text", text: "look" },
      { type: "image", mimeType: "image/png", data: PNG_1X1 },
    ]);
    expect(ok.result).toMatchObject({ stopReason: "end_turn" });
    const sent = (await sendPrompts()).at(-1)!;
    expect(sent.attachments).toEqual([expect.objectContaining({ kind: "image", mimeType: "image/png", dataBase64: PNG_1X1 })]);
  });
});

describe("resource links", () => {
  it("never hands the host a local path outside the session's directory", async () => {
    const inside = join(ws, "notes.md");
    await writeFile(inside, "# notes\n");
    const escape = join(ws, "escape");
    await symlink("/etc/passwd", escape);
    const response = await prompt([
      { type: "text", text: "read these" },
      { type: "resource_link", uri: "file:///etc/shadow", name: "shadow" },
      { type: "resource_link", uri: pathToFileURL(escape).href, name: "escape" },
      { type: "resource_link", uri: `file://${ws}/../../../etc/hosts`, name: "hosts" },
      { type: "resource_link", uri: pathToFileURL(inside).href, name: "notes.md" },
    ]);
    expect(response.result).toMatchObject({ stopReason: "end_turn" });
    const sent = (await sendPrompts()).at(-1)!;
    const attachments = (sent.attachments ?? []) as Array<Record<string, unknown>>;
    expect(attachments).toEqual([expect.objectContaining({ kind: "file", localPath: inside, filename: "notes.md" })]);
    // the links outside are prompt text only
    expect(sent.content).toContain("@/etc/shadow");
    expect(sent.content).toContain(`@${escape}`);
  });
});

describe("prompt size", () => {
  it("refuses a 20 MB prompt with -32602 naming the limit, and keeps serving", async () => {
    const before = (await sendPrompts()).length;
    const response = await prompt([{ type: "text", text: "x".repeat(20 * 1024 * 1024) }]);
    expect(response.error).toMatchObject({ code: -32602, data: { code: "INVALID_PARAMS" } });
    expect(response.error.message).toMatch(/16\.0 MiB/);
    expect(await sendPrompts()).toHaveLength(before);
    const next = await prompt([{ type: "text", text: "small again" }]);
    expect(next.result).toMatchObject({ stopReason: "end_turn" });
  });
});
