/**
 * Where a line of a bundled chunk came from: esbuild writes a `// <input path>` comment before
 * each module it puts into a chunk (scripts/bundle.mjs does not minify). The CPU profiles of the
 * bundled CLI use this to name the package of a frame in dist/cli/*.js.
 */
import { readFileSync } from "node:fs";

const cache = new Map<string, Array<{ line: number; input: string }>>();

function marks(file: string): Array<{ line: number; input: string }> {
  let list = cache.get(file);
  if (!list) {
    list = [];
    try {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.forEach((text, i) => {
        const m = /^\/\/ ((?:node_modules|build\/tsc|src)\/\S+\.m?[jt]s)$/.exec(text);
        if (m) list!.push({ line: i + 1, input: m[1]! });
      });
    } catch {
      // not readable: no marks
    }
    cache.set(file, list);
  }
  return list;
}

/** the input module (e.g. "node_modules/zod/v4/core/core.js") of a 1-based line of a chunk file */
export function bundledInput(file: string, line: number): string | undefined {
  let found: string | undefined;
  for (const mark of marks(file)) {
    if (mark.line > line) break;
    found = mark.input;
  }
  return found;
}
