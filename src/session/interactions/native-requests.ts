/**
 * Parsing of the three native reverse requests (zcode-host.md §6). Parsing is lenient about
 * extra fields and strict about what the broker relies on: a field it needs that is missing or
 * of the wrong type makes the request (or the single option / question) invalid.
 */
import { z } from "zod";

const nonEmpty = z.string().min(1);

const permissionUpdateSchema = z.unknown();

const nativeOptionSchema = z.object({
  optionId: nonEmpty,
  name: z.string(),
  kind: z.string().optional(),
  description: z.string().optional(),
  response: z.object({
    decision: z.string(),
    reason: z.string().optional(),
    modifiedInput: z.unknown().optional(),
    permissionUpdates: z.array(permissionUpdateSchema).optional(),
  }),
});
export type NativePermissionOption = z.infer<typeof nativeOptionSchema>;

const permissionRequestSchema = z.object({
  requestId: nonEmpty,
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  reason: z.string().optional(),
  riskLevel: z.string().optional(),
  input: z.unknown().optional(),
  options: z.array(z.unknown()).optional(),
});

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

const questionOptionSchema = z.object({
  value: z.string(),
  label: z.string().optional(),
  description: z.string().optional(),
});
const questionSchema = z.object({
  question: z.string(),
  header: z.string().optional(),
  options: z.array(questionOptionSchema).min(1),
  multiSelect: z.boolean().optional(),
});
export type NativeQuestion = z.infer<typeof questionSchema>;

const userInputRequestSchema = z.object({
  requestId: nonEmpty,
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  prompt: z.string().optional(),
  input: z.unknown().optional(),
  questions: z.unknown().optional(),
  schema: z.unknown().optional(),
});

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

const providerHeadersRequestSchema = z.object({
  requestId: nonEmpty,
  sessionId: z.string().optional(),
  turnId: z.string().optional(),
  providerId: z.string().optional(),
  reason: z.string().optional(),
});
export type NativeProviderHeadersRequest = z.infer<typeof providerHeadersRequestSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; requestId: string | undefined; problem: string };

function requestIdOf(raw: unknown): string | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const id = (raw as { requestId?: unknown }).requestId;
  return typeof id === "string" && id.length > 0 ? id : undefined;
}

function problemOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(request)"}: ${issue.message}`)
    .join("; ");
}

export function parsePermissionRequest(raw: unknown): Parsed<NativePermissionRequest> {
  const parsed = permissionRequestSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, requestId: requestIdOf(raw), problem: problemOf(parsed.error) };
  const r = parsed.data;
  const options: NativePermissionOption[] = [];
  let invalidOptions = 0;
  for (const option of r.options ?? []) {
    const o = nativeOptionSchema.safeParse(option);
    if (o.success) options.push(o.data);
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
  const parsed = userInputRequestSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, requestId: requestIdOf(raw), problem: problemOf(parsed.error) };
  const r = parsed.data;
  let questions: NativeQuestion[] | undefined;
  let questionsInvalid = false;
  if (r.questions !== undefined) {
    const q = z.array(questionSchema).min(1).safeParse(r.questions);
    if (q.success) questions = q.data;
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
  const parsed = providerHeadersRequestSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, requestId: requestIdOf(raw), problem: problemOf(parsed.error) };
  return { ok: true, value: parsed.data };
}

/** `input.plan` when it is a non-blank string */
export function planMarkdownOf(input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const plan = (input as { plan?: unknown }).plan;
  return typeof plan === "string" && plan.trim().length > 0 ? plan : undefined;
}
