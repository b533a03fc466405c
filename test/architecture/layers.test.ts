/**
 * The layers of src/ (docs/architecture.md) point one way: a module imports from its own folder or
 * from a folder ranked below it, never from above; and no two modules import each other, directly
 * or through others (type-only imports included). src/runtime/ is plain JavaScript that runs inside
 * Electron and imports only its own folder.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** top to bottom: ACP handlers → session engine → native API → host client → … → shared leaves */
const RANK = [
  "cli",
  "acp",
  "session",
  "native",
  "host",
  "onboard",
  "compat",
  "channel",
  "install",
  "manifest",
  "protocol",
  "log",
  "util",
  "(root)",
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

function folderOf(file: string): string {
  const rel = relative(SRC, file).split("/");
  return rel.length === 1 ? "(root)" : rel[0]!;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specs = [...text.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)"|\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)|^import\s+"(\.{1,2}\/[^"]+)"/gm)].map(
    (m) => m[1] ?? m[2] ?? m[3]!,
  );
  return specs.map((spec) => resolve(dirname(file), spec).replace(/\.js$/, file.endsWith(".ts") ? ".ts" : ".js"));
}

const all = files(SRC);
const graph = new Map(all.map((f) => [f, importsOf(f).filter((t) => all.includes(t))]));

describe("layer rules of src/", () => {
  it("knows every folder of src/", () => {
    const folders = new Set(all.map(folderOf));
    for (const folder of folders) if (folder !== "runtime") expect(RANK, folder).toContain(folder);
  });

  it("imports only from the same folder or a lower-ranked one", () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (from === to) continue;
        if (from === "runtime" || to === "runtime") {
          // the bootstrap is started as a separate program: nothing imports it, it imports nothing of ours
          upward.push(`${relative(SRC, file)} → ${relative(SRC, target)} (runtime stays apart)`);
          continue;
        }
        if (RANK.indexOf(to) < RANK.indexOf(from)) upward.push(`${relative(SRC, file)} → ${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("has no import cycle", () => {
    const state = new Map<string, "active" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "active") {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(" → "));
        return;
      }
      state.set(file, "active");
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it("settings come from the command line layer: nothing below src/cli/ reads process.env or process.cwd() (src/runtime/ is its own program)", () => {
    const offenders = all.filter(
      (f) => !["cli", "runtime"].includes(folderOf(f)) && /\bprocess\.(env|cwd\(\))/.test(readFileSync(f, "utf8")),
    );
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });

  it("the session layer never names a ZCode method (only src/native/ does)", () => {
    const methodCall = /\.(call|operate)\(\s*"(agent|task|modelSelection|cancelGeneration|respondPermission|respondStructuredInput)"/;
    const offenders = all.filter((f) => ["session", "acp"].includes(folderOf(f)) && methodCall.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });
});
