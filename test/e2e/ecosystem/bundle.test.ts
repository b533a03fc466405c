/**
 * The bundled CLI (adr/0012-bundled-cli.md, scripts/bundle.mjs), from the metafile of the last
 * `npm run build`: the path that answers `initialize` early loads none of the dependencies (no
 * SDK, no zod, no ajv, no execa); every chunk stays in dist/cli/ (the import.meta.url paths);
 * no chunk destructures a named export out of a CommonJS-only chunk (which has just a default).
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const META = join(ROOT, "build/bundle-meta.json");
const CLI = join(ROOT, "dist/cli");

interface Output {
  bytes: number;
  inputs: Record<string, unknown>;
  imports: Array<{ path: string; kind: string; external?: boolean }>;
  entryPoint?: string;
}

function outputs(): Record<string, Output> {
  if (!existsSync(META)) throw new Error(`${META} is missing: run "npm run build" first`);
  return (JSON.parse(readFileSync(META, "utf8")) as { outputs: Record<string, Output> }).outputs;
}

/** inputs reachable from `file` through static imports and the dynamic imports of `follow` */
function closure(all: Record<string, Output>, file: string, followDynamic: (from: string) => boolean): Set<string> {
  const seen = new Set<string>();
  const inputs = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name) || !all[name]) return;
    seen.add(name);
    for (const input of Object.keys(all[name].inputs)) inputs.add(input);
    for (const imported of all[name].imports) {
      if (imported.external) continue;
      if (imported.kind === "import-statement" || (imported.kind === "dynamic-import" && followDynamic(name))) visit(imported.path);
    }
  };
  visit(file);
  return inputs;
}

describe("bundled CLI", () => {
  it("keeps every chunk next to main.js and the runtime as plain files", () => {
    const names = Object.keys(outputs()).filter((n) => n.endsWith(".js"));
    expect(names.every((n) => n.startsWith("dist/cli/"))).toBe(true);
    expect(names).toContain("dist/cli/main.js");
    expect(existsSync(join(ROOT, "dist/runtime/bootstrap.js"))).toBe(true);
  });

  it("answers initialize early from our own code only: main + the ACP command load no dependency", () => {
    const all = outputs();
    // main.js statically, then its dynamic import of the ACP command chunk (not what that chunk loads later)
    const command = all["dist/cli/main.js"]!.imports.filter((i) => i.kind === "dynamic-import")
      .map((i) => i.path)
      .find((chunk) => Object.keys(all[chunk]?.inputs ?? {}).some((input) => input.endsWith("cli/acp-command.js")));
    expect(command).toBeDefined();
    const early = new Set<string>();
    for (const chunk of ["dist/cli/main.js", command!]) for (const input of closure(all, chunk, () => false)) early.add(input);
    expect([...early].some((i) => i.endsWith("cli/early-initialize.js"))).toBe(true);
    expect([...early].filter((i) => i.includes("node_modules/"))).toEqual([]);
  });

  it("never takes a named export out of a chunk that only has a default one", () => {
    const defaultOnly = new Set(
      readdirSync(CLI).filter((f) => {
        const text = readFileSync(join(CLI, f), "utf8");
        return /\nexport default require_[\w$]+\(\);\s*$/.test(text) && !/\nexport \{/.test(text);
      }),
    );
    const misuse: string[] = [];
    for (const file of readdirSync(CLI)) {
      const text = readFileSync(join(CLI, file), "utf8");
      for (const m of text.matchAll(/const \{([^}]*)\} = await import\("\.\/([^"]+)"\)/g)) {
        const names = m[1]!.split(",").map((n) => n.trim().split(":")[0]!.trim());
        if (defaultOnly.has(m[2]!) && names.some((n) => n !== "default")) misuse.push(`${file} takes {${m[1]}} from ${m[2]}`);
      }
    }
    expect(misuse).toEqual([]);
  });
});
