/**
 * ZCode 3.18+'s getContextComposition result (shape guessed, src/native/shared/context-composition.ts):
 * a well-formed one becomes the bridge's composition, bounded; anything else fails closed; and the
 * session's end-of-turn usage_update takes it (src/session/prompt-usage.ts).
 */
import { describe, expect, it } from "vitest";
import { MAX_CONTEXT_CATEGORIES, parseContextComposition } from "../../../src/native/shared/context-composition.js";
import { withContextComposition } from "../../../src/session/prompt-usage.js";

const categories = [
  { id: "systemPrompt", label: "System prompt", tokens: 40 },
  { id: "toolResults", label: "Tool results", tokens: 60 },
];

describe("parseContextComposition", () => {
  it("reads totalTokens, contextWindow and the categories", () => {
    expect(parseContextComposition({ categories, totalTokens: 100, contextWindow: 200_000 })).toEqual({
      used: 100,
      size: 200_000,
      categories,
    });
    expect(parseContextComposition({ categories: [{ id: "x", tokens: 1 }], totalTokens: 1 })).toEqual({
      used: 1,
      size: undefined,
      categories: [{ id: "x", label: "x", tokens: 1 }],
    });
  });

  it("bounds the categories and their names", () => {
    const many = Array.from({ length: 100 }, (_, i) => ({ id: `c${i}${"x".repeat(500)}`, label: "y".repeat(500), tokens: i }));
    const parsed = parseContextComposition({ categories: many, totalTokens: 5 });
    expect(parsed.categories).toHaveLength(MAX_CONTEXT_CATEGORIES);
    expect(parsed.categories.every((c) => c.id.length <= 120 && c.label.length <= 120)).toBe(true);
  });

  it.each([
    [null, "not an object"],
    [{ categories, totalTokens: -1 }, "totalTokens"],
    [{ categories, totalTokens: 1, contextWindow: 0 }, "contextWindow"],
    [{ categories: "eleven", totalTokens: 1 }, "categories is not a list"],
    [{ categories: [{ id: 3, tokens: 1 }], totalTokens: 1 }, "categories[0]"],
  ])("fails closed on %j", (raw, what) => {
    expect(() => parseContextComposition(raw)).toThrow(
      expect.objectContaining({ code: "NATIVE_PROTOCOL_ERROR", message: expect.stringContaining(what) }),
    );
  });
});

describe("withContextComposition", () => {
  const snapshotUsage = {
    sessionUpdate: "usage_update" as const,
    used: 90,
    size: 128_000,
    _meta: { zcode: { tokenUsage: { totalTokens: 7 } } },
  };

  it("takes used and size from the composition, keeps the token totals, adds the categories", () => {
    expect(withContextComposition(snapshotUsage, { used: 100, size: 200_000, categories })).toEqual({
      sessionUpdate: "usage_update",
      used: 100,
      size: 200_000,
      _meta: { zcode: { tokenUsage: { totalTokens: 7 }, contextComposition: categories } },
    });
  });

  it("keeps the snapshot's window when ZCode names none; without a composition the update is unchanged", () => {
    expect(withContextComposition(snapshotUsage, { used: 100, size: undefined, categories })).toMatchObject({ used: 100, size: 128_000 });
    expect(withContextComposition(snapshotUsage, undefined)).toBe(snapshotUsage);
    expect(withContextComposition(undefined, { used: 1, size: undefined, categories: [] })).toBeUndefined();
  });
});
