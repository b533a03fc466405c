import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log/logger.js";
import { redact, redactString } from "../../../src/log/redact.js";

const dirs: string[] = [];
const logFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "zcode-acp-log-"));
  dirs.push(dir);
  return join(dir, "log.jsonl");
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const records = (file: string): Array<Record<string, unknown>> =>
  readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("redaction", () => {
  it("replaces credential-like keys at any depth", () => {
    const out = redact(
      { a: { apiKey: "k1", headers: { Authorization: "Bearer abc" }, requestAuth: { x: 1 } }, token: "t" },
      { keepPromptText: true },
    );
    expect(JSON.stringify(out)).not.toMatch(/k1|abc|"t"/);
    expect(out).toMatchObject({ a: { apiKey: "[redacted]", headers: "[redacted]" }, token: "[redacted]" });
  });
  it("never keeps browser command payloads", () => {
    const out = redact(
      { type: "browser-execute-request", requestId: "r1", command: { method: "navigate", url: "https://secret.example" } },
      { keepPromptText: true },
    );
    expect(JSON.stringify(out)).not.toContain("secret.example");
    expect(out).toMatchObject({ requestId: "r1", command: "[not logged]" });
  });
  it("keeps prompt text only when asked (debug)", () => {
    expect(redact({ text: "my secret plan" }, { keepPromptText: false })).toEqual({ text: "[14 chars]" });
    expect(redact({ text: "my secret plan" }, { keepPromptText: true })).toEqual({ text: "my secret plan" });
  });
  it("scrubs bearer tokens and key-shaped strings inside free text", () => {
    expect(redactString("failed with Bearer eyJabc.def and sk-abcdefghijkl")).toBe("failed with Bearer [redacted] and [redacted]");
  });
});

describe("logger", () => {
  it("writes redacted JSON lines to the log file and filters by level", () => {
    const file = logFile();
    const log = createLogger({ level: "info", file }).child("host");
    log.debug("hidden");
    log.info("call", { method: "sendPrompt", content: "hello world", apiKey: "zzz" });
    const [rec, ...rest] = records(file);
    expect(rest).toHaveLength(0);
    expect(rec).toMatchObject({
      level: "info",
      msg: "call",
      scope: "host",
      fields: { method: "sendPrompt", content: "[11 chars]", apiKey: "[redacted]" },
    });
  });
  it("keeps prompt text at debug level", () => {
    const file = logFile();
    createLogger({ level: "debug", file }).debug("call", { content: "hello world" });
    expect(records(file)[0]).toMatchObject({ fields: { content: "hello world" } });
  });
});
