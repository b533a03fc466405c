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
import { v4Commands } from "../../support/e2e-harness.js";
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
/** the payloads of the session's prompts: V4 `sendText` commands (the simulated installs take V4 input; adr/0022) */
const sendPrompts = async (): Promise<Array<Record<string, any>>> => {
  const log = await sim.readCallLog();
  expect(callsFor(log, "sendPrompt", sessionId)).toEqual([]);
  return v4Commands(log, "sendText")
    .map((e) => e.params as { sessionId: string; payload: Record<string, any> })
    .filter((e) => e.sessionId === sessionId)
    .map((e) => e.payload);
};

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
    // a valid image still reaches the host: uploaded with its bytes, then named by ref
    const ok = await prompt([
      { type: "text", text: "look" },
      { type: "image", mimeType: "image/png", data: PNG_1X1 },
    ]);
    expect(ok.result).toMatchObject({ stopReason: "end_turn" });
    const sent = (await sendPrompts()).at(-1)!;
    const bytes = Buffer.from(PNG_1X1, "base64");
    expect(sent.attachments).toEqual([
      { ref: expect.stringMatching(/^att_/), fileName: "image-1.png", mime: "image/png", bytes: bytes.length },
    ]);
    const chunks = callsFor(await sim.readCallLog(), "attachmentChunkV4", sessionId);
    expect(Buffer.from(String(chunks.at(-1)!.dataBase64), "base64").equals(bytes)).toBe(true);
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
    // V4 input names no local paths at all: every link is prompt text, nothing is uploaded from disk
    expect(sent.attachments).toBeUndefined();
    expect(sent.text).toContain(`@${inside}`);
    // the links outside are prompt text only, as given (never resolved through the symlink)
    expect(sent.text).toContain("@/etc/shadow");
    expect(sent.text).toContain(`@${escape}`);
    expect(sent.text).not.toContain("root:");
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
