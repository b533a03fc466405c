/**
 * Redaction for diagnostic logs. Anything that looks like a credential is replaced,
 * browser request payloads are never logged, and prompt text is kept only at debug.
 */
const SECRET_KEY = /(token|secret|password|passwd|api[-_]?key|authorization|cookie|credential|headers?|requestAuth|captcha)/i;
const BROWSER_KEY = /^(command|browserPayload)$/;
const PROMPT_KEY = /^(content|prompt|text|delta|input|plan|message)$/i;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const LONG_TOKEN = /\b(sk|pk|rk|ghp|gho|xox[abp])-[A-Za-z0-9_-]{8,}\b/g;

export interface RedactOptions {
  /** keep prompt-like text fields (debug level only) */
  keepPromptText: boolean;
}

export function redactString(text: string): string {
  return text.replace(BEARER, "$1 [redacted]").replace(LONG_TOKEN, "[redacted]");
}

export function redact(value: unknown, options: RedactOptions, depth = 0): unknown {
  if (depth > 8) return "[…]";
  if (typeof value === "string") return redactString(value);
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redact(v, options, depth + 1));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (SECRET_KEY.test(key)) out[key] = "[redacted]";
    else if (BROWSER_KEY.test(key)) out[key] = "[not logged]";
    else if (!options.keepPromptText && PROMPT_KEY.test(key) && typeof v === "string") out[key] = `[${v.length} chars]`;
    else out[key] = redact(v, options, depth + 1);
  }
  return out;
}
