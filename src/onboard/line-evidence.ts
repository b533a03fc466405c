/**
 * Which release line an unpinned build belongs to, from evidence in its host bundle
 * (docs/runtime-contract.md §6): the host index and the modules it imports statically, transitively, must name
 * every method the line needs, plus the line's own markers (`ReleaseLine.markers`; for zcode-task-v2
 * the `init-local` field `zcodeBuiltinProviderConfigFilePath`), and none of the names the line no
 * longer has (`ReleaseLine.absent`). A line with anything missing is not chosen.
 */
import { readMember } from "../install/app-archive.js";
import { resolveInArchive, staticRelativeImports } from "../install/host-imports.js";
import type { ResolvedInstall } from "../install/resolve-install.js";
import { RELEASE_LINES, type ReleaseLine } from "../manifest/release-lines.js";

const MAX_MODULES = 2000;
const MAX_MODULE_BYTES = 16 * 1024 * 1024;

export interface LineEvidence {
  id: string;
  /** what the bundle names of the line (methods and markers) */
  found: string[];
  missing: string[];
}

/** The text of the host index and every module it imports statically (transitively), inside the archive. */
export async function hostBundleText(install: ResolvedInstall, hostIndexPath: string): Promise<{ text: string; modules: number }> {
  const seen = new Set<string>([hostIndexPath]);
  const queue = [hostIndexPath];
  const parts: string[] = [];
  while (queue.length > 0 && seen.size <= MAX_MODULES) {
    const path = queue.shift()!;
    const source = (await readMember(await install.archive.locate(path), MAX_MODULE_BYTES)).toString("utf8");
    parts.push(source);
    for (const spec of await staticRelativeImports(source, path)) {
      const next = resolveInArchive(path, spec);
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return { text: parts.join("\n"), modules: parts.length };
}

function lineNeeds(line: ReleaseLine): string[] {
  const methods = Object.values(line.requiredMethods).flatMap((list) => [...(list ?? [])]);
  return [...new Set([...methods, ...line.markers])];
}

export function lineEvidence(bundle: string): LineEvidence[] {
  return RELEASE_LINES.map((line) => {
    const needs = lineNeeds(line);
    const stillThere = (line.absent ?? []).filter((n) => bundle.includes(n)).map((n) => `no ${n} (the bundle still names it)`);
    return {
      id: line.id,
      found: needs.filter((n) => bundle.includes(n)),
      missing: [...needs.filter((n) => !bundle.includes(n)), ...stillThere],
    };
  });
}

/** The line whose evidence is complete; of several, the one with the most specific evidence (most needs met). */
export function chooseLine(evidence: readonly LineEvidence[]): LineEvidence | undefined {
  const complete = evidence.filter((e) => e.missing.length === 0);
  return complete.sort((a, b) => b.found.length - a.found.length)[0];
}
