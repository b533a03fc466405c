/**
 * Redaction for diagnostic logs. Anything that looks like a credential is replaced,
 * browser request payloads are never logged, and prompt text is kept only at debug.
 *
 * `message` is prompt-like (user or agent text, e.g. in a host event) except where it is an
 * error's text, which stays visible at every level (still scrubbed by the string patterns):
 * - a `message` beside an error code: a `code` that is an integer (JSON-RPC, exit codes) or an
 *   upper-case identifier (`USAGE`, `HOST_EXITED`, `ENOENT`), as in
 *   `logger.warn("turn failed", { code: error.code, message: error.message })`;
 * - a `message` of an object under a key that names an error (`error`, `errors`, `cause`,
 *   `failure`), e.g. `{ error: { code: -32603, message } }` or `{ cause: { message } }`.
 * Errors logged as text under `error` / `reason` (`describeError`) are not prompt-like keys at all.
 */
const SECRET_KEY = /(token|secret|password|passwd|api[-_]?key|authorization|cookie|credential|headers?|requestAuth|captcha)/i;
const BROWSER_KEY = /^(command|browserPayload)$/;
const PROMPT_KEY = /^(content|prompt|text|delta|input|plan|message)$/i;
/** the key of an error's text, kept when it belongs to an error (above) */
const MESSAGE_KEY = /^message$/i;
/** keys whose object value is an error (its `message` is the error's text) */
const ERROR_KEY = /^(error|errors|cause|failure)$/i;
/** `code` values that mark their object as an error */
const ERROR_CODE = /^[A-Z][A-Z0-9_]*$/;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;
const LONG_TOKEN = /\b(sk|pk|rk|ghp|gho|xox[abp])-[A-Za-z0-9_-]{8,}\b/g;

export interface RedactOptions {
  /** keep prompt-like text fields (debug level only) */
  keepPromptText: boolean;
}

export function redactString(text: string): string {
  return text.replace(BEARER, "$1 [redacted]").replace(LONG_TOKEN, "[redacted]");
}

function isErrorCode(code: unknown): boolean {
  return (typeof code === "number" && Number.isInteger(code)) || (typeof code === "string" && ERROR_CODE.test(code));
}

export function redact(value: unknown, options: RedactOptions, depth = 0): unknown {
  return redactValue(value, options, depth, false);
}

/** `inError`: `value` sits under an error key (directly or as an element of an array there) */
function redactValue(value: unknown, options: RedactOptions, depth: number, inError: boolean): unknown {
  if (depth > 8) return "[…]";
  if (typeof value === "string") return redactString(value);
  if (Array.isArray(value)) return value.slice(0, 50).map((v) => redactValue(v, options, depth + 1, inError));
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  const isError = inError || isErrorCode(record.code);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    if (SECRET_KEY.test(key)) out[key] = "[redacted]";
    else if (BROWSER_KEY.test(key)) out[key] = "[not logged]";
    else if (!options.keepPromptText && PROMPT_KEY.test(key) && typeof v === "string" && !(isError && MESSAGE_KEY.test(key)))
      out[key] = `[${v.length} chars]`;
    else out[key] = redactValue(v, options, depth + 1, ERROR_KEY.test(key));
  }
  return out;
}
