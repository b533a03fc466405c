/**
 * The top-level `id` and `method` of a JSON-RPC message read from the first bytes of its line
 * only: enough to answer a message too large to parse (./incoming-messages.ts). Values of other
 * keys are skipped without being decoded; a key beyond the given bytes is simply not found.
 */
export interface MessageHead {
  /** present when found: a number, a string or null */
  id?: number | string | null;
  method?: string;
}

const WHITESPACE = new Set([" ", "\t", "\r", "\n"]);

export function readMessageHead(text: string): MessageHead {
  const head: MessageHead = {};
  let i = 0;
  const skipSpace = (): void => {
    while (i < text.length && WHITESPACE.has(text[i]!)) i++;
  };
  /** the end (exclusive) of the string token starting at i, or -1 when it is cut off */
  const stringEnd = (from: number): number => {
    for (let j = from + 1; j < text.length; j++) {
      if (text[j] === "\\") j++;
      else if (text[j] === '"') return j + 1;
    }
    return -1;
  };
  /** the end of any value starting at i, or -1 when it is cut off */
  const valueEnd = (from: number): number => {
    if (text[from] === '"') return stringEnd(from);
    if (text[from] !== "{" && text[from] !== "[") {
      let j = from;
      while (j < text.length && !",}]".includes(text[j]!) && !WHITESPACE.has(text[j]!)) j++;
      return j < text.length ? j : -1;
    }
    let depth = 0;
    for (let j = from; j < text.length; j++) {
      const c = text[j]!;
      if (c === '"') {
        const end = stringEnd(j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  };
  skipSpace();
  if (text[i] !== "{") return head;
  i++;
  for (;;) {
    skipSpace();
    if (text[i] !== '"') return head;
    const keyEnd = stringEnd(i);
    if (keyEnd < 0) return head;
    const key = parseJson(text.slice(i, keyEnd));
    i = keyEnd;
    skipSpace();
    if (text[i] !== ":") return head;
    i++;
    skipSpace();
    const end = valueEnd(i);
    if (end < 0) return head;
    if (key === "id" || key === "method") {
      const value = parseJson(text.slice(i, end));
      if (key === "id" && (value === null || typeof value === "number" || typeof value === "string")) head.id = value;
      if (key === "method" && typeof value === "string") head.method = value;
    }
    i = end;
    skipSpace();
    if (text[i] !== ",") return head;
    i++;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
