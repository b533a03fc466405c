/**
 * Native structured questions ↔ an ACP form elicitation (docs/acp.md §3.6, docs/zcode-host.md §6.2).
 *
 * Question i becomes the required property `answer_<i>`: single-select → string with `oneOf`,
 * multi-select → array with `items.anyOf` and `minItems: 1`. An accepted form is rebuilt into
 * the native content convention: `answer_<i>` (string or array), `answer` (only with exactly
 * one question) and `answers` keyed by question text with arrays. Values not among the native
 * option values are rejected.
 */
import type { ElicitationPropertySchema, ElicitationSchema, EnumOption } from "@agentclientprotocol/sdk";
import type { NativeQuestion } from "./native-requests.js";
import type { PendingInteraction } from "./pending.js";

function answerKey(index: number): string {
  return `answer_${index}`;
}

function enumOptions(question: NativeQuestion): EnumOption[] {
  const seen = new Set<string>();
  const out: EnumOption[] = [];
  for (const option of question.options) {
    if (seen.has(option.value)) continue;
    seen.add(option.value);
    const entry: EnumOption = { const: option.value, title: option.label || option.value };
    if (option.description) entry.description = option.description;
    out.push(entry);
  }
  return out;
}

export function questionSchema(questions: readonly NativeQuestion[]): ElicitationSchema {
  const properties: Record<string, ElicitationPropertySchema> = {};
  questions.forEach((question, index) => {
    const title = question.header || question.question;
    if (question.multiSelect === true) {
      properties[answerKey(index)] = {
        type: "array",
        title,
        description: question.question,
        minItems: 1,
        items: { anyOf: enumOptions(question) },
      };
    } else {
      properties[answerKey(index)] = { type: "string", title, description: question.question, oneOf: enumOptions(question) };
    }
  });
  return { type: "object", properties, required: questions.map((_, index) => answerKey(index)) };
}

export type NativeAnswerContent = Record<string, string | string[] | Record<string, string[]>>;

export type AnswerResult = { ok: true; content: NativeAnswerContent } | { ok: false; problem: string };

/** rebuild the native content from an accepted form; any missing or unknown value fails */
export function nativeAnswerContent(questions: readonly NativeQuestion[], content: unknown): AnswerResult {
  if (typeof content !== "object" || content === null || Array.isArray(content)) {
    return { ok: false, problem: "accepted form has no content" };
  }
  const form = content as Record<string, unknown>;
  const out: NativeAnswerContent = {};
  const answers: Record<string, string[]> = {};
  for (const [index, question] of questions.entries()) {
    const key = answerKey(index);
    const allowed = new Set(question.options.map((o) => o.value));
    const value = form[key];
    if (question.multiSelect === true) {
      if (!Array.isArray(value) || value.length === 0) return { ok: false, problem: `${key}: expected a non-empty list` };
      const picked: string[] = [];
      for (const item of value) {
        if (typeof item !== "string" || !allowed.has(item)) return { ok: false, problem: `${key}: value not offered` };
        if (!picked.includes(item)) picked.push(item);
      }
      out[key] = picked;
      answers[question.question] = picked;
    } else {
      if (typeof value !== "string" || !allowed.has(value)) return { ok: false, problem: `${key}: value not offered` };
      out[key] = value;
      answers[question.question] = [value];
    }
  }
  if (questions.length === 1) {
    const only = out[answerKey(0)];
    if (only !== undefined) out.answer = only;
  }
  out.answers = answers;
  return { ok: true, content: out };
}

export function questionMessage(prompt: string | undefined, questions: readonly NativeQuestion[]): string {
  if (prompt && prompt.trim()) return prompt;
  if (questions.length === 1 && questions[0]) return questions[0].question;
  return `ZCode asks ${questions.length} questions`;
}

/** accept with the rebuilt native content, or decline when an answer is missing or not offered */
export async function answerWithContent(
  pending: PendingInteraction,
  questions: readonly NativeQuestion[],
  content: unknown,
): Promise<void> {
  const rebuilt = nativeAnswerContent(questions, content);
  if (!rebuilt.ok) {
    pending.ctx.logger.warn("question: answer refused; declined", { requestId: pending.requestId, problem: rebuilt.problem });
    await pending.answer({ method: "elicitation", action: "decline" });
    return;
  }
  await pending.answer({ method: "elicitation", action: "accept", content: rebuilt.content });
}
