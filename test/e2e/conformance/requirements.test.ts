/**
 * The conformance suite covers the kit: every applicable MANDATORY and CAPABILITY requirement
 * (requirements.ts) has exactly one test named by its id in test/conformance/, and no test names
 * an id that is not registered. `it.fails` marks a known failure and must name its id too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { REQUIREMENTS } from "./requirements.js";

const DIR = fileURLToPath(new URL(".", import.meta.url));
const sources = readdirSync(DIR)
  .filter((f) => f.endsWith(".test.ts") && f !== "requirements.test.ts")
  .map((f) => readFileSync(`${DIR}/${f}`, "utf8"))
  .join("\n");
const named = [...sources.matchAll(/\bit(?:\.fails)?\(\s*"(ACP-[A-Z]+-\d{3}):/g)].map((m) => m[1]!);

describe("conformance suite coverage of the acp-tck v1 requirements", () => {
  it("every applicable MANDATORY and CAPABILITY requirement has exactly one test", () => {
    const required = REQUIREMENTS.filter((r) => r.applies && r.tier !== "ADVISORY").map((r) => r.id);
    expect(required.length).toBeGreaterThan(30);
    for (const id of required)
      expect(
        named.filter((n) => n === id),
        id,
      ).toHaveLength(1);
  });

  it("every test names a registered requirement, at most once", () => {
    const known = new Set(REQUIREMENTS.map((r) => r.id));
    for (const id of named) expect(known.has(id), id).toBe(true);
    expect(new Set(named).size).toBe(named.length);
  });

  it("known failures are marked it.fails and registered with a note", () => {
    const failing = [...sources.matchAll(/\bit\.fails\(\s*"(ACP-[A-Z]+-\d{3}):/g)].map((m) => m[1]!);
    for (const id of failing) expect(REQUIREMENTS.find((r) => r.id === id)?.note, id).toMatch(/known failure/);
    expect(
      REQUIREMENTS.filter((r) => r.note?.startsWith("known failure"))
        .map((r) => r.id)
        .sort(),
    ).toEqual([...failing].sort());
  });
});
