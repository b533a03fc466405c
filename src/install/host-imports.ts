/**
 * The static, relative imports of the host index (docs/runtime-contract.md §2.1 step 1): `import … from
 * "./x.js"` and `export … from "./x.js"`, found with es-module-lexer (dynamic `import()`, strings
 * and comments are not imports). Each is resolved inside the app archive; one that would leave
 * it is refused.
 */
import { posix } from "node:path";
import { init, parse } from "es-module-lexer";
import { installProblem } from "./install-problem.js";

export async function staticRelativeImports(source: string, label: string): Promise<string[]> {
  await init;
  let imports: ReturnType<typeof parse>[0];
  try {
    [imports] = parse(source, label);
  } catch {
    throw installProblem(`The ZCode host index ${label} cannot be parsed as a JavaScript module. Reinstall ZCode.`, {
      [label]: { expected: "an ES module", actual: "unparsable" },
    });
  }
  const specifiers = new Set<string>();
  for (const entry of imports) {
    // d === -1: a static import or re-export; -2: import.meta; >= 0: dynamic import()
    if (entry.d !== -1 || entry.n === undefined) continue;
    if (entry.n.startsWith("./") || entry.n.startsWith("../")) specifiers.add(entry.n);
  }
  return [...specifiers];
}

/** `spec` relative to the archive member `from`, as an archive path; a path outside the archive is refused. */
export function resolveInArchive(from: string, spec: string): string {
  const resolved = posix.normalize(posix.join(posix.dirname(from), spec));
  if (resolved.startsWith("../") || resolved === ".." || posix.isAbsolute(resolved)) {
    throw installProblem(
      `The ZCode host index imports ${spec}, which lies outside the app archive. The install was modified; reinstall ZCode.`,
      {
        [`import ${spec}`]: { expected: "a module inside app.asar", actual: resolved },
      },
    );
  }
  return resolved;
}
