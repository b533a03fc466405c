/**
 * Parsing of the three native reverse requests (docs/zcode-host.md §6) against their JSON Schemas
 * (src/protocol/request-schemas.ts). Parsing is lenient about extra fields and strict about what
 * the broker relies on: a field it needs that is missing or of the wrong type makes the request
 * (or the single option / the question list) invalid.
 */
import type { ErrorObject } from "ajv";
import type {
  NativePermissionOption,
  NativePermissionRequestFields,
  NativeProviderHeadersRequest,
  NativeQuestion,
  NativeUserInputRequestFields,
} from "../../protocol/native-types.js";
import { validatorOf } from "../../protocol/validators.js";

export type { NativePermissionOption, NativeProviderHeadersRequest, NativeQuestion };

export interface NativePermissionRequest {
  requestId: string;
  sessionId: string | undefined;
  turnId: string | undefined;
  toolCallId: string | undefined;
  toolName: string | undefined;
  reason: string | undefined;
  input: unknown;
  /** options that parsed; `invalidOptions` counts those that did not */
  options: NativePermissionOption[];
  invalidOptions: number;
  /** the raw `options` was absent or not an array */
  optionsMissing: boolean;
}

export interface NativeUserInputRequest {
  requestId: string;
  sessionId: string | undefined;
  turnId: string | undefined;
  toolCallId: string | undefined;
  toolName: string | undefined;
  prompt: string | undefined;
  input: unknown;
  /** undefined when absent; an empty array never parses (at least one question) */
  questions: NativeQuestion[] | undefined;
  /** `questions` was present but malformed */
  questionsInvalid: boolean;
  /** schema.interaction === "plan_approval" */
  planApproval: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; requestId: string | undefined; problem: string };

function requestIdOf(raw: unknown): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const id = (raw as { requestId?: unknown }).requestId;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

/** "<field path>: <what is wrong>", e.g. "toolName: must be string" */
function problemOf(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return "(request): invalid";
  const path = first.instancePath.slice(1).replaceAll("/", ".");
  return `${path || "(request)"}: ${first.message ?? "is invalid"}`;
}

/** `raw` checked against the schema of `key` */
function check<T>(key: string, raw: unknown): Parsed<T> {
  const validate = validatorOf(key);
  if (validate(raw)) return { ok: true, value: raw as T };
  return { ok: false, requestId: requestIdOf(raw), problem: problemOf(validate.errors) };
}

export function parsePermissionRequest(raw: unknown): Parsed<NativePermissionRequest> {
  const parsed = check<NativePermissionRequestFields>("request:permission", raw);
  if (!parsed.ok) return parsed;
  const r = parsed.value;
  const options: NativePermissionOption[] = [];
  let invalidOptions = 0;
  for (const option of r.options ?? []) {
    if (validatorOf("request:permissionOption")(option)) options.push(option as NativePermissionOption);
    else invalidOptions += 1;
  }
  return {
    ok: true,
    value: {
      requestId: r.requestId,
      sessionId: r.sessionId,
      turnId: r.turnId,
      toolCallId: r.toolCallId,
      toolName: r.toolName,
      reason: r.reason,
      input: r.input,
      options,
      invalidOptions,
      optionsMissing: r.options === undefined,
    },
  };
}

export function parseUserInputRequest(raw: unknown): Parsed<NativeUserInputRequest> {
  const parsed = check<NativeUserInputRequestFields>("request:userInput", raw);
  if (!parsed.ok) return parsed;
  const r = parsed.value;
  let questions: NativeQuestion[] | undefined;
  let questionsInvalid = false;
  if (r.questions !== undefined) {
    if (validatorOf("request:questions")(r.questions)) questions = r.questions as NativeQuestion[];
    else questionsInvalid = true;
  }
  const schema = r.schema;
  const planApproval =
    typeof schema === "object" && schema !== null && (schema as { interaction?: unknown }).interaction === "plan_approval";
  return {
    ok: true,
    value: {
      requestId: r.requestId,
      sessionId: r.sessionId,
      turnId: r.turnId,
      toolCallId: r.toolCallId,
      toolName: r.toolName,
      prompt: r.prompt,
      input: r.input,
      questions,
      questionsInvalid,
      planApproval,
    },
  };
}

export function parseProviderHeadersRequest(raw: unknown): Parsed<NativeProviderHeadersRequest> {
  return check<NativeProviderHeadersRequest>("request:providerHeaders", raw);
}

/** `input.plan` when it is a non-blank string */
export function planMarkdownOf(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const plan = (input as { plan?: unknown }).plan;
  return typeof plan === "string" && plan.trim().length > 0 ? plan : undefined;
}
