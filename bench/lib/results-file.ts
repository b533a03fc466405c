/**
 * bench/results.md is shared: every benchmark owns the text between its own markers
 * `<!-- name:start -->` and `<!-- name:end -->` and never touches anything else.
 */
import { readFile, writeFile } from "node:fs/promises";

/** Replace (or append) the section `name` of the markdown file at `path`. */
export async function writeSection(path: string, name: string, body: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    text = "# Benchmark results\n\nEach benchmark writes only its own section, between its markers.\n";
  }
  await writeFile(path, replaceSection(text, name, body));
}

export function replaceSection(text: string, name: string, body: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${body.trim()}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) return text.slice(0, from) + block + text.slice(to + end.length);
  return `${text.trimEnd()}\n\n${block}\n`;
}
