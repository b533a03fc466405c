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
  it("keeps an error's message visible below debug, and hides a `message` that is user text", () => {
    const info = { keepPromptText: false };
    // as the session logs a failed turn / a rejected event: { code, message } with an error code
    expect(redact({ code: "HOST_EXITED", message: "the ZCode host exited" }, info)).toEqual({
      code: "HOST_EXITED",
      message: "the ZCode host exited",
    });
    expect(redact({ code: -32603, message: "Internal error" }, info)).toEqual({ code: -32603, message: "Internal error" });
    // an object under an error key, at any depth, or in an array there
    expect(redact({ sessionId: "s1", error: { message: "ENOENT: no such file", cause: { message: "inner" } } }, info)).toEqual({
      sessionId: "s1",
      error: { message: "ENOENT: no such file", cause: { message: "inner" } },
    });
    expect(redact({ errors: [{ message: "first" }] }, info)).toEqual({ errors: [{ message: "first" }] });
    // still scrubbed for credentials
    expect(redact({ code: "AUTH", message: "refused Bearer abc.def" }, info)).toEqual({
      code: "AUTH",
      message: "refused Bearer [redacted]",
    });
    // user text stays hidden: a bare message, one beside a non-error code, one of an event
    expect(redact({ message: "my secret plan" }, info)).toEqual({ message: "[14 chars]" });
    expect(redact({ code: "print('secret')", message: "my secret plan" }, info)).toEqual({
      code: "print('secret')",
      message: "[14 chars]",
    });
    expect(redact({ event: { type: "message", message: "my secret plan" } }, info)).toEqual({
      event: { type: "message", message: "[14 chars]" },
    });
    // only `message` is an error's text: prompt-like keys under an error stay hidden
    expect(redact({ error: { code: "X", message: "failed", prompt: "my secret plan" } }, info)).toEqual({
      error: { code: "X", message: "failed", prompt: "[14 chars]" },
    });
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
  it("logs a warning's error message at info level", () => {
    const file = logFile();
    createLogger({ level: "info", file }).warn("turn failed", { code: "HOST_TIMEOUT", message: "sendPrompt timed out after 30 s" });
    expect(records(file)[0]).toMatchObject({ fields: { code: "HOST_TIMEOUT", message: "sendPrompt timed out after 30 s" } });
  });
  it("keeps prompt text at debug level", () => {
    const file = logFile();
    createLogger({ level: "debug", file }).debug("call", { content: "hello world" });
    expect(records(file)[0]).toMatchObject({ fields: { content: "hello world" } });
  });
});
